"""Generating like the reference: k sampled completions per prompt, the first that names a legal action wins.

The reference (OpenEnv-WolfeClick's ``record_battle.py``) calls ``model.generate`` with ``num_return_sequences=4,
max_new_tokens=24, do_sample=True, temperature=0.3, top_p=0.95, top_k=20``. ``sample_requests`` draws from the
same distribution (temperature, then top-k, then top-p, in ``generate``'s order) with its own loop so that it can
(a) seed each request from the battle's own random generator — the same seed gives the same battle — and (b) run
requests from several battles (and adapters) in one batch. ``reference_generate`` is the plain ``generate`` call,
kept for the benchmark.
"""

from __future__ import annotations

import time
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


def filter_logits(logits: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """Temperature, then top-k, then top-p (nucleus), as ``generate``'s logits warpers apply them."""
    if temperature > 0:
        logits = logits / temperature
    if top_k and top_k > 0:
        k = min(int(top_k), logits.shape[-1])
        kth = torch.topk(logits, k, dim=-1).values[..., -1, None]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_logits, order = torch.sort(logits, descending=False, dim=-1)
        cumulative = sorted_logits.softmax(-1).cumsum(-1)
        remove = cumulative <= (1 - top_p)
        remove[..., -1:] = False  # always keep the most likely token
        logits = logits.masked_fill(remove.scatter(-1, order, remove), float("-inf"))
    return logits


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


@torch.inference_mode()
def reference_generate(model: Any, tokenizer: Any, prompt_text: str, *, samples: int = 4, max_new_tokens: int = 24,
                       temperature: float = 0.3, top_p: float = 0.95, top_k: int = 20) -> tuple[list[str], float]:
    """The reference's own call: ``model.generate`` on one prompt. Returns the decoded samples and seconds taken."""
    started = time.perf_counter()
    inputs = tokenizer(prompt_text, return_tensors="pt")
    inputs = {k: v.to(model_device(model)) for k, v in inputs.items()}
    outputs = model.generate(**inputs, max_new_tokens=max_new_tokens, num_return_sequences=samples, do_sample=True,
                             temperature=temperature, top_p=top_p, top_k=top_k, repetition_penalty=1.0,
                             pad_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    start = inputs["input_ids"].shape[1]
    texts = [tokenizer.decode(o[start:], skip_special_tokens=True) for o in outputs]
    return texts, time.perf_counter() - started
