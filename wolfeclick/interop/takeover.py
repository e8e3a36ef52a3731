"""Take over a public replay at a decision: the battle goes on in the simulator from an inferred state.

A public-log import has no seed or input log, so its battle cannot be replayed up to a decision. Instead the
deciding side's view there is inferred (``wolfeclick.interop.views``: its own team completed from the format's set
data), the opponent's hidden sets are sampled from the same data (``wolfeclick.game.sets.sample_team``), and the
simulator builds that world with the loader the ``search`` policy uses (``world_request``, the bridge's ``world``).
The runner then plays it to the end with the given policies: its battle starts as a copy of that world (``fork``),
its trackers having read the public log up to the decision. The recording is a branch of the import whose
``source.detail`` and players' metadata say it started **from an inferred state**; its input log is the world's
start, not the battle's (it does not re-simulate the part before the decision).
"""

from __future__ import annotations

import json
import random
from typing import Any

from wolfeclick.battle.branch import BranchError, turn_limit_of
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording, SourceInfo
from wolfeclick.game.sets import SetBook, sample_team
from wolfeclick.game.world import revealed_foes, team_size, world_request
from wolfeclick.interop.public_rescore import INFERRED_STATE
from wolfeclick.interop.showdown import decision_points
from wolfeclick.interop.views import PlayerView, player_views
from wolfeclick.policies.base import Observation, Policy
from wolfeclick.sides import SIDES, Side, other
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.protocol import derive_seed


class _FromWorld:
    """A simulator process whose next battle starts as a copy of a world (``fork``), after ``kept``: the output
    the runner reads first (the public log so far and the world's requests)."""

    def __init__(self, process: SimProcess, snapshot: str, kept: list[str]) -> None:
        self.process, self.snapshot, self.kept = process, snapshot, kept

    @property
    def info(self) -> dict[str, Any]:
        return self.process.info

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        if op == "start":
            reply = await self.process.call("fork", snapshot=self.snapshot, battle=fields["battle"], lines=[])
            return {**reply, "out": [*self.kept, *reply["out"]]}
        return await self.process.call(op, **fields)


def _renamed(log: list[str], names: dict[str, str]) -> list[str]:
    """``log`` with its players' names (``|player|``, ``|win|``) swapped by ``names``: the world's players are named
    ``p1`` and ``p2``, and the runner's trackers and winner must read the same names."""
    out = []
    for line in log:
        parts = line.split("|")
        if len(parts) > 3 and parts[1] == "player" and parts[3] in names:
            parts[3] = names[parts[3]]
        elif len(parts) > 2 and parts[1] == "win" and parts[2] in names:
            parts[2] = names[parts[2]]
        out.append("|".join(parts))
    return out


async def take_over_public(recording: Recording, at: int, policies: dict[Side, Policy], seed: int = 0) -> Recording:
    """``take_over`` with the format's set data and a simulator of its own (what the CLI calls)."""
    from wolfeclick.sim.setdata import load_book

    book = await load_book(recording.format)
    process = SimProcess()
    await process.start()
    try:
        return await take_over(recording, at, policies, book, process=process, seed=seed)
    finally:
        await process.close()


def inferred_decision(recording: Recording, at: int, book: SetBook) -> tuple[PlayerView, Observation]:
    """The view and observation of the first side deciding at decision ``at`` of a public-log import."""
    if not 0 <= at < len(recording.turns):
        raise BranchError(f"{recording.id}: no decision {at} (it has {len(recording.turns)})")
    side = recording.turns[at].deciding[0]
    found: list[tuple[PlayerView, Observation]] = []

    def probe(view: PlayerView, observation: Observation) -> None:
        if view.index == at and not found:
            found.append((view, observation))

    player_views(recording, book, [side], probe=probe)
    if not found:
        raise BranchError(f"{recording.id}: decision {at} has no inferred view")
    return found[0]


async def take_over(recording: Recording, at: int, policies: dict[Side, Policy], book: SetBook, *,
                    process: SimProcess, seed: int = 0) -> Recording:
    """Play ``recording`` (a public-log import) on from decision ``at`` with ``policies``, from an inferred state.
    The recording holds the decisions from ``at`` on (its log: the public log up to there, then the new battle)."""
    view, observation = inferred_decision(recording, at, book)
    side = view.side
    foes = revealed_foes(observation.battle)
    size = max(team_size(observation.battle, other(side)), len(foes))
    team = sample_team(book, [foe.revealed for foe in foes], size, random.Random(f"takeover:{recording.id}:{at}:{seed}"))
    snapshot = f"takeover-{recording.id}-{at}-{seed}"
    request = world_request(observation.battle, observation.request, side, foes, team,
                            derive_seed(seed, f"takeover:{at}"), snapshot, recording.format)
    reply = await process.call("world", **request, requests=True)
    position = decision_points(list(recording.log))[at][0]
    names: dict[str, str] = {s: recording.players[s].name for s in SIDES}
    kept = ["update\n" + "\n".join(_renamed(recording.log[:position], {names[s]: s for s in SIDES}))]
    kept += [f"sideupdate\n{s}\n|request|{json.dumps(reply['requests'][s])}" for s in SIDES
             if reply.get("requests", {}).get(s)]
    new_id = f"{recording.id}-inferred-at{at}"[:120]
    try:
        played = await play_battle(policies["p1"], policies["p2"], format_id=recording.format, seed=seed,
                                   max_turns=turn_limit_of(recording), battle_id=new_id,
                                   process=_FromWorld(process, snapshot, kept),  # type: ignore[arg-type]
                                   names={s: s for s in SIDES})  # the world's players are named by their side
    finally:
        if process.alive:
            await process.call("forget", snapshot=snapshot)
    detail = (f"{INFERRED_STATE}: decision {at} of {recording.id}, {side}'s own team completed from the set "
              "data, the opponent's hidden sets sampled")
    players = {s: played.players[s].model_copy(update={
        "name": recording.players[s].name, "metadata": {**played.players[s].metadata, "state": INFERRED_STATE}})
               for s in SIDES}
    return played.model_copy(update={
        "id": new_id, "players": players, "log": _renamed(played.log, names),
        "source": SourceInfo(kind="branch", detail=detail, parent=recording.id, branch_step=at)})
