"""Tournaments: schedules, result rows, and real seeded tournaments (determinism, resume after a kill, SPRT)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wolfeclick.arena.results import canonical_rows, game_results, parse_rows, row_line, sprt_status
from wolfeclick.arena.schedule import TournamentConfig, build_schedule, pair_seeds, pairings, parse_specs
from wolfeclick.arena.standings import format_table, summary_from_rows
from wolfeclick.arena.tournament import (
    PROGRESS_FILE,
    RESULTS_FILE,
    SUMMARY_FILE,
    charts_from_rows,
    find_tournaments,
    glicko2_over,
    load_results,
    run_tournament,
    tournament_dir,
)
from wolfeclick.cli import main
from wolfeclick.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ("random", "maxdamage", "heuristic")
SMALL = TournamentConfig(players=BASELINES, pairs=3, format="gen9randombattle", seed=7)


# --- schedules (pure) ------------------------------------------------------------------------------------------


def test_round_robin_pairs_swap_seats_and_share_seeds() -> None:
    schedule = build_schedule(SMALL)
    assert pairings(SMALL) == [("random", "maxdamage"), ("random", "heuristic"), ("maxdamage", "heuristic")]
    assert len(schedule) == 3 * 3 * 2
    assert [b.index for b in schedule] == list(range(len(schedule)))
    for first, second in zip(schedule[::2], schedule[1::2]):
        assert (first.game, second.game) == (0, 1)
        assert first.seed == second.seed and first.pair == second.pair
        assert (first.p1, first.p2) == (second.p2, second.p1)
    # Pair-major order; every pairing of pair k uses the same deal, and deals differ between pairs.
    assert [b.pair for b in schedule] == [k for k in range(3) for _ in range(6)]
    seeds = pair_seeds(SMALL.seed, 3)
    assert {b.seed for b in schedule if b.pair == 1} == {seeds[1]}
    assert len(set(seeds)) == 3 and all(0 <= s < 2**31 for s in seeds)
    assert len({b.battle_id for b in schedule}) == len(schedule)


def test_gauntlet_skips_self_play_and_repeats() -> None:
    config = TournamentConfig(players=("a", "random"), vs=("random", "heuristic"), pairs=1, format="gen9randombattle",
                              seed=0)
    assert pairings(config) == [("a", "random"), ("a", "heuristic"), ("random", "heuristic")]


def test_config_id_is_stable_and_validated() -> None:
    same = TournamentConfig(players=(" random", "maxdamage", "heuristic "), pairs=3, format="gen9randombattle", seed=7)
    assert same == SMALL and same.id == SMALL.id and SMALL.id.startswith("gen9randombattle-s7-")
    assert TournamentConfig.from_dict(json.loads(json.dumps(SMALL.to_dict()))) == SMALL
    assert parse_specs(" random, ,heuristic") == ("random", "heuristic")
    with pytest.raises(ValueError, match="exactly one pairing"):
        TournamentConfig(players=BASELINES, pairs=1, format="gen9randombattle", seed=0, sprt=(0, 50))
    with pytest.raises(ValueError, match="listed twice"):
        TournamentConfig(players=("random", "random"), pairs=1, format="gen9randombattle", seed=0)
    with pytest.raises(ValueError, match="no pairings"):
        TournamentConfig(players=("random",), pairs=1, format="gen9randombattle", seed=0)
    with pytest.raises(ValueError, match="elo0 < elo1"):
        TournamentConfig(players=("random", "heuristic"), pairs=1, format="gen9randombattle", seed=0, sprt=(50, 0))


# --- rows (pure) -----------------------------------------------------------------------------------------------


def _row(config: TournamentConfig, index: int, winner_side: str | None, reason: str = "win") -> dict:
    battle = build_schedule(config)[index]
    return {
        "tournament": config.id, "index": index, "pairing": battle.pairing, "pair": battle.pair, "game": battle.game,
        "seed": battle.seed, "p1": battle.p1, "p2": battle.p2,
        "winner": {"p1": battle.p1, "p2": battle.p2}.get(winner_side or ""), "winner_side": winner_side,
        "reason": reason, "turns": 20, "decisions": {"p1": 20, "p2": 20},
        "rewards": {"p1": {"outcome": 0, "shaped": -1.25, "total": -1.25}, "p2": {"outcome": 0.0, "shaped": 0.5,
                                                                              "total": 0.5}},
        "illegal": {"p1": 0, "p2": 1}, "recording": battle.battle_id, "error": None,
    }


def test_parse_rows_drops_only_a_torn_last_line() -> None:
    rows = [_row(SMALL, i, "p1") for i in range(3)]
    text = "".join(row_line(r) for r in rows)
    assert parse_rows(text) == (rows, False)
    assert parse_rows(text + '{"tournament": "x", "ind') == (rows, True)
    with pytest.raises(ValueError, match="line 2"):
        parse_rows(row_line(rows[0]) + "garbage\n" + row_line(rows[1]))


def test_a_row_round_trips_byte_identically() -> None:
    # An int reward (a side with no decisions sums to 0) stays an int: the typed row is checked, not converted.
    rows = [_row(SMALL, 0, "p1"), _row(SMALL, 1, None, "aborted") | {"error": "simulator process exited (code 1)"}]
    text = "".join(row_line(r) for r in rows)
    parsed, torn = parse_rows(text)
    assert not torn and "".join(row_line(r) for r in parsed) == text
    assert '"outcome":0,' in text and list(json.loads(row_line(parsed[0]))) == sorted(parsed[0])


@pytest.mark.parametrize("change, key", [
    (lambda r: r.pop("turns"), "turns"),  # missing
    (lambda r: r.update(colour="red"), "colour"),  # extra
    (lambda r: r.update(turns="many"), "turns"),  # wrong type
    (lambda r: r.update(index=True), "index"),  # a bool is not a count
    (lambda r: r.update(winner_side="p3"), "winner_side"),
    (lambda r: r["decisions"].update(p1=None), "decisions.p1"),  # nested
    (lambda r: r["rewards"]["p2"].pop("total"), "rewards.p2.total"),
])
def test_a_malformed_row_is_refused_in_one_line(change, key: str, tmp_path: Path) -> None:
    rows = [_row(SMALL, 0, "p1"), json.loads(row_line(_row(SMALL, 1, "p2")))]
    change(rows[1])
    text = "".join(json.dumps(r) + "\n" for r in rows)
    with pytest.raises(InputError) as caught:
        parse_rows(text, "somewhere/results.jsonl")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("somewhere/results.jsonl line 2 ") and f"'{key}'" in message
    # From disk, the message names the file read.
    directory = tournament_dir(tmp_path, SMALL)
    directory.mkdir(parents=True)
    (directory / "tournament.json").write_text(json.dumps({"id": SMALL.id, **SMALL.to_dict()}))
    (directory / RESULTS_FILE).write_text(text)
    with pytest.raises(InputError, match=f"{RESULTS_FILE} line 2 .*'{key}'"):
        load_results(directory)


def test_sprt_cut_is_by_pair_order_not_completion_order() -> None:
    config = TournamentConfig(players=("heuristic", "random"), pairs=30, format="gen9randombattle", seed=0,
                              sprt=(0, 100))
    # heuristic wins every game; rows arrive scrambled, with pairs beyond the stopping point already played.
    index_of = {b.index: b for b in build_schedule(config)}
    rows = [_row(config, i, "p1" if index_of[i].p1 == "heuristic" else "p2") for i in range(24)]
    status = sprt_status(list(reversed(rows)), config)
    assert status is not None and status[0].decision == "H1"
    stop = status[1]
    kept = canonical_rows(list(reversed(rows)), config)
    assert [r["index"] for r in kept] == list(range(2 * (stop + 1)))
    # A missing game in an early pair holds the test back, whatever finished after it.
    assert sprt_status([r for r in rows if r["index"] != 1], config)[1] is None


def test_summary_from_rows_counts_ties_and_skips_aborted() -> None:
    rows = [_row(SMALL, 0, None, "tie"), _row(SMALL, 1, "p1"), _row(SMALL, 2, None, "aborted")]
    summary = summary_from_rows(rows, SMALL)
    assert (summary.battles, summary.aborted, summary.complete, summary.scheduled) == (3, 1, False, 18)
    by_name = {row.policy: row for row in summary.table}
    assert (by_name["maxdamage"].wins, by_name["maxdamage"].ties, by_name["maxdamage"].battles) == (1, 1, 2)
    assert by_name["random"].win_rate == pytest.approx(0.25)
    assert by_name["maxdamage"].illegal == 1 and by_name["random"].illegal == 1
    assert len(game_results(rows)) == 2
    assert "maxdamage" in format_table(summary)


# --- real tournaments ------------------------------------------------------------------------------------------


def _files(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in (RESULTS_FILE, SUMMARY_FILE, "tournament.json")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SMALL played once, uninterrupted, at concurrency 2."""
    out = tmp_path_factory.mktemp("reference")
    summary = asyncio.run(run_tournament(SMALL, out, concurrency=2))
    assert summary.complete and summary.battles == 18
    return tournament_dir(out, SMALL)


@pytest.mark.slow
def test_tournament_writes_layout_and_replays_identically(reference: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (reference / RESULTS_FILE).read_text().splitlines()]
    assert [r["index"] for r in rows] == list(range(18))
    assert all(r["reason"] in ("win", "tie", "turn_limit") for r in rows)
    assert {p.name for p in (reference / "recordings").iterdir()} == {f"{r['recording']}.json" for r in rows}
    # The pair's two games deal the same two teams, to the same seats, with the policies swapped.
    first, second = (json.loads((reference / "recordings" / f"{r['recording']}.json").read_text()) for r in rows[:2])
    assert first["seed"] == second["seed"]
    assert first["players"]["p1"]["policy"] == second["players"]["p2"]["policy"] == rows[0]["p1"]
    for side in ("p1", "p2"):
        team = [p["species"] for p in first["turns"][0]["snapshot"][side]["team"]]
        assert team == [p["species"] for p in second["turns"][0]["snapshot"][side]["team"]]
    # Same config at another concurrency: byte-identical results, summary and config.
    asyncio.run(run_tournament(SMALL, tmp_path, concurrency=1, keep_recordings=False))
    assert _files(tournament_dir(tmp_path, SMALL)) == _files(reference)
    assert not (tournament_dir(tmp_path, SMALL) / "recordings").exists()
    # Read back for a UI.
    config, loaded = load_results(reference)
    assert config == SMALL and loaded == rows
    assert "".join(row_line(row) for row in loaded) == (reference / RESULTS_FILE).read_text()  # the same bytes
    assert find_tournaments(reference.parent) == [reference]
    charts = charts_from_rows(loaded, config=config)
    assert set(charts) == {"win_rate", "heatmap", "ratings", "length", "illegal"}
    assert "18 battles" in charts["ratings"].layout.title.text
    glicko = glicko2_over([reference])
    assert set(glicko) == set(BASELINES) and glicko["heuristic"].rating > glicko["random"].rating


@pytest.mark.slow
def test_resume_after_kill_matches_uninterrupted_run(reference: Path, tmp_path: Path) -> None:
    args = ["bench", "--players", ",".join(BASELINES), "--pairs", "3", "--format", "gen9randombattle",
            "--seed", "7", "--out", str(tmp_path)]
    progress = tournament_dir(tmp_path, SMALL) / PROGRESS_FILE
    proc = subprocess.Popen([sys.executable, "-m", "wolfeclick", *args, "--concurrency", "1"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if progress.exists() and len(progress.read_text().splitlines()) >= 3:
                break
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    done = len(progress.read_text().splitlines())
    assert 3 <= done < 18, "the run was not killed midway"
    assert not (progress.parent / RESULTS_FILE).exists()
    with progress.open("a") as handle:  # as if killed in the middle of writing a line
        handle.write('{"tournament": "' + SMALL.id)
    assert main(args) == 2  # an existing tournament is never silently restarted
    assert main([*args, "--resume", "--concurrency", "2"]) == 0
    assert _files(progress.parent) == _files(reference)
    assert len(progress.read_text().splitlines()) == 18


@pytest.mark.slow
def test_stop_event_then_resume(reference: Path, tmp_path: Path) -> None:
    async def stopped_early() -> None:
        stop = asyncio.Event()
        seen: list[int] = []

        def on_result(row: dict, done: int, total: int) -> None:
            seen.append(done)
            if done >= 2:
                stop.set()

        summary = await run_tournament(SMALL, tmp_path, concurrency=2, keep_recordings=False, on_result=on_result,
                                       stop=stop)
        assert not summary.complete and 2 <= summary.battles < 18
        assert seen == list(range(1, len(seen) + 1))

    asyncio.run(stopped_early())
    assert not (tournament_dir(tmp_path, SMALL) / RESULTS_FILE).exists()
    progress = tournament_dir(tmp_path, SMALL) / PROGRESS_FILE  # a whole last row, but killed before its newline
    progress.write_text(progress.read_text().rstrip("\n"))
    starts: list[tuple[int, int]] = []
    summary = asyncio.run(run_tournament(SMALL, tmp_path, concurrency=2, resume=True, keep_recordings=False,
                                         on_start=lambda done, total: starts.append((done, total))))
    assert summary.complete and starts[0][0] >= 2 and starts[0][1] == 18
    assert _files(tournament_dir(tmp_path, SMALL)) == _files(reference)


@pytest.mark.slow
@pytest.mark.parametrize("players, decision", [("heuristic,random", "H1"), ("random,heuristic", "H0")])
def test_sprt_stops_early_and_says_which_way(players: str, decision: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--players", players, "--pairs", "40", "--format", "gen9randombattle", "--seed", "3",
            "--out", str(tmp_path), "--concurrency", "2", "--sprt", "0,100", "--no-recordings"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"accept {decision}" in out
    config, rows = load_results(next(iter(find_tournaments(tmp_path))))
    summary = json.loads((tournament_dir(tmp_path, config) / SUMMARY_FILE).read_text())
    assert summary["complete"] and summary["sprt"]["decision"] == decision
    assert summary["sprt"]["a"] == players.split(",")[0]
    assert len(rows) == 2 * summary["sprt"]["pairs"] < 80
    # Resuming a decided tournament plays nothing more and rewrites the same files.
    before = _files(tournament_dir(tmp_path, config))
    assert main([*args, "--resume"]) == 0
    assert _files(tournament_dir(tmp_path, config)) == before


def test_cli_rejects_bad_arguments_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["bench", "--pairs", "1", "--out", str(tmp_path)]
    assert main([*base, "--players", "random,heuristic", "--sprt", "x"]) == 2
    assert main([*base, "--players", "random,maxdamage,heuristic", "--sprt", "0,50"]) == 2
    assert main([*base, "--players", "random,nosuchpolicy"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("error: ") for line in errors)


# A misspelt spec is refused as the config is made (issue 32): before, it surfaced when the battles were prepared,
# after a given-team format's simulator had started and every spec sorted before it had been built (a checkpoint
# loaded for minutes first).
BAD_SPECS = [
    ("heuristc", "unknown policy spec 'heuristc'"),
    ("random?depth=2", "unknown option(s) depth"),
    ("py:no_such_agent_pkg.agent:make", "module 'no_such_agent_pkg.agent' not found"),
    ("showdown:Bad User", "does not name a Showdown user id"),
    ("preset:run9", "unknown preset"),
    ("llm:{ckpt}?mode=genrate", "mode='genrate' is not one of score, generate"),
    ("llm:{ckpt}?tempreature=1", "unknown option(s) tempreature"),
    ("llm:{ckpt}?profile=arena-v9", "unknown prompt profile 'arena-v9'"),
    ("llm:/no/such/checkpoint", "'/no/such/checkpoint' does not exist"),
]


def _checkpoint_folder(tmp_path: Path) -> Path:
    """A local folder an ``llm:`` spec may name (a config and no weights: it must never be loaded)."""
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    return folder


def _nothing_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    from wolfeclick.policies.registry import PolicyRegistry
    from wolfeclick.sim.process import SimProcess

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("a simulator started or a policy was built before every spec was checked")

    monkeypatch.setattr(SimProcess, "start", started)
    monkeypatch.setattr(PolicyRegistry, "build", started)


@pytest.mark.parametrize("bad, says", BAD_SPECS)
def test_bench_refuses_a_misspelt_spec_before_a_simulator_starts_or_a_model_loads(
        bad: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    ckpt = _checkpoint_folder(tmp_path)
    _nothing_starts(monkeypatch)
    players = f"llm:{ckpt},{bad.format(ckpt=ckpt)}"  # a given-team format: its teams need a simulator to check
    assert main(["bench", "--players", players, "--pairs", "1", "--format", "gen9ou", "--teams",
                 str(ROOT / "tests" / "data" / "teams" / "gen9ou"), "--out", str(tmp_path / "out")]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: ") and says in errors[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad, says", BAD_SPECS)
def test_compare_refuses_a_misspelt_spec_before_a_checkpoint_loads(bad: str, says: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from wolfeclick.battle.live_battles import LiveError
    from wolfeclick.ui.tournament_runs import run_compare

    class NothingLoads:
        def loaded(self, spec: str, mode: str) -> bool:
            return False

        def build(self, spec: str, mode: str) -> None:
            raise AssertionError(f"{spec} was built before every spec was checked")

    ckpt = _checkpoint_folder(tmp_path)
    _nothing_starts(monkeypatch)

    async def run() -> None:
        async for _ in run_compare([f"llm:{ckpt}", bad.format(ckpt=ckpt)], 2, "gen9randombattle", 1,
                                   cache=NothingLoads(), out_dir=tmp_path / "out", recordings=tmp_path / "rec"):
            pass

    with pytest.raises(LiveError) as caught:
        asyncio.run(run())
    assert says in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_ratings_are_anchored_on_random_with_field_relative_intervals() -> None:
    from wolfeclick.arena.standings import shift_to_anchor

    field = {"random": (700.0, 600.0, 780.0), "heuristic": (1300.0, 1220.0, 1390.0)}
    shifted = shift_to_anchor(field, "random")
    assert shifted["random"] == (1000.0, 900.0, 1080.0)
    assert shifted["heuristic"] == (1600.0, 1520.0, 1690.0)
    assert shift_to_anchor(field, "absent") == field
