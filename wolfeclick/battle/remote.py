"""A seat played somewhere else: a bot on a Showdown server, whose battles cannot run on the embedded simulator.

Such a seat is a ``Policy`` in name (it has a spec and metadata, so it sits in a lineup like any other) that is never
asked to ``decide``: a battle against it is played whole on its server (``play_against``), recorded there like a
ladder battle, and handed back as a ``Recording``. Engines look for this protocol and route such battles to it;
the implementation lives above (``wolfeclick.ladder.seat``), so nothing here knows about servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from wolfeclick.battle.schema import Recording, TeamInfo
from wolfeclick.errors import InputError
from wolfeclick.policies.base import Decision, Observation, Policy


@dataclass(frozen=True)
class RemoteBattle:
    """What a server seat needs to play one battle: the format, the turn cap, the id to record it under, and the
    Arena side's team in a given-team format (the remote side brings its own)."""

    format_id: str
    max_turns: int
    battle_id: str | None = None
    team: TeamInfo | None = None


@runtime_checkable
class ServerSeat(Protocol):
    """A seat whose battles are played on a server against an Arena policy (see the module docstring)."""

    spec: str
    blocking: bool

    def metadata(self) -> dict[str, Any]: ...

    def decide(self, observation: Observation) -> Decision: ...

    def check(self) -> None:
        """Raise a one-line ``WolfeClickError`` unless the seat can play now (its user is connected)."""

    async def play_against(self, policy: Policy, battle: RemoteBattle) -> Recording:
        """Play one battle against ``policy`` and return its recording (seats as the server gave them)."""


def refuse_server_seats(*policies: Policy) -> None:
    """One line for a server seat given to the embedded simulator (``record``, ``branch``…): only tournaments
    play them."""
    for policy in policies:
        if isinstance(policy, ServerSeat):
            raise InputError(f"{policy.spec} plays on a Showdown server, not the embedded simulator: enter it in a "
                             "tournament (bench) instead")
