"""benchmarks.battles at its smallest size, in its four kinds of run (the race, WolfeClick and stock alternating, the
profile, the Python side alone): one result each, each rendered into its section. They play real battles, start a
stock Showdown server and run fresh interpreters (the battles and process tiers, tests/conftest.py FILE_TIERS)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import battles, harness


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
