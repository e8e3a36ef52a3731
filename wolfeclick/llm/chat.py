"""A prompt profile's chat rendered with a checkpoint's tokenizer: the one step of prompting that needs the model.

The profiles themselves (``wolfeclick.game.prompts``) only format battle state; this applies the tokenizer's chat
template with ``add_generation_prompt=True`` and thinking disabled (``enable_thinking=False``).
"""

from __future__ import annotations

from typing import Any

from wolfeclick.game.prompts import Profile, Prompt
from wolfeclick.llm.checkpoint_specs import CheckpointError


def render(tokenizer: Any, prompt: Prompt) -> Prompt:
    """Fill in ``prompt.text``: the chat-templated prompt the checkpoint reads."""
    if not getattr(tokenizer, "chat_template", None):
        raise CheckpointError(f"the tokenizer has no chat template; profile {prompt.profile} needs one")
    prompt.text = tokenizer.apply_chat_template(prompt.messages, tokenize=False, add_generation_prompt=True,
                                                enable_thinking=False)
    return prompt


def chat_prompt(profile: Profile, tokenizer: Any, observation: Any) -> Prompt:
    """``profile``'s prompt for ``observation``, rendered."""
    return render(tokenizer, profile.build(observation))
