"""Policy spec strings → policies. Baselines by name; checkpoints (``llm:…``, ``preset:…``) via ``wolfeclick.llm``."""

from __future__ import annotations

from typing import Any

from wolfeclick.errors import WolfeClickError
from wolfeclick.extras import require
from wolfeclick.policies.base import Policy
from wolfeclick.policies.baselines import BASELINES, BaselinePolicy
from wolfeclick.policies.human import HUMAN_SPEC

SPEC_HELP = (
    "random | maxdamage | heuristic | preset:run1|run2|run3 | llm:REPO[@REV][+ADAPTER[@REV]] | llm:/local/path"
)


class PolicySpecError(WolfeClickError, ValueError):
    """A spec that names no policy; the message is one line."""


def is_baseline(spec: str) -> bool:
    return spec.strip() in BASELINES


def make_policy(spec: str, **llm_options: Any) -> Policy:
    """Build the policy a spec names. Language-model options (mode, quant, …) apply to checkpoint specs only."""
    spec = spec.strip()
    if spec in BASELINES:
        return BaselinePolicy(spec)
    if spec == HUMAN_SPEC:
        raise PolicySpecError("'human' is a person choosing with buttons in the app (Live: You, or Replays: take over); "
                              "there is no one to ask here")
    if spec.startswith(("llm:", "preset:")):
        require("llm", f"the checkpoint policy {spec!r}")
        from wolfeclick.llm.policy import make_llm_policy  # heavy (torch): imported only when asked for

        return make_llm_policy(spec, **llm_options)
    raise PolicySpecError(f"unknown policy spec {spec!r}; expected {SPEC_HELP}")
