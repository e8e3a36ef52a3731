"""The training env's benchmarks (steps per second against the runner and over serve-env, serve-env's memory over
episodes) run end to end at their smallest size, write one result and render their section (the other kinds:
tests/test_benchmarks_smoke_*.py). Both start serve-env as a subprocess."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_helpers import run_benchmark

pytestmark = pytest.mark.process


def test_env_smallest(tmp_path: Path) -> None:
    result = run_benchmark("env", ["--battles", "1", "--repeats", "1", "--in-flight", "1", "--server-battles", "1"],
                           tmp_path)
    [row] = result.results["rows"]
    # the env and the runner played the same battle (else the run fails), and so did both transports
    assert row["steps"] > 0 and [s["transport"] for s in result.results["server"]] == ["HTTP", "WebSocket"]
    assert len({s["steps"] for s in result.results["server"]}) == 1


def test_env_server_memory_smallest(tmp_path: Path) -> None:
    result = run_benchmark("env_server_memory", ["--episodes", "2", "--max-turns", "1", "--every", "1"], tmp_path)
    assert [p["episode"] for p in result.results["series"]] == [0, 1, 2] and result.results["steps"] > 0
