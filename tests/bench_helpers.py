"""What the benchmarks' smoke tests share (tests/test_benchmarks_smoke_*.py, one file per kind of benchmark so that
xdist can run them on both workers): run one benchmark at its smallest size and check its result and section."""

from __future__ import annotations

import importlib
from pathlib import Path

from benchmarks import harness

SHORT_BATTLE_SEED = 13
"""The seed whose heuristic-vs-maxdamage gen9 battle the analysis benchmarks measure on in the smoke tests (their
``--seed``): a short battle, since every pass plays a rollout from each of its decisions to the end."""


def run_benchmark(name: str, argv: list[str], results: Path) -> harness.Result:
    """``benchmarks.NAME`` run end to end with ``argv``: it exits 0, saves one result with a measured run, and
    renders its section of docs/benchmarks.md."""
    module = importlib.import_module(f"benchmarks.{name}")
    assert module.main([*argv, "--results", str(results)]) == 0
    result = harness.latest(name, results)
    assert result is not None and result.run.wall_s > 0 and result.run.cpu_s > 0
    assert result.command.startswith(f".venv/bin/python -m benchmarks.{name} ")
    heading, text = harness.render(name, result)
    assert text.startswith(heading + "\n") and "Machine: " in text
    return result
