"""Generating like the reference: k sampled completions per prompt, the first that names a legal action wins.

The reference (OpenEnv-WolfeClick's ``record_battle.py``) calls ``model.generate`` with ``num_return_sequences=4,
max_new_tokens=24, do_sample=True, temperature=0.3, top_p=0.95, top_k=20``. ``sample_requests`` draws from the
same distribution (temperature, then top-k, then top-p, in ``generate``'s order) with its own loop so that it can
(a) seed each request from the battle's own random generator — the same seed gives the same battle — and (b) run
requests from several battles (and adapters) in one batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from wolfeclick.llm.scoring import adapters_for, cache_keyword, model_device, prefill


@dataclass
class GenerateRequest:
    prompt_ids: list[int]
    samples: int = 4
    max_new_tokens: int = 24
    temperature: float = 0.3
    top_p: float = 0.95
    top_k: int = 20
    seed: int = 0
    adapter: Any = None


@dataclass
class GenerateResult:
    token_ids: list[list[int]]
    """Per sample, the generated tokens (without the end token)."""
    batch_size: int = 1
    model_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def draw_tokens(logits: torch.Tensor, params: list[GenerateRequest], generators: list[torch.Generator]) -> list[int]:
    """One token per row: greedy at temperature 0, else temperature → top-k → top-p, drawn with the row's generator.

    Only the top-k logits leave the device, so a step costs one small transfer however large the vocabulary.
    """
    out = [0] * len(params)
    groups: dict[tuple[float, int, float], list[int]] = {}
    for row, p in enumerate(params):
        groups.setdefault((float(p.temperature), int(p.top_k or 0), float(p.top_p)), []).append(row)
    for (temperature, top_k, top_p), rows in groups.items():
        block = logits[rows]
        if temperature <= 0:
            for row, token in zip(rows, block.argmax(-1).tolist()):
                out[row] = int(token)
            continue
        k = top_k if 0 < top_k < block.shape[-1] else block.shape[-1]
        values, indices = torch.topk(block / temperature, k, dim=-1)  # sorted, most likely first
        probs = values.softmax(-1)
        if top_p < 1.0:
            before = probs.cumsum(-1) - probs  # mass of the more likely tokens
            keep = before < top_p
            keep[:, 0] = True
            probs = probs * keep
        probs, indices = probs.cpu(), indices.cpu()
        for n, row in enumerate(rows):
            choice = int(torch.multinomial(probs[n], 1, generator=generators[row]))
            out[row] = int(indices[n, choice])
    return out


@torch.inference_mode()
def sample_requests(model: Any, requests: list[GenerateRequest], names: list[str], pad_id: int,
                    stop_ids: set[int]) -> list[list[list[int]]]:
    """Sampled continuations for every request (``samples`` each), stopping at any of ``stop_ids``."""
    if not requests:
        return []
    device = model_device(model)
    with adapters_for(model, names) as adapter_kwargs:
        last_logits, cache, mask, lengths = prefill(model, [r.prompt_ids for r in requests], pad_id, adapter_kwargs)
        owners = [i for i, r in enumerate(requests) for _ in range(r.samples)]
        index = torch.tensor(owners, device=device)
        cache.batch_select_indices(index)
        mask = mask[index]
        positions = lengths[index]
        logits = last_logits[index].float()
        generators = []
        for r in requests:
            g = torch.Generator(device="cpu")
            g.manual_seed(int(r.seed) & 0x7FFF_FFFF_FFFF_FFFF)
            generators.append(g)
        row_kwargs = dict(adapter_kwargs)
        if "adapter_names" in row_kwargs:
            row_kwargs["adapter_names"] = [names[i] for i in owners]
        steps = max(r.max_new_tokens for r in requests)
        out_tokens: list[list[int]] = [[] for _ in owners]
        done = [False] * len(owners)
        for step in range(steps):
            drawn = draw_tokens(logits, [requests[o] for o in owners], [generators[o] for o in owners])
            next_tokens = []
            for row, owner in enumerate(owners):
                token = drawn[row]
                if done[row] or step >= requests[owner].max_new_tokens:
                    done[row] = True
                    next_tokens.append(pad_id)
                    continue
                if token in stop_ids:
                    done[row] = True
                else:
                    out_tokens[row].append(token)
                next_tokens.append(token)
            if all(done) or step == steps - 1:
                break
            feed = torch.tensor(next_tokens, device=device).unsqueeze(1)
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
            out = model(input_ids=feed, attention_mask=mask, position_ids=positions.unsqueeze(1),
                        **{cache_keyword(model): cache}, use_cache=True, **row_kwargs)
            cache = out.cache if getattr(out, "cache", None) is not None else cache
            positions = positions + 1
            logits = out.logits[:, -1, :].float()
    grouped: list[list[list[int]]] = [[] for _ in requests]
    for row, owner in enumerate(owners):
        grouped[owner].append(out_tokens[row])
    return grouped
