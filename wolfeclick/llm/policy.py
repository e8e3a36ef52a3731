"""``LLMPolicy``: a checkpoint playing through a prompt profile, in ``score`` or ``generate`` mode.

- ``score`` (default): every legal action's answer text is scored by its log-probability given the prompt (plus the
  end-of-turn token), from one shared prefill; the best is played (or one is drawn from ``softmax(score / T)`` with
  the battle's own random generator when ``temperature > 0``). Never illegal.
- ``generate``: the reference's behaviour — k sampled completions (k=4, 24 new tokens, temperature 0.3, top-p 0.95,
  top-k 20), the first that names a legal action is played; if none does, the seeded fallback is played and the
  decision is flagged illegal (the reward layer charges −10 for it). Each sample is read by the ``parser`` mode
  (``tolerant``, the default, or ``reference``: exactly what the reference's harness accepted; see
  ``wolfeclick.game.actions``) against the options the prompt listed.

Every decision records, in ``Decision.info`` (→ ``SideDecision.policy_info``): ``profile``, the exact chat-templated
``prompt``, ``mode``, ``prompt_tokens``, ``new_tokens``, ``candidates`` with their scores (score mode) or
``samples`` and ``parser`` (generate mode), ``model_ms``, ``queue_ms``, ``batch_size`` and ``latency_ms``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from wolfeclick.game.actions import DEFAULT_PARSER, PARSER_MODES, parse_action
from wolfeclick.game.prompts import Candidate, Profile, make_profile
from wolfeclick.llm.chat import chat_prompt
from wolfeclick.llm.checkpoint_specs import (
    REFERENCE_SAMPLING,
    CheckpointError,
    ResolvedCheckpoint,
    is_llm_spec,
    resolve_checkpoint,
)
from wolfeclick.llm.checks import checked_checkpoint
from wolfeclick.llm.generation import GenerateRequest
from wolfeclick.llm.loading import ModelHandle, model_cache
from wolfeclick.llm.scoring import ScoreRequest
from wolfeclick.policies.base import Decision, Observation, fallback_decision
from wolfeclick.sim.protocol import is_random_format

MODES = ("score", "generate")
NORMS = ("sum", "mean")

__all__ = ["LLMPolicy", "make_llm_policy", "is_llm_spec", "CheckpointError"]


class LLMPolicy:
    """A language-model checkpoint as a policy. ``blocking``: the runner calls ``decide`` from a worker thread."""

    blocking = True

    def __init__(self, spec: str, handle: ModelHandle, profile: Profile, *, mode: str = "score",
                 temperature: float = 0.0, norm: str = "sum", sampling: dict[str, Any] | None = None,
                 parser: str = DEFAULT_PARSER) -> None:
        if mode not in MODES:
            raise CheckpointError(f"unknown decoding mode {mode!r} (expected score or generate)")
        if norm not in NORMS:
            raise CheckpointError(f"unknown score normalisation {norm!r} (expected sum or mean)")
        if temperature < 0:
            raise CheckpointError("temperature must be >= 0")
        if parser not in PARSER_MODES:
            raise CheckpointError(f"unknown parser mode {parser!r} (expected {' or '.join(PARSER_MODES)})")
        self.spec = spec
        self.handle = handle
        self.profile = profile
        self.mode = mode
        self.temperature = float(temperature)
        self.norm = norm
        self.sampling = dict(REFERENCE_SAMPLING, **(sampling or {}))
        self.parser = parser
        self.end_ids = self._end_ids()

    # ------------------------------------------------------------------------------------------------ metadata

    @property
    def checkpoint(self) -> ResolvedCheckpoint:
        return self.handle.checkpoint

    def metadata(self) -> dict[str, Any]:
        ckpt = self.checkpoint
        entry = self.handle.entry
        preset = ckpt.spec.preset
        meta: dict[str, Any] = {
            "kind": "llm",
            "spec": self.spec,
            "checkpoint": ckpt.label(),
            "base": ckpt.base.describe(),
            "adapter": ckpt.adapter.describe() if ckpt.adapter else None,
            "preset": preset.name if preset else None,
            "trained_format": preset.format if preset else None,
            "quant": entry.quant,
            "device": entry.device,
            "dtype": entry.dtype,
            "profile": self.profile.name,
            "mode": self.mode,
        }
        if self.mode == "score":
            meta.update(temperature=self.temperature, norm=self.norm)
        else:
            meta["sampling"] = dict(self.sampling)
            meta["parser"] = self.parser
        if entry.notice:
            meta["notice"] = entry.notice
        return meta

    # ------------------------------------------------------------------------------------------------ deciding

    def _end_ids(self) -> list[int]:
        tokenizer = self.handle.tokenizer
        return [int(tokenizer.eos_token_id)] if tokenizer.eos_token_id is not None else []

    def candidate_ids(self, prompt_text: str, candidates: list[Candidate],
                      prompt_ids: list[int] | None = None) -> list[list[int]]:
        """Each candidate's tokens as they follow the prompt (tokenised together, so the boundary is right),
        then the end-of-turn token."""
        tokenizer = self.handle.tokenizer
        with self.handle.entry.tokenizer_lock:
            if prompt_ids is None:
                prompt_ids = list(tokenizer(prompt_text).input_ids)
            joined = tokenizer([prompt_text + c.text for c in candidates]).input_ids
        out = []
        for cand, ids in zip(candidates, joined):
            if ids[: len(prompt_ids)] == prompt_ids:
                tokens = ids[len(prompt_ids):]
            else:  # a merge across the boundary: fall back to the answer alone
                with self.handle.entry.tokenizer_lock:
                    tokens = tokenizer(cand.text, add_special_tokens=False).input_ids
            out.append(list(tokens) + self.end_ids)
        return out

    def format_note(self, format_id: str) -> str | None:
        """One line when this profile plays outside what it was trained on: every profile here (v1 included) was
        made for random battles, so a given-team format (``gen9ou``…) is outside it; the recording says so."""
        if is_random_format(format_id):
            return None
        return (f"profile {self.profile.name} was trained on random battles, not {format_id}: "
                "it plays here outside its trained format")

    def decide(self, observation: Observation) -> Decision:
        note = self.format_note(observation.format)
        if observation.request.get("teamPreview"):
            return self._preview(observation, note)
        decision = self._decide(observation)
        if note:
            decision.info["format_note"] = note
        return decision

    def _preview(self, observation: Observation, note: str | None) -> Decision:
        """Team preview, by the documented default: lead with the team's first Pokémon (the rest keep their order).
        No profile has a preview prompt (none was trained on one), so the model is not asked."""
        allowed = observation.allowed()
        info: dict[str, Any] = {"profile": self.profile.name, "mode": "preview-default",
                                "note": "team preview: the default lead (the first Pokémon of the team), model not asked"}
        if note:
            info["format_note"] = note
        return Decision(action=allowed[0] if allowed else None, info=info)

    def _decide(self, observation: Observation) -> Decision:
        started = time.perf_counter()
        legal = observation.allowed()
        if not legal:
            return Decision(action=None, info={"note": "no legal action to choose from", "mode": self.mode})
        if len(legal) != len(observation.legal_actions):
            observation = _with_legal(observation, legal)
        tokenizer = self.handle.tokenizer
        prompt = chat_prompt(self.profile, tokenizer, observation)
        with self.handle.entry.tokenizer_lock:
            prompt_ids = list(tokenizer(prompt.text).input_ids)
        info: dict[str, Any] = {"profile": prompt.profile, "mode": self.mode, "prompt": prompt.text,
                                "prompt_tokens": len(prompt_ids)}
        batcher = self.handle.entry.batcher()
        client = id(observation.battle)
        if self.mode == "score":
            decision = self._score(observation, prompt.candidates, prompt.text, prompt_ids, batcher, client, info)
        else:
            decision = self._generate(observation, legal, prompt.candidates, prompt_ids, batcher, client, info)
        info["latency_ms"] = round((time.perf_counter() - started) * 1000.0, 3)
        decision.info = info
        return decision

    def _score(self, observation: Observation, candidates: list[Candidate], prompt_text: str, prompt_ids: list[int],
               batcher: Any, client: Any, info: dict[str, Any]) -> Decision:
        cand_ids = self.candidate_ids(prompt_text, candidates, prompt_ids)
        result = batcher.run(ScoreRequest(prompt_ids, cand_ids, self.checkpoint.adapter), client)
        sums, means = result.sums, result.means
        keys = sums if self.norm == "sum" else means
        if self.temperature > 0:
            top = max(keys)
            weights = [math.exp((k - top) / self.temperature) for k in keys]
            index = observation.rng.choices(range(len(candidates)), weights=weights)[0]
        else:
            index = max(range(len(candidates)), key=lambda i: (keys[i], -i))
        info.update(
            candidates=[{"action": c.action.kind, "choice": c.choice, "logprob": round(s, 6),
                         "mean_logprob": round(m, 6), "tokens": len(t)}
                        for c, s, m, t in zip(candidates, sums, means, cand_ids)],
            chosen=index, norm=self.norm, temperature=self.temperature,
            new_tokens=sum(len(t) for t in cand_ids), model_ms=round(result.model_ms, 3),
            queue_ms=result.extra.get("queue_ms", 0.0), batch_size=result.batch_size,
        )
        chosen = candidates[index]
        return Decision(action=chosen.action, raw_output=chosen.text)

    def _generate(self, observation: Observation, legal: list[Any], candidates: list[Candidate], prompt_ids: list[int],
                  batcher: Any, client: Any, info: dict[str, Any]) -> Decision:
        s = self.sampling
        seed = observation.rng.getrandbits(63)
        request = GenerateRequest(prompt_ids, samples=int(s["samples"]), max_new_tokens=int(s["max_new_tokens"]),
                                  temperature=float(s["temperature"]), top_p=float(s["top_p"]), top_k=int(s["top_k"]),
                                  seed=seed, adapter=self.checkpoint.adapter)
        result = batcher.run(request, client)
        tokenizer = self.handle.tokenizer
        with self.handle.entry.tokenizer_lock:
            texts = [tokenizer.decode(ids, skip_special_tokens=True) for ids in result.token_ids]
        info.update(samples=texts, sampling=dict(s), seed=seed, parser=self.parser,
                    new_tokens=sum(len(ids) for ids in result.token_ids), model_ms=round(result.model_ms, 3),
                    queue_ms=result.extra.get("queue_ms", 0.0), batch_size=result.batch_size)
        reasons = []
        listed = [(c.action, c.choice) for c in candidates]
        for n, text in enumerate(texts):
            parsed = parse_action(text, legal, mode=self.parser, listed=listed)
            if parsed.legal:
                info["chosen_sample"] = n
                return Decision(action=parsed.action, raw_output=text)
            reasons.append(parsed.reason or "no action")
        reason = f"no sample named a legal action ({'; '.join(dict.fromkeys(reasons))})"
        info["chosen_sample"] = None
        return fallback_decision(observation, reason, raw_output=texts[0] if texts else None)


def _with_legal(observation: Observation, legal: list[Any]) -> Observation:
    from dataclasses import replace

    return replace(observation, legal_actions=legal)


# ------------------------------------------------------------------------------------------------- building


def make_llm_policy(spec: str, *, cache: Any = None, **options: Any) -> LLMPolicy:
    """Resolve, load (through the shared cache) and wrap the checkpoint a spec names.

    ``options`` are the checkpoint options (``wolfeclick.llm.checkpoint_specs.CHECKPOINT_OPTIONS``: mode, quant, profile,
    temperature, …; None means "not given"); a misspelt or mistyped one is refused, never dropped. ``cache`` is
    where the model comes from: ``model_cache()`` (this process) unless another object with the same
    ``get(checkpoint, device=…, quant=…) -> ModelHandle`` is given (the Ray engine's model-server client).

    Options written in the spec (``llm:…?mode=generate&quant=nf4``) win over these arguments, so one command line
    can pit differently configured checkpoints against each other. Raises ``CheckpointError`` (one line).
    """
    parsed, o = checked_checkpoint(spec, **options)
    mode, quant, device, temperature, norm, parser = (o["mode"], o["quant"], o["device"], o["temperature"], o["norm"],
                                                      o["parser"])
    profile_name = o["profile"] or (parsed.preset.profile if parsed.preset else None)
    sampling = {"samples": o["samples"], "max_new_tokens": o["max_new_tokens"], "temperature": o["gen_temperature"],
                "top_p": o["top_p"], "top_k": o["top_k"]}
    profile_obj = make_profile(profile_name)  # checked_checkpoint has refused an unknown one already
    checkpoint = resolve_checkpoint(parsed)
    handle = (cache if cache is not None else model_cache()).get(checkpoint, device=device, quant=quant)
    return LLMPolicy(spec.strip(), handle, profile_obj, mode=mode, temperature=temperature, norm=norm,
                     sampling=sampling, parser=parser)
