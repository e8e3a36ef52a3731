"""``showdown:USER``: a bot connected to the local Showdown server (a real poke-env player, logged in from its own
event loop thread) plays a tournament against ``heuristic``, every battle challenged and recorded from the server's
protocol, its rows in the schedule's seats, and it appears on the leaderboard; the one-line errors (not connected,
refused, not accepted in time) leave no rows behind.

No timed asserts: every wait is on a condition (the bot logged in, a battle over) with a generous hang guard.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
from pathlib import Path

import pytest
from poke_env import AccountConfiguration, ServerConfiguration
from poke_env.concurrency import POKE_LOOP
from poke_env.player import RandomPlayer

from wolfeclick import cli
from wolfeclick.arena.schedule import TournamentConfig, build_schedule
from wolfeclick.arena.tournament import load_results, run_tournament, tournament_dir
from wolfeclick.battle.store import load_recording
from wolfeclick.ladder.play import LadderError
from wolfeclick.ladder.seat import make_showdown_seat
from wolfeclick.sim.server import LocalServer

FORMAT = "gen9randombattle"
HANG = 240.0
"""Seconds before a wait that should end at once is called a hang (generous: the machine is shared and busy)."""


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    with LocalServer(lean=True) as running:
        yield running


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``python -m wolfeclick ARGV`` in this process: (status, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def poke_env_bot(url: str, name: str):  # type: ignore[no-untyped-def]
    """A poke-env ``RandomPlayer`` logged in to ``url`` as ``name``, accepting every challenge in ``FORMAT``."""
    bot = RandomPlayer(account_configuration=AccountConfiguration(name, None),
                       server_configuration=ServerConfiguration(url, "http://127.0.0.1:9/unused"),
                       battle_format=FORMAT, max_concurrent_battles=1)
    asyncio.run_coroutine_threadsafe(bot.ps_client.logged_in.wait(), POKE_LOOP).result(HANG)
    accepting = asyncio.run_coroutine_threadsafe(bot.accept_challenges(None, 1000), POKE_LOOP)
    try:
        yield bot
    finally:
        accepting.cancel()
        asyncio.run_coroutine_threadsafe(bot.ps_client.stop_listening(), POKE_LOOP).result(HANG)


class RawUser:
    """A user on the server that answers challenges with ``/reject`` (``refuse``) or not at all, from a thread."""

    def __init__(self, url: str, name: str, refuse: bool) -> None:
        from websockets.sync.client import connect

        self.socket = connect(url, open_timeout=HANG)
        self.refuse, self.name = refuse, name
        self.logged_in = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.logged_in.wait(HANG), "the raw user did not log in"

    def _run(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for message in self.socket:
                for line in str(message).split("\n"):
                    if line.startswith("|challstr|"):
                        self.socket.send(f"|/trn {self.name},0,")
                    elif line.startswith("|updateuser|") and line.split("|")[2].strip() == self.name:
                        self.logged_in.set()
                    elif line.startswith("|pm|") and line.split("|")[4].startswith("/challenge ") and self.refuse:
                        self.socket.send(f"|/reject {line.split('|')[2].strip()}")  # |pm| FROM| TO|/challenge …
        except ConnectionClosed:
            pass

    def close(self) -> None:
        self.socket.close()
        self.thread.join(HANG)


def test_a_connected_bot_plays_a_tournament_and_appears_on_the_leaderboard(server, tmp_path: Path,
                                                                          monkeypatch) -> None:
    monkeypatch.setenv("WOLFECLICK_SERVER", server.url)  # the one setting the showdown: kind reads
    results = tmp_path / "results"
    argv = ["bench", "--players", "showdown:pokebot", "--vs", "heuristic", "--pairs", "2", "--format", FORMAT,
            "--seed", "3", "--out", str(results)]
    with poke_env_bot(server.url, "pokebot") as bot:
        status, out, err = run_cli(argv)
        bot_battles = dict(bot.battles)
    assert status == 0, err
    config = TournamentConfig(players=("showdown:pokebot",), vs=("heuristic",), pairs=2, format=FORMAT, seed=3)
    _, rows = load_results(tournament_dir(results, config))
    schedule = build_schedule(config)
    assert [(r["p1"], r["p2"]) for r in rows] == [(b.p1, b.p2) for b in schedule]  # the schedule's seats
    assert {r["p1"] for r in rows} == {"showdown:pokebot", "heuristic"}  # the bot scheduled in both seats
    rooms = set()
    for row in rows:
        assert row["reason"] in ("win", "tie") and row["error"] is None
        recording = load_recording(tournament_dir(results, config) / "recordings" / f"{row['recording']}.json")
        remote = next(s for s, p in recording.players.items() if p.policy == "showdown:pokebot")
        ours = "p2" if remote == "p1" else "p1"
        assert recording.players[ours].policy == "heuristic" and recording.seed is None
        assert recording.players[remote].metadata["kind"] == "remote"
        assert recording.source.kind == "tournament" and recording.inputlog == []
        assert recording.turns and all(t.deciding == [ours] for t in recording.turns)
        # the row names the winner the recording names, whichever seat the server gave each
        winner = recording.players[recording.result.winner].policy if recording.result.winner else None
        assert row["winner"] == winner
        assert row["winner_side"] == ({row["p1"]: "p1", row["p2"]: "p2"}[winner] if winner else None)
        assert row["decisions"][{row["p1"]: "p1", row["p2"]: "p2"}["heuristic"]] == len(recording.turns)
        # and the bot's own account of the same room agrees
        room = recording.players[remote].metadata["room"]
        rooms.add(room)
        assert bot_battles[room].won == (winner == "showdown:pokebot")
    assert len(rooms) == len(rows) == 4

    board = tmp_path / "board.json"
    status, out, err = run_cli(["leaderboard", "--results", str(results), "--recordings", str(tmp_path / "none"),
                                "--min-battles", "1", "--json", str(board)])
    assert status == 0, err
    assert "showdown:pokebot" in out
    table = json.loads(board.read_text())
    text = json.dumps(table)
    assert "showdown:pokebot" in text and "heuristic" in text


def test_a_user_who_is_not_connected_is_one_line_and_nothing_is_written(server, tmp_path: Path,
                                                                        monkeypatch) -> None:
    monkeypatch.setenv("WOLFECLICK_SERVER", server.url)
    status, out, err = run_cli(["bench", "--players", "showdown:nobodyhere", "--vs", "heuristic", "--pairs", "1",
                                "--format", FORMAT, "--out", str(tmp_path / "results")])
    assert status == 1 and out == ""
    assert err.strip().splitlines() == [f"error: showdown:nobodyhere: no user nobodyhere is connected to {server.url}"]
    assert not (tmp_path / "results").exists()
    status, _, err = run_cli(["bench", "--players", "showdown:Not An Id", "--vs", "heuristic", "--pairs", "1",
                              "--out", str(tmp_path / "results")])
    assert status == 2 and err.strip().splitlines() == [
        "error: 'showdown:Not An Id' does not name a Showdown user id: lower-case letters and digits, at most 18 "
        "(write showdown:notanid)"]


@pytest.mark.parametrize("refuse", [True, False], ids=["refused", "not-accepted"])
def test_a_refused_or_unanswered_challenge_is_one_line_and_no_row(server, tmp_path: Path, refuse: bool) -> None:
    name = "refuser" if refuse else "sleeper"
    config = TournamentConfig(players=(f"showdown:{name}",), vs=("heuristic",), pairs=1, format=FORMAT, seed=1)
    # the sleeper never answers, so its whole wait is always spent: 2 s proves as much as 10 did (the refuser keeps
    # 10 s, what a loaded machine may need for its /reject to arrive first)
    wait = 10 if refuse else 2
    seat = make_showdown_seat(f"showdown:{name}", server=server.url, wait=wait)
    user = RawUser(server.url, name, refuse=refuse)
    try:
        with pytest.raises(LadderError) as caught:
            asyncio.run(run_tournament(config, tmp_path, policies={seat.spec: seat}))
    finally:
        user.close()
    expected = f"showdown:{name}: {name} refused the challenge" if refuse else \
        f"showdown:{name}: {name} did not accept the challenge within {wait} s"
    assert str(caught.value) == expected
    assert load_results(tournament_dir(tmp_path, config))[1] == []


def test_a_server_seat_is_refused_by_the_embedded_simulator_in_one_line(server) -> None:
    from wolfeclick.battle.batch import BattleJob
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.errors import InputError

    seat = make_showdown_seat("showdown:pokebot", server=server.url)
    with pytest.raises(InputError, match="^showdown:pokebot plays on a Showdown server, not the embedded simulator"):
        BattleJob(make_policy("random"), seat, FORMAT, 1)
