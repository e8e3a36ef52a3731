"""A Revival Blessing pick is valued and played by every rollout policy, on the real simulator (issue 62, item 1).

After Revival Blessing the simulator asks the user's side for a "switch" that names a *fainted* Pokémon (the one the
move brings back; its request marks the active Pokémon ``reviving``). The battle here is a real gen9 custom game with
given teams: p1's Memento users faint one by one, Pawmot comes in and uses Revival Blessing with two of them down
and two more still standing on the bench, so a policy that offers the usual switches names an illegal one.
"""

from __future__ import annotations

import asyncio

import pytest

from wolfeclick.analysis.core import analyse
from wolfeclick.analysis.rollout import Forks, prefix_lines
from wolfeclick.analysis.sim_rollout import SIM_POLICIES, SimPolicy, rollout_policy, sim_rollout
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.teams import validate_team
from wolfeclick.sim.process import SimPool

FORMAT = "gen9customgame"
REVIVER = """Whimsicott
Ability: Prankster
- Memento

Mew
Ability: Synchronize
- Memento

Pawmot
Ability: Volt Absorb
- Revival Blessing

Muk
Ability: Stench
- Memento

Mismagius
Ability: Levitate
- Memento
"""
WALL = """Chansey
Ability: Natural Cure
- Splash
"""
SEED = 4
"""The battle seed whose Revival Blessing comes with two of p1's Pokémon fainted and two standing on the bench."""
ROLLOUT_POLICIES = ("random", "maxdamage", "heuristic", *(f"sim:{name}" for name in SIM_POLICIES))


@pytest.fixture(scope="module")
def battle() -> tuple[Recording, int]:
    """The recorded battle and the index of its revive decision (p1 alone, every legal switch a fainted Pokémon)."""
    async def play() -> Recording:
        async with SimPool(1) as pool:
            process = pool.pick()
            teams = {"p1": (await validate_team(process, FORMAT, REVIVER, "reviver")).info(),
                     "p2": (await validate_team(process, FORMAT, WALL, "wall")).info()}
            return await play_battle(make_policy("maxdamage"), make_policy("random"), format_id=FORMAT, seed=SEED,
                                     process=process, teams=teams, max_turns=60)

    recording = asyncio.run(play())
    assert any("|[from] move: Revival Blessing" in line for turn in recording.turns for line in turn.events)
    found = []
    for turn in recording.turns:
        decision = turn.decisions.get("p1")
        if turn.deciding != ["p1"] or decision is None or not decision.legal_actions:
            continue
        fainted = {mon.species for mon in turn.snapshot["p1"].team if mon.fainted}
        standing = {mon.species for mon in turn.snapshot["p1"].team if not mon.fainted and not mon.active}
        if standing and all(a.action == "switch" and a.choice in fainted for a in decision.legal_actions):
            found.append(turn.index)
    assert len(found) == 1, found
    step = found[0]
    assert len(recording.turns[step].decisions["p1"].legal_actions) >= 2  # two Pokémon to choose between
    return recording, step


@pytest.mark.parametrize("spec", ROLLOUT_POLICIES)
def test_every_rollout_policy_values_each_revive_option(battle: tuple[Recording, int], spec: str) -> None:
    recording, step = battle

    async def go():  # noqa: ANN202
        async with SimPool(1) as pool:
            return await analyse(recording, rollout_policy(spec), pool=pool, k=3, seed=5, steps=[step],
                                 options=("p1",), at=[step])

    analysis = asyncio.run(go())
    [decision] = analysis.decisions
    table = decision.options["p1"]
    legal = recording.turns[step].decisions["p1"].legal_actions
    assert sorted(o.action.choice for o in table.options) == sorted(a.choice for a in legal)
    assert all(o.estimate.rollouts == 3 for o in table.options)


@pytest.mark.parametrize("name", ["random", "maxdamage"])
def test_a_simulator_policy_that_draws_revives_either_fainted_pokemon(battle: tuple[Recording, int],
                                                                      name: str) -> None:
    """Left to themselves at the revive decision, the policies that draw among the legal choices (maxdamage does when
    no move is left to it) bring back one fainted Pokémon or the other. A policy that offered the standing ones
    instead would be refused three times and end in `default`, which always revives the first fainted one (the
    simulator's input log keeps the choice it resolved, never the refused ones)."""
    recording, step = battle
    prefix = prefix_lines(recording, step)

    async def go():  # noqa: ANN202
        async with SimPool(1) as pool:
            forks = Forks()
            try:
                return [await sim_rollout(recording, step, SimPolicy("sim:" + name), process=pool.pick(), seed=2,
                                          number=n, forks=forks, prefix=prefix, inputlog=True) for n in range(8)]
            finally:
                await forks.close()

    picks = set()
    for outcome in asyncio.run(go()):
        after = outcome.inputlog[len(prefix) + 1:]  # past the reseed
        picks.add(next(line for line in after if line.startswith(">p1 ")))
    assert len(picks) == 2 and all(pick.startswith(">p1 switch ") for pick in picks), picks
