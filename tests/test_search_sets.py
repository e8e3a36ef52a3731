"""The sampler of hidden information (``game.sets``, ``sim.setdata``) and the worlds ``search`` builds from one
side's view (``game.world``, the bridge's ``world`` op), checked over positions of real battles (issue 61)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

import pytest

from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.game.actions import to_id
from wolfeclick.game.sets import PokemonSet, Revealed, SetBook, candidates, consistent, sample_set, sample_team
from wolfeclick.game.world import FoeState, revealed_foes, team_size, world_request
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.protocol import derive_seed
from wolfeclick.sim.setdata import load_book, sets_json_path

FORMATS = ("gen9randombattle", "gen4randombattle")


@dataclass
class Position:
    """What one side saw at one decision of a real battle: its own request and what it had seen of the foe."""

    side: str
    turn: int
    request: dict[str, Any]
    foes: list[FoeState]
    foe_size: int
    world: dict[str, Any]


class Watching:
    """A baseline that, at every decision, keeps what its side saw and the world ``search`` would build there."""

    blocking = False

    def __init__(self, spec: str, book: SetBook) -> None:
        self.inner = make_policy(spec)
        self.spec = spec
        self.book = book
        self.positions: list[Position] = []

    def metadata(self) -> dict[str, Any]:
        return self.inner.metadata()

    def decide(self, observation: Observation) -> Decision:
        foe = "p2" if observation.side == "p1" else "p1"
        foes = revealed_foes(observation.battle)
        size = team_size(observation.battle, foe)
        team = sample_team(self.book, [f.revealed for f in foes], size, random.Random(len(self.positions)))
        world = world_request(observation.battle, observation.request, observation.side, foes, team,
                              derive_seed(len(self.positions), "w"), f"check-{len(self.positions)}", observation.format)
        self.positions.append(Position(observation.side, observation.turn, observation.request, foes, size, world))
        return self.inner.decide(observation)


async def _positions(format_id: str, seeds: range) -> tuple[SetBook, list[Position]]:
    book = await load_book(format_id)
    found = []
    for seed in seeds:
        p1, p2 = Watching("heuristic", book), Watching("maxdamage", book)
        await play_battle(p1, p2, format_id=format_id, seed=seed)
        found += p1.positions + p2.positions
    return book, found


@pytest.fixture(scope="module", params=FORMATS)
def battles(request: pytest.FixtureRequest) -> tuple[str, SetBook, list[Position]]:
    book, positions = asyncio.run(_positions(request.param, range(1, 3)))
    return request.param, book, positions


def test_the_set_data_is_the_installed_simulators_own() -> None:
    assert sets_json_path("gen9randombattle").is_file() and sets_json_path("gen4randombattle").is_file()
    book = asyncio.run(load_book("gen4randombattle"))
    assert len(book.sets) >= 250 and "garchomp" in book.roles
    assert all(s.level == book.levels.get(species, s.level) for species, sets in book.sets.items() for s, _ in sets)


def test_every_sampled_team_agrees_with_everything_revealed(battles: tuple[str, SetBook, list[Position]]) -> None:
    """The property, over every decision of real battles (both sides) and several seeds each: the sampled team
    holds a set consistent with each seen Pokémon (species, level, moves used, item shown or known gone, ability,
    tera type) in order, and fills the rest with species not seen, none twice."""
    format_id, book, positions = battles
    assert len(positions) > 40
    revealed_moves = sum(len(f.revealed.moves) for p in positions for f in p.foes)
    assert revealed_moves > 50  # the battles revealed plenty to be consistent with
    for position in positions:
        known = [f.revealed for f in position.foes]
        for seed in range(5):
            team = sample_team(book, known, position.foe_size, random.Random(seed))
            assert len(team) == position.foe_size
            for sampled, revealed in zip(team, known):
                assert consistent(sampled, revealed) or not any(
                    consistent(s, revealed) for s, _ in book.sets.get(sampled.species, ())), (revealed, sampled)
                assert revealed.moves <= set(sampled.moves) or len(revealed.moves) > 4 or not book.sets.get(
                    sampled.species), (revealed, sampled)
                assert len(sampled.moves) <= 4
                if revealed.item is not None:
                    assert sampled.item == to_id(revealed.item)
            unseen = [s.species for s in team[len(known):]]
            assert len(set(unseen)) == len(unseen)
            assert not set(unseen) & {s.species for s in team[:len(known)]}


def test_a_sample_is_seeded_and_weighted_by_the_generators_counts() -> None:
    book = asyncio.run(load_book("gen9randombattle"))
    revealed = Revealed("garchomp", moves=frozenset({"earthquake"}))
    options = candidates(book, revealed)
    assert abs(sum(p for _, p in options) - 1) < 1e-9
    assert all(consistent(s, revealed) for s, _ in options)
    assert [p for _, p in options] == sorted((p for _, p in options), reverse=True)
    draws = [sample_set(book, revealed, random.Random(seed)) for seed in range(300)]
    assert draws == [sample_set(book, revealed, random.Random(seed)) for seed in range(300)]
    top, chance = options[0]
    assert abs(draws.count(top) / len(draws) - chance) < 0.1
    gone = sample_set(book, Revealed("garchomp", item=""), random.Random(1))
    assert gone.item == "" and gone.species == "garchomp"


def test_a_combination_the_tally_never_drew_comes_from_the_roles_and_an_unknown_species_from_what_was_seen() -> None:
    book = asyncio.run(load_book("gen9randombattle"))
    pool = book.roles["garchomp"][0].movepool
    rare = Revealed("garchomp", moves=frozenset(pool[:3]), item="lifeorb")
    sampled = sample_set(book, rare, random.Random(3))
    assert set(pool[:3]) <= set(sampled.moves) and sampled.item == "lifeorb" and len(sampled.moves) == 4
    unknown = sample_set(book, Revealed("notamon", level=50, moves=frozenset({"tackle"})), random.Random(3))
    assert unknown == PokemonSet("notamon", 50, ("tackle",), "", "", "")


async def _worlds(positions: list[Position]) -> list[dict[str, Any]]:
    process = SimProcess()
    await process.start()
    try:
        replies = []
        for position in positions:
            replies.append(await process.call("world", **position.world, requests=True))
            await process.call("forget", snapshot=position.world["snapshot"])
        return replies
    finally:
        await process.close()


def _hp(condition: str) -> tuple[int, int]:
    head = condition.split(" ")[0]
    if head == "0":
        return 0, 1
    hp, _, top = head.partition("/")
    return int(hp), int(top)


def test_each_world_holds_the_sides_own_team_as_its_request_says_and_the_foe_as_it_was_seen(
        battles: tuple[str, SetBook, list[Position]]) -> None:
    format_id, book, positions = battles
    chosen = positions[::4]
    for position, reply in zip(chosen, asyncio.run(_worlds(chosen))):
        assert position.side in reply["deciding"]
        mine = reply["requests"][position.side]
        real = position.request
        assert [m["details"] for m in mine["side"]["pokemon"]] == [m["details"] for m in real["side"]["pokemon"]]
        assert [m["condition"] for m in mine["side"]["pokemon"]] == [m["condition"] for m in real["side"]["pokemon"]]
        assert [m["moves"] for m in mine["side"]["pokemon"]] == [m["moves"] for m in real["side"]["pokemon"]]
        assert [m["item"] for m in mine["side"]["pokemon"]] == [m["item"] for m in real["side"]["pokemon"]]
        assert bool(mine.get("forceSwitch")) == bool(real.get("forceSwitch"))
        foe_side = "p2" if position.side == "p1" else "p1"
        theirs = reply["requests"][foe_side]["side"]["pokemon"]
        assert len(theirs) == position.foe_size
        for mon, foe in zip(theirs, position.foes):
            assert to_id(mon["details"].split(",")[0]).startswith(book_key(book, foe.revealed.species)) or \
                foe.revealed.species.startswith(to_id(mon["details"].split(",")[0]))
            hp, top = _hp(mon["condition"])
            if foe.fainted:
                assert hp == 0
            else:
                assert abs(hp / top - foe.hp_fraction) <= 1.5 / top + 0.01
            assert {m for m in foe.revealed.moves if not m.startswith("hiddenpower")} <= set(mon["moves"]) or \
                len(foe.revealed.moves) > 4
            if foe.revealed.item is not None and mon["item"] != "":
                assert mon["item"] == to_id(foe.revealed.item)


def book_key(book: SetBook, species: str) -> str:
    from wolfeclick.game.sets import resolve_species

    return resolve_species(book, species)
