"""Loading, scoring and sampling on the tiny checkpoint: the real code paths, no downloads."""

from __future__ import annotations

import os
import threading

import pytest
import torch

from wolfeclick.llm import loading
from wolfeclick.llm.checkpoint_specs import CheckpointError, parse_spec, resolve_checkpoint
from wolfeclick.llm.generation import GenerateRequest, draw_tokens, sample_requests
from wolfeclick.llm.loading import BASE_ADAPTER, MODEL_CACHE, ModelCache
from wolfeclick.llm.scoring import ScoreRequest, reference_scores, score_requests

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def checkpoint(spec: str):
    return resolve_checkpoint(parse_spec(spec))


def prompt(length: int, salt: int = 0) -> list[int]:
    return [3 + (i * 7 + salt) % 690 for i in range(length)]


CANDIDATES = [[40, 41, 42, 43, 44], [40, 41, 90], [40, 41, 42, 200, 201, 202, 203], [500]]


def test_device_and_quant_choice() -> None:
    assert loading.choose_device(None) == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert loading.choose_quant(None, "cpu") == "none" and loading.choose_quant(None, "cuda:0") == "nf4"
    with pytest.raises(CheckpointError, match="unknown quantisation"):
        loading.choose_quant("fp3", "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(CheckpointError, match="no CUDA device"):
            loading.choose_device("cuda")
    config = loading.quantization_config("nf4", "cuda:0")
    assert config.load_in_4bit and config.bnb_4bit_quant_type == "nf4"
    assert config.bnb_4bit_compute_dtype == torch.bfloat16


def test_batched_shared_cache_scores_equal_separate_scores(tiny_checkpoint) -> None:
    base = str(tiny_checkpoint)
    handle_a = MODEL_CACHE.get(checkpoint(f"llm:{base}/adapters/a"))
    handle_b = MODEL_CACHE.get(checkpoint(f"llm:{base}+{base}/adapters/b"))
    handle_0 = MODEL_CACHE.get(checkpoint(f"llm:{base}"))
    entry = handle_a.entry
    assert handle_b.entry is entry and handle_0.entry is entry  # one base in memory for all three
    requests = [
        ScoreRequest(prompt(120), CANDIDATES, handle_a.checkpoint.adapter),
        ScoreRequest(prompt(37, 5), CANDIDATES[:2], handle_b.checkpoint.adapter),
        ScoreRequest(prompt(80, 9), CANDIDATES[1:], None),
    ]
    names = [handle_a.adapter, handle_b.adapter, BASE_ADAPTER]
    batched = score_requests(entry.model, requests, names, pad_id=0)
    for request, name, got in zip(requests, names, batched):
        want = reference_scores(entry.model, request.prompt_ids, request.candidate_ids, name)
        for got_tokens, want_tokens in zip(got, want):
            assert len(got_tokens) == len(want_tokens)
            assert max(abs(g - w) for g, w in zip(got_tokens, want_tokens)) < 1e-4
    # the adapters really change the model
    a = reference_scores(entry.model, prompt(50), CANDIDATES, handle_a.adapter)
    b = reference_scores(entry.model, prompt(50), CANDIDATES, handle_b.adapter)
    assert max(abs(sum(x) - sum(y)) for x, y in zip(a, b)) > 1e-2
    # tiny passes: split into several prefills, same answers
    split = score_requests(entry.model, requests, names, pad_id=0, max_pass_tokens=100)
    assert all(abs(x - y) < 1e-4 for r1, r2 in zip(batched, split) for c1, c2 in zip(r1, r2) for x, y in zip(c1, c2))


def test_nf4_on_cpu_loads_scores_and_samples(tiny_checkpoint) -> None:
    handle = ModelCache().get(checkpoint(f"llm:{tiny_checkpoint}/adapters/a"), device="cpu", quant="nf4")
    model = handle.entry.model
    assert handle.entry.quant == "nf4" and any(type(m).__name__ == "Linear4bit" for m in model.modules())
    request = ScoreRequest(prompt(60), CANDIDATES, handle.checkpoint.adapter)
    got = score_requests(model, [request], [handle.adapter], pad_id=0)[0]
    want = reference_scores(model, request.prompt_ids, request.candidate_ids, handle.adapter)
    assert max(abs(sum(g) - sum(w)) for g, w in zip(got, want)) < 5e-3  # 4-bit kernels differ a little by shape
    assert max(range(4), key=lambda i: sum(got[i])) == max(range(4), key=lambda i: sum(want[i]))
    samples = sample_requests(model, [GenerateRequest(prompt(30), samples=2, max_new_tokens=5, seed=1)],
                              [handle.adapter], pad_id=0, stop_ids=set())
    assert len(samples[0]) == 2 and all(len(s) == 5 for s in samples[0])


def test_cache_is_bounded_and_loads_once_across_threads(tiny_checkpoint, monkeypatch, tmp_path) -> None:
    loads = []
    real = loading._load_base

    def counting(base, device, quant):
        loads.append((str(base.path), quant))
        return real(base, device, quant)

    monkeypatch.setattr(loading, "_load_base", counting)
    cache = ModelCache(max_bases=1, max_adapters=1)
    ckpt = checkpoint(f"llm:{tiny_checkpoint}/adapters/a")
    handles = []
    threads = [threading.Thread(target=lambda: handles.append(cache.get(ckpt))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and len({id(h.entry) for h in handles}) == 1 and len(cache) == 1
    # a second adapter on the same base replaces the first (max_adapters=1) without reloading the base
    other = cache.get(checkpoint(f"llm:{tiny_checkpoint}+{tiny_checkpoint}/adapters/b"))
    assert other.entry is handles[0].entry and len(loads) == 1 and len(other.entry.adapters) == 1
    # a second base (here: same folder, other quantisation) evicts the least recently used one
    cache.get(ckpt, quant="nf4")
    assert len(cache) == 1 and len(loads) == 2 and cache.entries()[0].quant == "nf4"


def test_sampling_filters_match_generate_semantics() -> None:
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    torch.manual_seed(0)
    logits = torch.randn(3, 200) * 3
    hf = TopPLogitsWarper(0.95)(None, TopKLogitsWarper(20)(None, TemperatureLogitsWarper(0.3)(None, logits.clone())))
    # draw_tokens (the sampler sample_requests uses) only ever draws tokens that survive generate's filters
    params = [GenerateRequest([], temperature=0.3, top_k=20, top_p=0.95)] * 3
    allowed = torch.isfinite(hf)
    for seed in range(30):
        drawn = draw_tokens(logits, params, [torch.Generator().manual_seed(seed + i) for i in range(3)])
        assert all(bool(allowed[i, t]) for i, t in enumerate(drawn))
    greedy = draw_tokens(logits, [GenerateRequest([], temperature=0.0)] * 3, [torch.Generator()] * 3)
    assert greedy == logits.argmax(-1).tolist()


def test_sampling_is_seeded_and_batch_independent(tiny_checkpoint) -> None:
    handle = MODEL_CACHE.get(checkpoint(f"llm:{tiny_checkpoint}/adapters/a"))
    model = handle.entry.model
    one = GenerateRequest(prompt(40), samples=3, max_new_tokens=8, temperature=1.0, top_k=0, top_p=1.0, seed=7,
                          adapter=handle.checkpoint.adapter)
    other = GenerateRequest(prompt(25, 3), samples=2, max_new_tokens=8, temperature=1.0, top_k=0, top_p=1.0, seed=8)
    alone = sample_requests(model, [one], [handle.adapter], pad_id=0, stop_ids=set())[0]
    together = sample_requests(model, [other, one], [BASE_ADAPTER, handle.adapter], pad_id=0, stop_ids=set())[1]
    assert alone == together  # a battle's samples do not depend on who else is in the batch
    assert len({tuple(s) for s in alone}) > 1  # the samples differ from each other
    reseeded = GenerateRequest(**{**one.__dict__, "seed": 8})
    assert sample_requests(model, [reseeded], [handle.adapter], pad_id=0, stop_ids=set())[0] != alone
