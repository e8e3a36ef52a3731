"""``ladder``: Arena policies playing each other through a real local ``pokemon-showdown`` server (started here from
node_modules, bound to 127.0.0.1), every battle recorded; results compared with the embedded runner's; a password
that never shows; a server killed mid-battle.

One lean server (no child processes: it starts in a few seconds) serves the module; the kill test runs last and the
fixture starts a fresh server for any test that would come after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import io
import threading
import urllib.parse
from math import comb
from pathlib import Path
from typing import Callable

import pytest

from wolfeclick import cli
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import resimulate
from wolfeclick.battle.store import load_recording
from wolfeclick.ladder.play import LadderOptions, LadderSession
from wolfeclick.sim.server import LocalServer

FORMAT = "gen9randombattle"


class Servers:
    """The module's server; a fresh one if a test killed it."""

    def __init__(self) -> None:
        self.server: LocalServer | None = None

    def get(self) -> LocalServer:
        if self.server is None or not self.server.alive:
            if self.server is not None:
                self.server.stop()
            self.server = LocalServer(lean=True).start()
        return self.server


@pytest.fixture(scope="module")
def servers():  # type: ignore[no-untyped-def]
    holder = Servers()
    yield holder
    if holder.server is not None:
        holder.server.stop()


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``python -m wolfeclick ARGV`` in this process (in a thread: two sides play at once); (status, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:  # argparse's usage errors
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def play_both(argv: list[str], policy: str, options: LadderOptions) -> tuple[tuple[int, str, str], list]:
    """The CLI (``argv``) here and, at the same time, ``policy`` through the library in a thread (one process may
    redirect stdout only once at a time); returns the CLI's (status, out, err) and the library side's recordings."""
    theirs: list = []

    def other() -> None:
        summary = asyncio.run(LadderSession(make_policy(policy), options).run())
        theirs.extend(summary.recordings)

    thread = threading.Thread(target=other)
    thread.start()
    result = run_cli(argv)
    thread.join(180)
    assert not thread.is_alive(), "the other side did not finish"
    return result, theirs


def ladder_argv(url: str, policy: str, n: int, out: Path, *how: str) -> list[str]:
    return ["ladder", "--server", url, "--policy", policy, "--format", FORMAT, "--n", str(n), "--out", str(out),
            "--timeout", "60", "--wait", "60", *how]


def fisher_two_sided(a: int, n1: int, b: int, n2: int) -> float:
    """Exact two-sided Fisher p-value for a/n1 vs b/n2 successes (tables no likelier than the one seen)."""
    k, n = a + b, n1 + n2

    def prob(x: int) -> float:
        return comb(n1, x) * comb(n2, k - x) / comb(n, k)

    seen = prob(a)
    return sum(prob(x) for x in range(max(0, k - n2), min(n1, k) + 1) if prob(x) <= seen * (1 + 1e-9))


def test_fisher_two_sided_matches_known_values() -> None:
    assert fisher_two_sided(10, 10, 0, 10) == pytest.approx(2 / comb(20, 10), rel=1e-9)  # the two extreme tables
    assert fisher_two_sided(5, 10, 5, 10) == pytest.approx(1.0)
    assert fisher_two_sided(1, 10, 10, 10) < 0.001


async def embedded_results(n: int) -> list[str | None]:
    """The same pairing on the embedded runner: random as p1 (the challenger's seat), heuristic as p2."""
    jobs = [BattleJob(make_policy("random"), make_policy("heuristic"), FORMAT, 7_000 + i) for i in range(n)]
    winners: list[str | None] = [None] * n
    async for index, recording in run_jobs(jobs, concurrency=2):
        winners[index] = recording.result.winner
    return winners


LADDER: dict[str, list] = {}
"""The ten-battle test's recordings, reused by the re-simulation test."""


def test_ten_battles_through_a_local_server_match_the_embedded_runner(servers, tmp_path: Path) -> None:
    server = servers.get()
    n = 10
    (status, out, err), theirs = play_both(
        ladder_argv(server.url, "heuristic", n, tmp_path, "--accept-challenges", "--user", "ArenaHeur"),
        "random", LadderOptions(server.url, FORMAT, n=n, mode="challenge", opponent="ArenaHeur", username="ArenaRand",
                                timeout=60, wait=60))
    assert status == 0, err
    paths = [Path(line) for line in out.split()]
    assert len(paths) == n and all(p.exists() for p in paths)
    assert run_cli(["validate", str(tmp_path)])[0] == 0
    recordings = [load_recording(p) for p in paths] + theirs
    assert len(recordings) == 2 * n
    LADDER["recordings"] = recordings
    by_room: dict[str, dict[str, object]] = {}
    for recording in recordings:
        assert recording.source.kind == "ladder" and server.url in (recording.source.detail or "")
        assert recording.seed is None and recording.inputlog == []
        assert "not re-simulatable" in (recording.source.detail or "")
        assert recording.result.reason in ("win", "tie")
        ours = next(side for side, player in recording.players.items() if not player.policy.startswith("showdown:"))
        other = "p2" if ours == "p1" else "p1"
        assert recording.players[other].policy in ("showdown:arenaheur", "showdown:arenarand")
        assert recording.turns and all(t.deciding == [ours] and set(t.decisions) == {ours} for t in recording.turns)
        assert all(set(t.snapshot) == {"p1", "p2"} for t in recording.turns)
        decisions = [t.decisions[ours] for t in recording.turns]
        assert all(d.state and d.legal_actions and d.reward.components for d in decisions)
        assert decisions[-1].reward.outcome == (10.0 if recording.result.winner == ours else
                                                 -10.0 if recording.result.winner else 0.0)
        room = (recording.source.detail or "").split()[1]
        by_room.setdefault(room, {})[recording.players[ours].policy] = recording
    assert len(by_room) == n and all(set(sides) == {"heuristic", "random"} for sides in by_room.values())
    for sides in by_room.values():  # both sides' recordings of one battle tell the same story
        h, r = sides["heuristic"], sides["random"]
        assert (h.result.winner, h.result.turns) == (r.result.winner, r.result.turns)  # type: ignore[attr-defined]
        assert h.players["p1"].name == r.players["p1"].name  # type: ignore[attr-defined]

    heuristic_side = {room: next(s for s, p in sides["heuristic"].players.items() if p.policy == "heuristic")
                      for room, sides in by_room.items()}  # type: ignore[attr-defined]
    ladder_wins = sum(sides["heuristic"].result.winner == heuristic_side[room]  # type: ignore[attr-defined]
                      for room, sides in by_room.items())
    embedded_wins = sum(w == "p2" for w in asyncio.run(embedded_results(n)))
    # Same pairing, same format; the server picks its own seeds, so the check is on the distribution: an exact
    # two-sided Fisher test of heuristic's win rates, α = 0.01. heuristic beats random ~98% of the time, so if
    # the ladder path mislabelled winners or sides (win rate ~2%) this fails with power 0.999; against a ladder
    # win rate of 50% its power is only ~0.15 (30%: ~0.6) — it guards against gross errors, not small drifts.
    p_value = fisher_two_sided(ladder_wins, n, embedded_wins, n)
    assert p_value > 0.01, (ladder_wins, embedded_wins, p_value)
    assert ladder_wins >= 6  # and, absolutely, heuristic must clearly beat random through the server too


def test_a_ladder_recording_opens_in_the_viewer_and_resim_refuses_it_in_one_line(tmp_path: Path) -> None:
    from wolfeclick.ui.battle_panels import BattleView, render_turn
    from wolfeclick.ui.viewer_payload import battle_payload

    if not LADDER:
        pytest.skip("needs the ten-battle test's recordings")
    recording = LADDER["recordings"][0]
    ours = next(side for side, player in recording.players.items() if not player.policy.startswith("showdown:"))
    view = BattleView.of(recording)
    payload = battle_payload(view, replay_id=recording.id)
    assert payload["total"] == view.steps > len(recording.turns) // 2 and payload["panels"]
    html = render_turn(recording, None, 1)
    assert f"{ours} · {recording.players[ours].name} decided" in html and "State it saw" in html
    result = asyncio.run(resimulate(recording))
    assert not result.ok and "ladder" in result.message and "\n" not in result.message
    path = tmp_path / "ladder.json"
    path.write_text(recording.to_json())
    status, out, _ = run_cli(["resim", str(path)])
    assert status == 1 and out.strip().splitlines() == [f"{path}: {result.message}"]


TEAMS = Path(__file__).parent / "data" / "teams" / "gen9ou"


def test_a_team_format_plays_with_team_preview_through_the_server(servers, tmp_path: Path) -> None:
    """gen9ou with given teams: ``--team`` is validated first, preview is our first decision, our team is kept."""
    from poke_env.teambuilder import ConstantTeambuilder

    from wolfeclick.battle.schema import TeamInfo

    server = servers.get()
    # the other side's team packed by poke-env (the server validates it when the challenge is made)
    stall = TeamInfo(packed=ConstantTeambuilder((TEAMS / "stall.txt").read_text()).yield_team(), name="stall.txt")
    argv = ["ladder", "--server", server.url, "--policy", "heuristic", "--format", "gen9ou", "--n", "1", "--out",
            str(tmp_path), "--timeout", "60", "--wait", "60", "--accept-challenges", "--user", "ArenaOu",
            "--team", str(TEAMS / "balance.txt")]
    (status, out, err), theirs = play_both(
        argv, "maxdamage", LadderOptions(server.url, "gen9ou", n=1, mode="challenge", opponent="ArenaOu",
                                         team=stall, timeout=60, wait=60))
    assert status == 0, err
    recording = load_recording(Path(out.split()[0]))
    ours = next(side for side, player in recording.players.items() if player.policy == "heuristic")
    preview = recording.turns[0].decisions[ours]
    assert preview.action is not None and preview.action.action == "team" and preview.command.startswith("team ")
    assert recording.players[ours].metadata["team"]["name"] == "balance.txt"
    assert recording.result.reason in ("win", "tie") and theirs[0].result.winner == recording.result.winner


class LoginServer(http.server.ThreadingHTTPServer):
    """A stand-in for Showdown's login server on 127.0.0.1: records the forms it gets and vouches (or refuses)."""

    def __init__(self, refuse: bool = False) -> None:
        self.forms: list[dict[str, list[str]]] = []
        self.refuse = refuse
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                outer.forms.append(urllib.parse.parse_qs(body))
                answer = b']{"actionsuccess":false,"assertion":";;Wrong password."}' if outer.refuse else \
                    b']{"actionsuccess":true,"assertion":""}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api/login"


def every_file_text(*folders: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for folder in folders for p in folder.rglob("*") if p.is_file())


def test_the_password_is_used_and_never_shown(servers, tmp_path: Path, caplog, monkeypatch) -> None:
    server = servers.get()
    password = "hunter2-Ladder-Secret-91"
    secret_file = tmp_path / "password.txt"
    secret_file.write_text(password + "\n")
    out = tmp_path / "recordings"
    login = LoginServer()
    try:
        (status, out_p, err_p), theirs = play_both(
            ladder_argv(server.url, "heuristic", 1, out, "--accept-challenges", "--user", "ArenaPass",
                        "--password-file", str(secret_file), "--login-server", login.url),
            "random", LadderOptions(server.url, FORMAT, n=1, mode="challenge", opponent="ArenaPass", timeout=60,
                                    wait=60))
    finally:
        login.shutdown()
    assert status == 0 and len(theirs) == 1, err_p
    assert [form["pass"] for form in login.forms] == [[password]]  # it went to the login server, and only there
    assert login.forms[0]["name"] == ["ArenaPass"]
    shown = "\n".join([out_p, err_p, caplog.text, every_file_text(out), theirs[0].to_json()])
    assert server.folder is not None
    shown += every_file_text(server.folder / "logs")
    assert len(list(out.glob("*.json"))) == 1
    assert password not in shown and "Ladder-Secret" not in shown

    refused = LoginServer(refuse=True)  # a wrong password, from the environment this time: one line, exit 1
    monkeypatch.setenv("WOLFECLICK_SHOWDOWN_PASSWORD", password)
    try:
        status, out_w, err_w = run_cli(ladder_argv(server.url, "heuristic", 1, tmp_path / "none", "--search",
                                                   "--user", "ArenaPass", "--login-server", refused.url))
    finally:
        refused.shutdown()
    assert [form["pass"] for form in refused.forms] == [[password]]
    assert status == 1 and out_w == ""
    assert err_w.strip().splitlines() == ["error: the login server refused 'ArenaPass': Wrong password."]
    assert password not in err_w


def test_usage_errors_exit_2_without_playing(tmp_path: Path) -> None:
    assert run_cli(["ladder", "--server", "http://x", "--policy", "random", "--search", "--out", str(tmp_path)])[0] == 2
    status, _, err = run_cli(["ladder", "--server", "ws://127.0.0.1:1/showdown/websocket", "--policy", "random",
                              "--search", "--password", "x"])
    assert status == 2 and "--password" in err  # no such option: passwords never come from the command line
    status, _, err = run_cli(["ladder", "--server", "ws://127.0.0.1:1/showdown/websocket", "--policy", "nobody",
                              "--search"])
    assert status == 2 and "unknown policy spec" in err


def test_the_server_listens_on_loopback_only(servers) -> None:
    server = servers.get()
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, port = local.rsplit(":", 1)
            if state == "0A" and int(port, 16) == server.port:  # 0A: LISTEN
                listening.append(address)
    assert listening == ["0100007F"]  # 127.0.0.1, and nowhere else (no 0.0.0.0, no IPv6 wildcard)
    assert server.folder is not None and "exports.bindaddress = '127.0.0.1';" in (
        server.folder / "config" / "config.js").read_text()


class AtDecision:
    """A baseline that first runs ``before()`` at its ``at``-th decision (kills the server, stalls like a slow model).

    ``blocking`` as a language model is: decided in a worker thread, so the event loop goes on meanwhile."""

    def __init__(self, spec: str, at: int, before: Callable[[], object], blocking: bool = False) -> None:
        self.inner = make_policy(spec)
        self.spec, self.blocking = self.inner.spec, blocking
        self.at, self.before, self.calls = at, before, 0

    def metadata(self) -> dict:
        return self.inner.metadata()

    def decide(self, observation):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == self.at:
            self.before()
        return self.inner.decide(observation)


def test_a_silent_server_ends_the_battle_aborted_with_its_turns(servers, tmp_path: Path) -> None:
    """The opponent stalls past our --timeout: our battle ends aborted, turns kept, one line; we forfeit on the
    server, so the stalling side wins its battle rather than hanging.

    The stall lasts until our command has ended (not a fixed time), and our timeout is 10 s: with a 2 s timeout and a
    4.5 s stall, a loaded machine once kept the server quiet for 2 s before the stall, and the battle ended after one
    turn."""
    server = servers.get()
    theirs: list = []
    ours_ended = threading.Event()

    def other() -> None:
        options = LadderOptions(server.url, FORMAT, n=1, mode="challenge", opponent="ArenaWait", timeout=300, wait=60)
        stalls = AtDecision("random", 3, lambda: ours_ended.wait(300), blocking=True)
        theirs.extend(asyncio.run(LadderSession(stalls, options).run()).recordings)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        status, out, err = run_cli(ladder_argv(server.url, "heuristic", 1, tmp_path, "--accept-challenges", "--user",
                                               "ArenaWait", "--timeout", "10"))
    finally:
        ours_ended.set()
    thread.join(120)
    recording = load_recording(Path(out.split()[0]))
    assert status == 1 and recording.result.reason == "aborted" and len(recording.turns) >= 2
    assert recording.result.error == "no message from the server for 10 s"
    assert err.strip().splitlines() == [f"warning: {recording.id} aborted: {recording.result.error}"]
    [stalled] = theirs
    assert stalled.result.reason == "win" and stalled.players[stalled.result.winner].policy == "random"


def test_killing_the_server_mid_battle_keeps_the_turns_as_aborted(servers, tmp_path: Path) -> None:
    server = servers.get()
    killer = AtDecision("heuristic", 4, server.kill)  # SIGKILL, as a crash would
    saved: list = []

    def ours() -> None:
        options = LadderOptions(server.url, FORMAT, n=3, mode="accept", username="ArenaKill", timeout=60, wait=60)
        summary = asyncio.run(LadderSession(killer, options, on_recording=saved.append).run())
        saved.append(summary)

    thread = threading.Thread(target=ours)
    thread.start()
    status, out, err = run_cli(ladder_argv(server.url, "random", 3, tmp_path, "--challenge", "ArenaKill"))
    thread.join(60)
    recording, summary = saved
    assert not server.alive
    assert recording.result.reason == "aborted" and recording.result.winner is None
    assert len(recording.turns) >= 3  # the decisions before the kill, with their rewards
    assert server.url in recording.result.error and "\n" not in recording.result.error
    assert summary.stopped and len(summary.recordings) == 1  # no further battles on a dead server

    assert status == 1  # the other side, through the CLI: its battle aborted too, one clear line each
    [path] = out.split()
    theirs = load_recording(Path(path))
    assert theirs.result.reason == "aborted" and len(theirs.turns) >= 3
    lines = err.strip().splitlines()
    assert lines[0] == f"warning: {theirs.id} aborted: {theirs.result.error}"
    assert lines[1].startswith("error: 1 of 3 battles played; ") and server.url in lines[1]
