"""The policy protocol: one small ``decide(observation) -> decision``.

A policy sees only what its side may see (a poke-env ``Battle`` fed from that side's stream, the state markdown and
the legal actions) and draws any randomness from ``observation.rng``, a generator seeded from the battle seed and
the side. Nothing else is random, so the same seed and policies give the same battle at any concurrency.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from wolfeclick.game.actions import LegalAction


@dataclass
class Observation:
    """Everything a policy may use to decide, for one side at one decision point."""

    side: str
    turn: int
    format: str
    battle: Any
    """The side's poke-env ``Battle``; read it, never mutate it."""
    request: dict[str, Any]
    legal_actions: list[LegalAction]
    state: str
    """The project's state markdown (Part A/B/C) for this side."""
    rng: random.Random
    rejected: tuple[str, ...] = ()
    """Commands the simulator already refused at this decision point; do not repeat them."""

    def allowed(self) -> list[LegalAction]:
        """The legal actions less those the simulator refused here: what a policy may still choose, in order."""
        return [a for a in self.legal_actions if a.command() not in self.rejected]


@dataclass
class Decision:
    """A policy's answer. ``command`` overrides ``action.command()`` (e.g. to add ``terastallize``)."""

    action: LegalAction | None
    command: str | None = None
    raw_output: str | None = None
    illegal: bool = False
    illegal_reason: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def choice(self) -> str:
        """What to send to the simulator."""
        if self.command:
            return self.command
        return self.action.command() if self.action is not None else "default"


POLICY_FACTORY_MARK = "__wolfeclick_policy_factory__"
"""The attribute ``policy_factory`` sets: a ``py:`` spec may name a function only if it carries it."""


def policy_factory(function: Any) -> Any:
    """Mark a function as a policy factory, so that a ``py:module:function`` spec may name it.

    A ``py:`` spec imports what it names and calls it, so it names policies, never arbitrary callables: a class
    with ``decide`` qualifies as it is, a function only when it declares itself with this decorator (an installed
    entry point is declared by its installation). ``py:os:system`` or ``py:builtins:eval`` is refused before any
    call."""
    setattr(function, POLICY_FACTORY_MARK, True)
    return function


@runtime_checkable
class Policy(Protocol):
    """Anything with a spec, metadata and ``decide`` is a policy.

    ``blocking`` policies (language models) are called from a worker thread so the simulator never waits on them.
    """

    spec: str
    blocking: bool

    def metadata(self) -> dict[str, Any]: ...

    def decide(self, observation: Observation) -> Decision: ...


def fallback_decision(observation: Observation, reason: str, raw_output: str | None = None) -> Decision:
    """The seeded legal fallback for an output that named no legal action: flagged illegal, reason kept."""
    allowed = observation.allowed()
    action = observation.rng.choice(allowed) if allowed else None
    return Decision(action=action, raw_output=raw_output, illegal=True, illegal_reason=reason)
