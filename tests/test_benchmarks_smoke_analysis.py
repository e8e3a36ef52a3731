"""The analysis benchmarks (lean and full rollouts, and Showdown alone replaying them) run end to end at their
smallest size, write one result and render their section (the other kinds: tests/test_benchmarks_smoke_*.py). Each
measures on the short battle of ``SHORT_BATTLE_SEED``: every pass plays a rollout from each decision to the end."""

from __future__ import annotations

from pathlib import Path

from tests.bench_helpers import SHORT_BATTLE_SEED, run_benchmark

SEED = str(SHORT_BATTLE_SEED)


def test_simulator_smallest(tmp_path: Path) -> None:
    result = run_benchmark("simulator", ["--k", "1", "--processes", "1", "--concurrency", "8", "--seed", SEED], tmp_path)
    r = result.results
    # every rollout replayed by Showdown alone ended with the winner the analysis saw (else the run fails)
    assert [r["options"]["alone"][-1]["rollouts"], r["pass"]["alone"][-1]["rollouts"]] == [r["choices"] + 1,
                                                                                          r["decisions"]]


def test_analysis_smallest(tmp_path: Path) -> None:
    result = run_benchmark("analysis", ["--k", "1", "--compare-k", "1", "--processes", "1", "--seed", SEED], tmp_path)
    r = result.results
    assert r["lean"]["rollouts"] == r["lean"]["decisions"] and r["lean"]["options_s"] > 0
    assert all(r[name]["rollouts"] == r["lean"]["decisions"] for name in ("lean-fork", "lean-replay", "full-fork"))


def test_analysis_full_smallest(tmp_path: Path) -> None:
    result = run_benchmark("analysis_full", ["--k", "1", "--seed", SEED], tmp_path)
    assert [result.results[name]["rollouts"] for name in ("fork", "replay")] == [result.results["fork"]["decisions"]] * 2
