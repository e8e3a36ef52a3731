"""Rollouts decided inside the simulator process (issue 48, item 2): no Python round trip per turn.

A ``sim:`` rollout policy (``sim:random``, ``sim:maxdamage``, ``sim:heuristic``) is written in JavaScript beside the
bridge (``wolfeclick/sim/policies.js``) against Showdown's own request and battle objects. One ``playout`` request
to the bridge forks the decision's snapshot, reseeds it exactly as a Python rollout is reseeded, plays the battle out
with that policy on both sides (a side's first choice forced when an option is valued) and answers with the winner.
The policy draws from Showdown's PRNG seeded from the analysis seed, the decision and the rollout number, so the same
rollout gives the same winner. These policies play only here: they are not the Python baselines of the same names.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.analysis.rollout import Forks, Outcome, luck_label
from wolfeclick.battle.branch import turn_limit_of
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.errors import InputError
from wolfeclick.policies.base import Decision, Observation, Policy
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.protocol import derive_seed, reseed_line

PREFIX = "sim:"
SIM_POLICIES = ("random", "maxdamage", "heuristic")


class SimPolicy:
    """A rollout policy that plays inside the simulator (``sim:NAME``): the analysis plays it with ``playout``;
    it has no Python ``decide``."""

    blocking = False

    def __init__(self, spec: str) -> None:
        name = spec.strip()[len(PREFIX):] if spec.strip().startswith(PREFIX) else ""
        if name not in SIM_POLICIES:
            raise InputError(f"{spec.strip()[:40]!r} is not a simulator policy (sim:{', sim:'.join(SIM_POLICIES)})")
        self.name = name
        self.spec = PREFIX + name

    def metadata(self) -> dict[str, Any]:
        return {"kind": "sim", "name": self.name}

    def decide(self, observation: Observation) -> Decision:
        raise InputError(f"{self.spec} decides inside the simulator: it plays analysis rollouts only")


def is_sim_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def rollout_policy(spec: str, **options: Any) -> Policy:
    """The rollout policy ``spec`` names: a ``sim:`` kind plays inside the simulator, any other is built by the
    registry (``options``: what ``make_policy`` takes, such as a checkpoint's loading options)."""
    if is_sim_spec(spec):
        return SimPolicy(spec)
    from wolfeclick.battle.policy_specs import make_policy

    return make_policy(spec, **options)


async def sim_rollout(recording: Recording, step: int, policy: SimPolicy, *, process: SimProcess, seed: int,
                      number: int, forks: Forks, prefix: list[str], first: dict[Side, ActionRecord] | None = None,
                      inputlog: bool = False) -> Outcome:
    """Rollout ``number`` from decision ``step``, played out by ``policy`` inside the simulator: the same luck as a
    Python rollout of that number (the same ``>reseed``), its own seeded policy draws."""
    snapshot = await forks.snapshot(process, recording, step, prefix)
    reply = await process.call(
        "playout", snapshot=snapshot, lines=[reseed_line(seed, luck_label(step, number))], policy=policy.name,
        seed=derive_seed(seed, f"sim-policy:{step}:{number}"), maxTurns=turn_limit_of(recording),
        first={side: action.model_dump() for side, action in (first or {}).items()}, inputlog=inputlog)
    return Outcome(reply["winner"], reply["reason"], [], reply.get("inputlog", []))
