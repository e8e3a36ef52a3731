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
from typing import Any, Iterable

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
    return inferred_decisions(recording, [at], book)[at]


def inferred_decisions(recording: Recording, steps: Iterable[int], book: SetBook) -> dict[int, tuple[PlayerView,
                                                                                                  Observation]]:
    """``inferred_decision`` of each of ``steps``, the public log read once per side."""
    wanted = set(steps)
    sides = sorted({recording.turns[at].deciding[0] for at in wanted if recording.turns[at].deciding})
    found: dict[int, tuple[PlayerView, Observation]] = {}

    def probe(view: PlayerView, observation: Observation) -> None:
        if view.index in wanted and view.side == recording.turns[view.index].deciding[0] and view.index not in found:
            found[view.index] = (view, observation)

    player_views(recording, book, sides, probe=probe)
    missing = sorted(wanted - set(found))
    if missing:
        raise BranchError(f"{recording.id}: decision {missing[0]} has no inferred view")
    return found


async def load_inferred_world(process: SimProcess, recording: Recording, at: int, view: PlayerView,
                              observation: Observation, book: SetBook, seed: int, snapshot: str) -> list[str]:
    """Build decision ``at`` of a public-log import in ``process`` as snapshot ``snapshot``: the deciding side's
    inferred view (``view``/``observation``), the opponent's hidden sets sampled from ``book`` (seeded by the
    recording, ``at`` and ``seed``), loaded by the search policy's loader (``world_request``, the bridge's
    ``world``). Returns the output a runner reads before the copy's own: the public log up to the decision (the
    players named by their side, as the world names them) and each side's request there.

    The one loader of an inferred state: a take-over and an analysis of a public replay both start from it."""
    side = view.side
    foes = revealed_foes(observation.battle)
    size = max(team_size(observation.battle, other(side)), len(foes))
    team = sample_team(book, [foe.revealed for foe in foes], size, random.Random(f"takeover:{recording.id}:{at}:{seed}"))
    request = world_request(observation.battle, observation.request, side, foes, team,
                            derive_seed(seed, f"takeover:{at}"), snapshot, recording.format)
    reply = await process.call("world", **request, requests=True)
    position = decision_points(list(recording.log))[at][0]
    names: dict[str, str] = {s: recording.players[s].name for s in SIDES}
    kept = ["update\n" + "\n".join(_renamed(recording.log[:position], {names[s]: s for s in SIDES}))]
    kept += [f"sideupdate\n{s}\n|request|{json.dumps(reply['requests'][s])}" for s in SIDES
             if reply.get("requests", {}).get(s)]
    return kept


class InferredWorlds:
    """Where an analysis of a public-log import starts its rollouts (``analysis.rollout.Forks``' ``worlds``): each
    decision built by ``load_inferred_world`` (its views inferred once for all the analysed decisions), the
    opponent's hidden sets sampled once per decision from the analysis seed, so every process builds the same
    world and the numbers are the same wherever a rollout ran."""

    label = INFERRED_STATE
    names: dict[Side, str] = {s: s for s in SIDES}
    """The world's players are named by their side."""

    def __init__(self, recording: Recording, book: SetBook, seed: int, steps: Iterable[int] | None = None) -> None:
        self.recording, self.book, self.seed = recording, book, seed
        self.views = inferred_decisions(recording, steps if steps is not None
                                        else [t.index for t in recording.turns if t.deciding], book)

    async def load(self, process: SimProcess, step: int, snapshot: str) -> list[str]:
        if step not in self.views:
            raise BranchError(f"{self.recording.id}: decision {step} has no inferred view")
        view, observation = self.views[step]
        return await load_inferred_world(process, self.recording, step, view, observation, self.book, self.seed,
                                         snapshot)


async def take_over(recording: Recording, at: int, policies: dict[Side, Policy], book: SetBook, *,
                    process: SimProcess, seed: int = 0) -> Recording:
    """Play ``recording`` (a public-log import) on from decision ``at`` with ``policies``, from an inferred state.
    The recording holds the decisions from ``at`` on (its log: the public log up to there, then the new battle)."""
    view, observation = inferred_decision(recording, at, book)
    side = view.side
    snapshot = f"takeover-{recording.id}-{at}-{seed}"
    kept = await load_inferred_world(process, recording, at, view, observation, book, seed, snapshot)
    names: dict[str, str] = {s: recording.players[s].name for s in SIDES}
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
