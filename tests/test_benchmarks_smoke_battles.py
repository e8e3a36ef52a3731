"""benchmarks.battles at its smallest size, in its four kinds of run (the race, WolfeClick and stock alternating, the
profile, the Python side alone), and benchmarks.sim_start (a fresh simulator with and without the compile cache):
one result each, each rendered into its section. They play real battles, start a stock Showdown server and run
fresh interpreters (the battles and process tiers, tests/conftest.py FILE_TIERS)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import battles, harness, sim_start


def _run(name: str, argv: list[str], results: Path) -> harness.Result:
    assert battles.main([*argv, "--results", str(results)]) == 0
    result = harness.latest(name, results)
    assert result is not None and result.run.wall_s > 0 and result.run.cpu_s > 0
    assert result.command.startswith(f".venv/bin/python -m benchmarks.{name} ")
    heading, text = harness.render(name, result, results)
    assert text.startswith(heading + "\n") and "Machine: " in text and text.endswith(f"`{result.command}`")
    return result


def test_battles_race_smallest(tmp_path: Path) -> None:
    result = _run("battles", ["--battles", "1", "--concurrency", "1", "--repeats", "1", "--warmup", "0",
                              "--processes", "1"], tmp_path)
    [row] = result.results["rows"]
    assert row["k"] == 1 and all(row[key] > 0 for key in ("turns_s", "replayed_turns_s", "bare_turns_s",
                                                           "stock_turns_s", "cpu_ms"))


def test_battles_alternate_smallest(tmp_path: Path) -> None:
    result = _run("battles_alternate", ["--alternate", "1", "--battles", "1", "--concurrency", "1", "--warmup", "0",
                                        "--sizing-warmup", "1", "--processes", "1"], tmp_path)
    [row] = result.results["rows"]
    assert result.results["simulators"] == 1 and len(row["rounds"]) == 1 and row["vs_stock_turns"] > 0


def test_battles_profile_and_python_smallest(tmp_path: Path) -> None:
    # each runs its checkout in a fresh interpreter (`python -P -m benchmarks.battles`, PYTHONPATH), as --baseline does
    result = _run("battles_profile", ["--profile", "1", "--profile-rounds", "1", "--warmup", "0",
                                      "--profile-concurrency", "1"], tmp_path)
    [column] = result.results["columns"]
    assert column["name"] == "after" and column["points"] > 0 and column["python_ms"] > 0
    result = _run("battles_python", ["--python", "1", "--python-rounds", "1", "--python-repeats", "1", "--warmup", "0",
                                     "--profile-concurrency", "1"], tmp_path)
    [column] = result.results["columns"]
    assert result.results["turns"] > 0 and column["median"] > 0 and column["instructions"] is None
    assert result.results["ratio_cpu"] is None


@pytest.mark.fresh_simulators  # it times fresh processes
def test_sim_start_smallest(tmp_path: Path) -> None:
    """One round of fresh simulators (from the snapshot, reading the compile cache, compiling everything) in one
    format: all play the same battle (else the run fails), the cached one compiled nothing, the snapshot one started
    from the snapshot."""
    before = {name: os.environ.get(name) for name in ("WOLFECLICK_CACHE", "WOLFECLICK_SHOWDOWN")}
    assert sim_start.main(["--starts", "1", "--formats", "gen4randombattle", "--results", str(tmp_path)]) == 0
    result = harness.latest("sim_start", tmp_path)
    assert result is not None and result.command.startswith(".venv/bin/python -m benchmarks.sim_start ")
    [row] = result.results["rows"]
    assert row["format"] == "gen4randombattle" and row["modules_read"] > 10 and result.results["cache_mb"] > 0
    assert all(row["kinds"][kind]["cpu_s"]["median"] > 0 for kind in ("snapshot", "cache", "none"))
    heading, text = harness.render("sim_start", result, tmp_path)
    assert text.startswith(heading + "\n") and "Machine: " in text
    assert {name: os.environ.get(name) for name in before} == before  # the run's own cache folder is put back
