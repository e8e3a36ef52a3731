"""The history index and the standing leaderboard (issue 18): real tournaments pooled into one table."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from wolfeclick.arena.history import INDEX_FILE, read_index, rebuild_index, scan_history
from wolfeclick.arena.leaderboard import format_leaderboard, games_of, leaderboard
from wolfeclick.arena.ratings import bradley_terry
from wolfeclick.arena.results import game_results
from wolfeclick.arena.schedule import TournamentConfig
from wolfeclick.arena.tournament import RESULTS_FILE, load_results, run_tournament, tournament_dir
from wolfeclick.cli import main

FORMAT = "gen9randombattle"
TOURNAMENTS = [
    TournamentConfig(players=("random", "maxdamage"), pairs=2, format=FORMAT, seed=11),
    TournamentConfig(players=("maxdamage", "heuristic"), pairs=2, format=FORMAT, seed=12),
    TournamentConfig(players=("random", "heuristic"), pairs=2, format=FORMAT, seed=13),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three tournaments with overlapping players, played for real, recordings kept in their own folders."""
    out = tmp_path_factory.mktemp("history") / "results"

    async def play() -> None:
        for config in TOURNAMENTS:
            summary = await run_tournament(config, out, concurrency=2)
            assert summary.complete and summary.battles == 4

    asyncio.run(play())
    return out


def _all_rows(results: Path) -> list[dict]:
    return [row for config in TOURNAMENTS for row in load_results(tournament_dir(results, config))[1]]


def test_three_tournaments_give_one_table_equal_to_a_single_fit(results: Path) -> None:
    scan = scan_history(results)
    assert len(scan.entries) == 12 and not scan.skipped
    assert {e.source for e in scan.entries} == {"tournament"}
    assert all(e.created and e.simulator and e.pair for e in scan.entries)  # rows merged with their recordings
    board = leaderboard(scan.entries, min_battles=1)
    single = bradley_terry(game_results(_all_rows(results)))  # one fit over every row, random = 1000
    assert {r.policy: r.rating for r in board.rows} == pytest.approx(single, abs=1e-9)
    assert board.battles == 12 and board.anchor == "random"
    assert next(r for r in board.rows if r.policy == "random").rating == pytest.approx(1000.0)
    assert {(c.a, c.b): c.games for c in board.matrix} == {
        ("maxdamage", "random"): 4, ("heuristic", "maxdamage"): 4, ("heuristic", "random"): 4}
    assert sum(r.battles for r in board.rows) == 24
    text = format_leaderboard(board)
    assert "12 battles" in text and "heuristic" in text


def test_one_tournament_alone_matches_its_summary(results: Path) -> None:
    config = TOURNAMENTS[2]
    entries = [e for e in scan_history(results).entries if e.detail == config.id]
    board = leaderboard(entries, min_battles=1)
    summary = json.loads((tournament_dir(results, config) / "summary.json").read_text())
    for row in summary["table"]:
        mine = next(r for r in board.to_dict()["rows"] if r["policy"] == row["policy"])
        assert (mine["rating"], mine["rating_low"], mine["rating_high"]) == (
            row["rating"], row["rating_low"], row["rating_high"])


def test_a_battle_found_twice_counts_once(results: Path, tmp_path: Path) -> None:
    library = tmp_path / "library"
    shutil.copytree(tournament_dir(results, TOURNAMENTS[0]) / "recordings", library)
    assert main(["record", "--p1", "heuristic", "--p2", "random", "--format", FORMAT, "--seed", "5",
                 "--out", str(library)]) == 0  # one battle outside any tournament
    scan = scan_history(results, [library, library])
    assert len(scan.entries) == 13
    played = [e for e in scan.entries if e.source != "tournament"]
    assert len(played) == 1 and played[0].pair is None and json.loads(played[0].p1_checkpoint)
    (library / "broken.json").write_text("{not json")
    assert scan_history(results, [library]).skipped == [str(library / "broken.json")]


def test_deleting_the_index_and_rebuilding_gives_the_same_table(results: Path, tmp_path: Path) -> None:
    index, scan = rebuild_index(results)
    assert index == results / INDEX_FILE and read_index(index) == scan.entries
    first = leaderboard(read_index(index), min_battles=1)
    index.unlink()
    again, _ = rebuild_index(results)
    assert leaderboard(read_index(again), min_battles=1).to_json() == first.to_json()
    assert first.table_csv() == leaderboard(list(reversed(scan.entries)), min_battles=1).table_csv()
    assert first.matrix_csv().splitlines()[0] == "a,b,games,wins_a,wins_b,ties,score_a,ci_low,ci_high"
    # Filters are queries over the index.
    assert read_index(index, format_id="gen4randombattle") == []
    assert read_index(index, since="2999-01-01") == []
    assert len(read_index(index, sources=["tournament"])) == 12
    # Too few battles: listed apart, still rated with the others.
    apart = leaderboard(scan.entries, min_battles=9)
    assert {r.policy for r in apart.too_few} == {"random", "maxdamage", "heuristic"} and not apart.rows
    assert games_of(scan.entries) and len(games_of(scan.entries)) == 12


def test_cli_leaderboard_writes_exports(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json, out_csv, out_matrix = tmp_path / "board.json", tmp_path / "board.csv", tmp_path / "matrix.csv"
    args = ["leaderboard", "--results", str(results), "--recordings", str(tmp_path / "none"), "--min-battles", "1",
            "--json", str(out_json), "--csv", str(out_csv), "--matrix-csv", str(out_matrix)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "12 battles" in printed and str(results / INDEX_FILE) in printed
    data = json.loads(out_json.read_text())
    assert [r["policy"] for r in data["rows"]] == [line.split(",")[0] for line in out_csv.read_text().splitlines()[1:]]
    assert len(out_matrix.read_text().splitlines()) == 4
    assert main([*args[:5], "--since", "yesterday"]) == 2
    assert "ISO date" in capsys.readouterr().err
    assert (tournament_dir(results, TOURNAMENTS[0]) / RESULTS_FILE).exists()  # nothing of the history was touched



def test_imported_recordings_are_left_out_as_unrated_not_as_unreadable(tmp_path: Path, capsys) -> None:
    """An imported battle has no seed and no known policies: the scan called it unreadable before, and counting it
    would rate a blank policy name (a crash in the rating fit)."""
    data = Path(__file__).resolve().parent / "data" / "interop"
    out = tmp_path / "recordings"
    assert main(["import", str(data / "replay_battle.json"), str(data / "showdown_replay.json"), "--out", str(out)]) == 0
    written = sorted(capsys.readouterr().out.split())
    scan = scan_history(None, [out])
    assert scan.skipped == [] and scan.entries == [] and scan.unrated == written
    assert main(["leaderboard", "--results", str(tmp_path / "results"), "--recordings", str(out),
                 "--min-battles", "1"]) == 0
    err = capsys.readouterr().err
    assert "2 recording(s) left out" in err and "not a readable" not in err
