"""The benchmarks of what decides and values (checkpoint rescoring, LLM decoding, the value model, the simulator's own
policies) run end to end at their smallest size, write one result and render their section (the other kinds:
tests/test_benchmarks_smoke_*.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_helpers import run_benchmark


@pytest.mark.torch
def test_rescore_smallest(tmp_path: Path) -> None:
    result = run_benchmark("rescore", ["--battles", "1", "--max-turns", "4", "--concurrency", "1"], tmp_path)
    rows = result.results["rows"]
    assert [row["asked"] for row in rows] == ["replay only (random asked)", "tiny checkpoint, score mode"]
    assert all(row["decisions"] > 0 for row in rows)


@pytest.mark.torch
def test_llm_smallest(tmp_path: Path) -> None:
    import torch

    threads = torch.get_num_threads()
    try:
        result = run_benchmark("llm", ["--shape", "tiny", "--device", "cpu", "--decisions", "3", "--warmup", "1",
                                       "--batch", "4", "--threads", "1", "--skip-hf", "--workdir",
                                       str(tmp_path / "model")], tmp_path)
    finally:
        torch.set_num_threads(threads)
    report = result.results
    results = report["results"]
    assert {"score", "score x4", "generate", "generate x4", "batcher x4"} <= set(results)
    assert report["score_check_max_abs_diff"] < 1e-4
    assert report["score_not_slower_than_generate"] in (True, False)  # timed: reported, not asserted here
    assert results["batcher x4"]["mean_batch"] >= 1.0


def test_value_model_smallest(tmp_path: Path) -> None:
    result = run_benchmark("value_model", ["--battles", "1", "--repeats", "1", "--cold", "1"], tmp_path)
    assert len(result.results["rows"]) == 4 + 2 + 1 and len(result.results["cold"]["runs"]) == 1


def test_sim_policies_smallest(tmp_path: Path) -> None:
    result = run_benchmark("sim_policies", ["--battles", "1", "--python", "1"], tmp_path)
    assert [(row["side"], row["battles"]) for row in result.results["rows"]] == [("sim", 1)] * 3 + [("python", 1)] * 3
