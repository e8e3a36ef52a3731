"""The racing benchmarks (racing against uniform K, live and from a cache of played battles) run end to end at their
smallest size, write one result and render their section (the other kinds: tests/test_benchmarks_smoke_*.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_helpers import SHORT_BATTLE_SEED, run_benchmark


def test_racing_live_smallest(tmp_path: Path) -> None:
    result = run_benchmark("racing_live", ["--k", "1", "--processes", "1", "--seed", str(SHORT_BATTLE_SEED)], tmp_path)
    rows = result.results["rows"]
    assert len(rows) == 7 and all(row["rollouts"] > 0 for row in rows)


def test_racing_smallest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = str(tmp_path / "cache")
    result = run_benchmark("racing", ["--battles", "0", "1", "--k", "2", "--processes", "1", "--cache", cache],
                           tmp_path)
    r = result.results
    assert len(r["battles"]) == 1 and 1 <= r["decisions"] <= 3 and len(r["variants"]) == 5
    assert all(v["racing_rollouts"] <= v["uniform_rollouts"] == 2 * r["options"] for v in r["variants"])
    from benchmarks import racing

    # a cache against itself: the same verdicts everywhere (and nothing played again)
    assert racing.main(["--battles", "0", "1", "--k", "2", "--cache", cache, "--against", cache]) == 0
    n = r["decisions"]
    assert f"same best option {n}/{n}, same mistake verdict {n}/{n}" in capsys.readouterr().out
