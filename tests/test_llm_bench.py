"""The benchmark script runs end to end on CPU with the tiny shape, and scoring is not slower than generating."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import torch

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_llm.py"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_bench_script_tiny_cpu(tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("bench_llm", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    threads = torch.get_num_threads()
    try:
        report = bench.run(bench.parse_args([
            "--shape", "tiny", "--device", "cpu", "--decisions", "3", "--warmup", "1", "--batch", "4",
            "--threads", "1", "--skip-hf", "--workdir", str(tmp_path),
        ]))
    finally:
        torch.set_num_threads(threads)
    results = report["results"]
    assert {"score", "score x4", "generate", "generate x4", "batcher x4"} <= set(results)
    assert report["score_check_max_abs_diff"] < 1e-4
    # one prefill + one short pass vs. a prefill + 24 sampled steps for 4 samples
    assert results["score"]["median"] <= results["generate"]["median"]
    assert report["score_not_slower_than_generate"]
    assert results["batcher x4"]["mean_batch"] >= 1.0
