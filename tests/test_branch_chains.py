"""A branch of a branch of a branch… replays exactly and can be branched again, at any depth (issue 52).

Real battles on the real simulator (gen9 random battles, heuristic on both sides), taken over link after link by
other policies; every link must re-simulate to its own log, and branching the last one with its own policies must
reproduce it.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import BRANCH_NAMING, identity
from wolfeclick.battle.branch import branch
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import resimulate
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SimPool

ROOT = Path(__file__).resolve().parents[1]
SPECS = (None, "heuristic", "random", "maxdamage")
"""What takes a side over at a link: None keeps the link's own policy (made afresh)."""
Plan = list[tuple[float | None, dict[str, str | None]]]
"""Per link: where it branches (a fraction of the link's decisions, before or after the previous link's branch
point; or None: the next decision after it that one side makes alone) and who takes over."""


@functools.cache
def recorded(seed: int) -> Recording:
    return asyncio.run(play_battle(make_policy("heuristic"), make_policy("heuristic"), format_id="gen9randombattle",
                                   seed=seed))


def forced(recording: Recording, after: int) -> int:
    """The first decision after ``after`` where one side decides alone (a switch after a faint), else the next."""
    return next((t.index for t in recording.turns[after + 1:] if len(t.deciding) == 1), after + 1)


async def chain(parent: Recording, plan: Plan, pool: SimPool) -> list[Recording]:
    """``parent`` and its chain of branches, each a branch of the one before, as far as each battle lasts; every
    link re-simulates to its own log."""
    links = [parent]
    previous = -1
    for where, takeover in plan:
        link = links[-1]
        step = forced(link, previous) if where is None else int(where * len(link.turns))
        if step >= len(link.turns):
            break
        policies = {side: make_policy(spec) if spec else None for side, spec in takeover.items()}
        child = await branch(link, step, policies, pool=pool)
        assert child.source.parent == link.id and child.source.branch_step == step
        resim = await resimulate(child)
        assert resim.ok, f"link {len(links)} at decision {step}: {resim.message}"
        links.append(child)
        previous = step
    return links


async def replays_itself(recording: Recording, where: float, pool: SimPool) -> None:
    """Branched with its own policies at any decision from the last take-over on (a fraction ``where`` of the way),
    a recording is played again byte for byte: each policy is asked just where it was, its generator in the same
    state. (Before a take-over, its policy would play the decisions another one played.)"""
    start = max(info.since or 0 for info in recording.players.values())
    again = await branch(recording, start + int(where * (len(recording.turns) - start)), {}, pool=pool)
    assert identity(again, BRANCH_NAMING) == identity(recording, BRANCH_NAMING)


def test_a_chain_of_8_takeovers_at_forced_switches_replays_and_branches_again() -> None:
    """Each link is taken over right at a decision one side makes alone (the other's reward window still open
    there), by a policy other than the recorded one; the drawing policy (random) took over mid-chain."""
    plan: Plan = [(None, {"p1": "random"}), (None, {"p2": "maxdamage"}), (None, {"p1": "heuristic"}),
                  (None, {"p2": "random"}), (None, {}), (None, {"p1": "maxdamage"}), (None, {"p2": "heuristic"}),
                  (None, {"p1": "random"})]

    parent = recorded(1)

    async def run() -> list[Recording]:
        async with SimPool(1) as pool:
            links = await chain(parent, plan, pool)
            await replays_itself(links[-1], 0.99, pool)
            return links

    links = asyncio.run(run())
    assert len(links) == 9, [len(link.turns) for link in links]
    assert [link.source.parent for link in links[1:]] == [link.id for link in links[:-1]]


def test_a_branch_taken_over_before_its_parents_takeover_replays_too() -> None:
    """The parent's random took over at decision 10; its branch at decision 4 keeps it, so it is asked from 4."""
    parent = recorded(1)

    async def run() -> None:
        async with SimPool(1) as pool:
            links = await chain(parent, [(0.4, {"p1": "random"}), (0.15, {"p2": "maxdamage"})], pool)
            child, grandchild = links[1:]
            assert grandchild.source.branch_step is not None
            assert grandchild.source.branch_step < child.players["p1"].since  # type: ignore[operator]
            assert grandchild.players["p1"].since == grandchild.source.branch_step
            for where in (0.5, 0.8):
                await replays_itself(grandchild, where, pool)

    asyncio.run(run())


@settings(max_examples=5, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from([2, 3, 4]),
       plan=st.lists(st.tuples(st.none() | st.floats(0, 1, exclude_max=True),
                               st.fixed_dictionaries({"p1": st.sampled_from(SPECS), "p2": st.sampled_from(SPECS)})),
                     min_size=1, max_size=8),
       last=st.floats(0, 1, exclude_max=True))
def test_random_chains_of_branches_replay_exactly_and_branch_again(seed: int, plan: Plan, last: float) -> None:
    parent = recorded(seed)

    async def run() -> None:
        async with SimPool(1) as pool:
            links = await chain(parent, plan, pool)
            if len(links) > 1:
                await replays_itself(links[-1], last, pool)

    asyncio.run(run())


def test_a_branch_of_a_branch_of_a_server_battle_starts_as_the_server_did() -> None:
    """A server log has no seed of ours: its branches start from its own opening lines, and so must theirs."""
    from wolfeclick.interop.sniff import read_any

    fixture = ROOT / "tests" / "data" / "interop" / "showdown_server.json"
    imported = read_any(fixture.read_bytes(), fixture.name)
    takeover = {"p1": "heuristic", "p2": "random"}

    async def run() -> list[Recording]:
        async with SimPool(1) as pool:
            links = await chain(imported, [(0.2, takeover), (0.5, takeover)], pool)
            await replays_itself(links[-1], 0.99, pool)
            return links

    links = asyncio.run(run())
    assert len(links) == 3 and all(link.seed is None for link in links)
