"""Policy spec strings → policies, through the policy registry (``wolfeclick.policies.registry``).

Kept as the battle layer's door to the registry: ``make_policy(spec)`` builds what a spec names (a baseline, a
checkpoint, an installed agent, a ``py:`` factory); ``check_spec(spec)`` refuses, with the same line, what it would
refuse, building nothing; ``spec_help()`` says how specs are written.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.extras import require
from wolfeclick.policies.base import Policy
from wolfeclick.policies.registry import PolicyRegistry, PolicySpecError, default_registry

__all__ = ["PolicySpecError", "make_policy", "check_spec", "spec_help", "needs_gpu"]


def spec_help(registry: PolicyRegistry | None = None, *, installed: bool = True) -> str:
    """One line of every spec form the registry knows (``random | … | llm:… | py:… | myagent``)."""
    return (registry or default_registry()).spec_help(installed=installed)


def needs_gpu(spec: str, registry: PolicyRegistry | None = None) -> bool:
    """Whether the kind a spec names wants a GPU (checkpoints): built once and shared, not made fresh per use."""
    return (registry or default_registry()).lookup(spec).gpu


def make_policy(spec: str, registry: PolicyRegistry | None = None, **llm_options: Any) -> Policy:
    """Build the policy a spec names. Checkpoint options (mode, quant, …; ``cache``) apply to checkpoint specs only,
    and a misspelt one is refused whatever the spec."""
    registry = registry or default_registry()
    kind = registry.lookup(spec)
    if kind.checkpoint:
        require("llm", f"the checkpoint policy {spec.strip()!r}")
    return registry.build(spec, **llm_options)


def check_spec(spec: str, registry: PolicyRegistry | None = None, **llm_options: Any) -> None:
    """Raise what ``make_policy(spec, **llm_options)`` would for the spec's name, options or body (one line),
    building nothing: no model is loaded, no factory called, no server asked (``PolicyRegistry.check``)."""
    registry = registry or default_registry()
    kind = registry.lookup(spec)
    if kind.checkpoint:
        require("llm", f"the checkpoint policy {spec.strip()!r}")
    registry.check(spec, **llm_options)
