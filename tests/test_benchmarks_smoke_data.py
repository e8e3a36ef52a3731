"""The benchmarks of what battles leave behind (recording sizes, importing protocol and server logs) run end to end
at their smallest size, write one result and render their section (the other kinds: tests/test_benchmarks_smoke_*.py)."""

from __future__ import annotations

from pathlib import Path

from tests.bench_helpers import run_benchmark


def test_recording_size_smallest(tmp_path: Path) -> None:
    result = run_benchmark("recording_size", ["--battles", "1", "--repeats", "1", "--formats", "gen9randombattle"],
                           tmp_path)
    [row] = result.results["rows"]
    assert row["battles"] == 1 and 0 < row["gzip_bytes"] < row["plain_bytes"]


def test_import_logs_smallest(tmp_path: Path) -> None:
    result = run_benchmark("import_logs", ["--n", "2", "--server-n", "2", "--distinct", "1", "--workers", "2"], tmp_path)
    rows = result.results["rows"]
    assert [(row["files"], row["output"]) for row in rows] == [
        ("protocol logs", "–"), ("protocol logs", "same bytes"), ("server logs", "–"), ("server logs", "same bytes")]
    assert all(row["result"].startswith(f"imported {row['n']} of {row['n']} files") for row in rows)
    assert "re-simulated 2 server logs" in rows[-1]["result"]


def test_public_views_smallest(tmp_path: Path) -> None:
    result = run_benchmark("public_views", ["--battles", "1", "--formats", "gen9randombattle", "--cache",
                                            str(tmp_path / "cache")], tmp_path)
    [(fmt, row)] = result.results["formats"].items()
    assert fmt == "gen9randombattle" and row["battles"] == 1 and row["decisions"] > 0
    assert 0 <= row["action_equal"] <= 1 and row["unaligned_decisions"] == 0
