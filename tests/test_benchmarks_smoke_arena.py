"""The arena's benchmarks (tournaments, the leaderboard, the ladder, the Ray engine) run end to end at their smallest
size, write one result and render their section (the other kinds: tests/test_benchmarks_smoke_*.py). They play real
battles (the tiers: tests/conftest.py), so they are not in `make test-fast`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_helpers import run_benchmark


def test_leaderboard_smallest(tmp_path: Path) -> None:
    result = run_benchmark("leaderboard", ["--rows", "10", "--repeats", "1", "--pairs", "1"], tmp_path)
    assert result.results["played"] == 6 and result.results["rows"] == 12 and result.results["tournaments"] == 2


def test_tournament_smallest(tmp_path: Path) -> None:
    result = run_benchmark("tournament", ["--pairs", "1", "--repeats", "1", "--concurrency", "1"], tmp_path)
    assert result.results["battles"] == 6 and [row["concurrency"] for row in result.results["rows"]] == [1]
    from wolfeclick.arena import tournament

    # the layer's functions were timed through wrappers while measuring, and are its own again
    assert all(getattr(tournament, name).__module__.startswith("wolfeclick.") for name in ("result_row", "_persist"))


def test_ladder_smallest(tmp_path: Path) -> None:
    result = run_benchmark("ladder", ["--battles", "1", "--repeats", "1", "--lean"], tmp_path)
    runs = result.results["runs"]
    assert [len(runs["embedded"]), len(runs["ladder"])] == [1, 1] and all(run[1] > 0 for run in runs["ladder"])


@pytest.mark.ray
def test_ray_tournament_smallest(tmp_path: Path) -> None:
    result = run_benchmark("ray_tournament", ["--pairs", "1", "--repeats", "1", "--concurrency", "2", "--workers", "1"],
                           tmp_path)
    r = result.results
    # every run's results.jsonl was byte-identical (else the run fails)
    assert r["battles"] == 6 and set(r["best"]) == {"local", "ray"} and [s["count"] for s in r["scale"]] == [1]
