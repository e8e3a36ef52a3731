"""Language-model checkpoints as policies: specs, loading, chat rendering, decoding (the prompt profiles they read
are ``wolfeclick.game.prompts``).

``is_llm_spec`` is light (no torch); ``make_llm_policy`` and ``LLMPolicy`` load torch on first use.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.llm.checkpoint_specs import CheckpointError, is_llm_spec, preset_naming

__all__ = ["CheckpointError", "LLMPolicy", "is_llm_spec", "make_llm_policy", "preset_naming"]


def __getattr__(name: str) -> Any:
    if name in ("make_llm_policy", "LLMPolicy"):
        from wolfeclick.llm import policy

        return getattr(policy, name)
    raise AttributeError(f"module 'wolfeclick.llm' has no attribute {name!r}")
