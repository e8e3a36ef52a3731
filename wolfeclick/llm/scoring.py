"""Scoring legal actions: the log-probability of each candidate's text given the prompt, legal by construction.

One prefill per prompt (left-padded when several prompts share a pass; only the last position's logits are
computed), its KV cache repeated for that prompt's candidates, then one pass over all candidate tokens of all
prompts. The first candidate token is scored from the prefill's last logits, the others from the candidate pass.
Requests that use different LoRA adapters on one base share the same passes (peft's mixed-adapter batches).
"""

from __future__ import annotations

import inspect
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch

from wolfeclick.llm.names import BASE_ADAPTER

MAX_PASS_TOKENS = 48_000
"""Prompt tokens per prefill pass; bigger batches are split into several passes."""
LOGSOFTMAX_ELEMENTS = 64_000_000
"""Logits turned to float32 log-probabilities at a time (256 MB)."""


@dataclass
class ScoreRequest:
    prompt_ids: list[int]
    candidate_ids: list[list[int]]
    adapter: Any = None
    """The ``ResolvedModel`` of the adapter to score under, or None for the bare base."""


@dataclass
class ScoreResult:
    token_logprobs: list[list[float]]
    """Per candidate, the log-probability of each of its tokens."""
    batch_size: int = 1
    model_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def sums(self) -> list[float]:
        return [float(sum(t)) for t in self.token_logprobs]

    @property
    def means(self) -> list[float]:
        return [float(sum(t) / len(t)) if t else 0.0 for t in self.token_logprobs]


# ---------------------------------------------------------------------------------------------- forward helpers

_CACHE_KW: dict[type, str] = {}


def cache_keyword(model: Any) -> str:
    """transformers 5 names the cache argument ``cache``; older versions ``past_key_values``."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    kind = type(base)
    if kind not in _CACHE_KW:
        params = inspect.signature(base.forward).parameters
        _CACHE_KW[kind] = "cache" if "cache" in params else "past_key_values"
    return _CACHE_KW[kind]


def output_cache(output: Any) -> Any:
    cache = getattr(output, "cache", None)
    return cache if cache is not None else getattr(output, "past_key_values", None)


@contextmanager
def adapters_for(model: Any, names: list[str]) -> Iterator[dict[str, Any]]:
    """Run ``model`` with one adapter per row: one ``set_adapter`` when all rows agree, else ``adapter_names``."""
    if not hasattr(model, "peft_config"):
        yield {}
        return
    distinct = set(names)
    if distinct == {BASE_ADAPTER}:
        with model.disable_adapter():
            yield {}
    elif len(distinct) == 1:
        model.set_adapter(names[0])
        yield {}
    else:
        yield {"adapter_names": list(names)}


def model_device(model: Any) -> torch.device:
    return model.get_input_embeddings().weight.device


def left_pad(rows: list[list[int]], pad_id: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row):] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row):] = 1
    return ids.to(device), mask.to(device)


def prefill(model: Any, rows: list[list[int]], pad_id: int, adapter_kwargs: dict[str, Any]):
    """Left-padded prefill computing only the last position's logits. Returns (last logits, cache, mask, lengths)."""
    device = model_device(model)
    ids, mask = left_pad(rows, pad_id, device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1,
                **adapter_kwargs)
    lengths = torch.tensor([len(r) for r in rows], device=device)
    return out.logits[:, -1, :], output_cache(out), mask, lengths


# ------------------------------------------------------------------------------------------------------ scoring


@torch.inference_mode()
def score_rows(model: Any, requests: list[ScoreRequest], names: list[str], pad_id: int) -> list[list[list[float]]]:
    """Token log-probabilities of every candidate of every request, in as few passes as the batch allows."""
    if not requests:
        return []
    with adapters_for(model, names) as adapter_kwargs:
        last_logits, cache, mask, lengths = prefill(model, [r.prompt_ids for r in requests], pad_id, adapter_kwargs)
        first_logprobs = last_logits.float().log_softmax(-1)
        counts = [len(r.candidate_ids) for r in requests]
        rows = [(i, j, cand) for i, r in enumerate(requests) for j, cand in enumerate(r.candidate_ids)]
        device = model_device(model)
        index = torch.repeat_interleave(torch.arange(len(requests), device=device),
                                        torch.tensor(counts, device=device))
        # first tokens come straight from the prefill: one gather, one transfer
        first_tokens = torch.tensor([cand[0] for _, _, cand in rows], device=first_logprobs.device)
        firsts = first_logprobs[index.to(first_logprobs.device), first_tokens].tolist()
        results: list[list[list[float]]] = [[[] for _ in r.candidate_ids] for r in requests]
        for (i, j, _), value in zip(rows, firsts):
            results[i][j].append(value)
        width = max(len(cand) for _, _, cand in rows)
        if width > 1:
            cache.batch_select_indices(index)
            feed = torch.full((len(rows), width - 1), pad_id, dtype=torch.long)
            feed_mask = torch.zeros((len(rows), width - 1), dtype=torch.long)
            targets = torch.zeros((len(rows), width - 1), dtype=torch.long)
            for k, (_, _, cand) in enumerate(rows):
                if len(cand) > 1:
                    feed[k, : len(cand) - 1] = torch.tensor(cand[:-1], dtype=torch.long)
                    feed_mask[k, : len(cand) - 1] = 1
                    targets[k, : len(cand) - 1] = torch.tensor(cand[1:], dtype=torch.long)
            feed, feed_mask = feed.to(device), feed_mask.to(device)
            attention = torch.cat([mask[index], feed_mask], dim=1)
            positions = lengths[index].unsqueeze(1) + torch.arange(width - 1, device=device).unsqueeze(0)
            row_kwargs = dict(adapter_kwargs)
            if "adapter_names" in row_kwargs:
                row_kwargs["adapter_names"] = [names[i] for i, _, _ in rows]
            out = model(input_ids=feed, attention_mask=attention, position_ids=positions,
                        **{cache_keyword(model): cache}, use_cache=True, **row_kwargs)
            logits = out.logits
            targets = targets.to(logits.device)
            picked = torch.empty(targets.shape, dtype=torch.float32, device=logits.device)
            step = max(1, LOGSOFTMAX_ELEMENTS // max(1, logits.shape[1] * logits.shape[2]))
            for s in range(0, logits.shape[0], step):  # bounded float32 memory however large the batch
                chunk = logits[s : s + step].float().log_softmax(-1)
                picked[s : s + step] = chunk.gather(2, targets[s : s + step].unsqueeze(2)).squeeze(2)
            picked_rows = picked.tolist()
            for (i, j, cand), values in zip(rows, picked_rows):
                results[i][j].extend(values[: len(cand) - 1])
    return results


def score_requests(model: Any, requests: list[ScoreRequest], names: list[str], pad_id: int,
                   max_pass_tokens: int = MAX_PASS_TOKENS) -> list[list[list[float]]]:
    """``score_rows`` over passes of at most ``max_pass_tokens`` padded prompt tokens each."""
    out: list[list[list[float]]] = []
    start = 0
    while start < len(requests):
        end = start + 1
        while end < len(requests):
            width = max(len(r.prompt_ids) for r in requests[start:end + 1])
            if width * (end + 1 - start) > max_pass_tokens:
                break
            end += 1
        out.extend(score_rows(model, requests[start:end], names[start:end], pad_id))
        start = end
    return out


@torch.inference_mode()
def reference_scores(model: Any, prompt_ids: list[int], candidate_ids: list[list[int]],
                     adapter_name: str = BASE_ADAPTER) -> list[list[float]]:
    """The slow way, for checking: one full forward per candidate, no cache, no padding, no batching."""
    device = model_device(model)
    results = []
    ctx: AbstractContextManager[dict[str, Any]] = (adapters_for(model, [adapter_name]) if hasattr(model, "peft_config")
                                                    else nullcontext({}))
    with ctx as kwargs:
        for cand in candidate_ids:
            ids = torch.tensor([prompt_ids + cand], device=device)
            logits = model(input_ids=ids, **kwargs).logits[0].float().log_softmax(-1)
            start = len(prompt_ids)
            results.append([float(logits[start - 1 + t, tok]) for t, tok in enumerate(cand)])
    return results
