"""``search`` is a fair player (issue 61). Real battles on the real simulator: its decisions do not change when the
opponent's hidden parts change in the true battle, and nothing it asks a simulator comes from the opponent's side."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from typing import Any

import pytest

from wolfeclick.analysis import search as search_module
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording, TeamInfo
from wolfeclick.errors import InputError
from wolfeclick.game.sets import PokemonSet, Revealed, sample_team
from wolfeclick.policies.catalogue import PolicyRefused, ServedCatalogue
from wolfeclick.policies.registry import PolicySpecError, default_registry
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.setdata import load_book

FORMAT = "gen9randombattle"
SPEC = "search?level=1&worlds=2&rollouts=2"
TOP = "search?level=3&worlds=2&rollouts=2&horizon=2"
"""Level 3 made small: it also weighs terastallizing (from its own request), values by ``standing`` and models both
sides of a rollout with ``sim:simple``; the true lead's tera type changes in ``other_lead`` below."""
_SHOWN_ON_ENTRY = {"airballoon", "boosterenergy"}


def _packed(team: list[PokemonSet]) -> str:
    """Showdown's packed team text (every Pokémon genderless, so that no gender is drawn from the battle's dice)."""
    rows = []
    for s in team:
        evs = ",".join(str(v) for v in s.evs)
        ivs = ",".join(str(v) for v in s.ivs)
        rows.append("|".join([s.species, "", s.item, s.ability, ",".join(s.moves), "", evs, "N", ivs, "",
                              str(s.level), f",,,,,{s.tera_type}"]))
    return "]".join(rows)


def _teams(seed: int) -> tuple[list[PokemonSet], list[PokemonSet], list[PokemonSet], list[PokemonSet]]:
    """A team for p1, one for p2, and p2's team with its hidden parts changed two ways: other Pokémon behind the
    same lead; the same Pokémon with the lead holding another item and another tera type."""
    book = asyncio.run(load_book(FORMAT))
    mine = sample_team(book, [], 6, random.Random(seed))
    theirs = sample_team(book, [Revealed(s.species) for s in mine], 12, random.Random(seed + 1))[6:]
    lead = theirs[0]
    while lead.item in _SHOWN_ON_ENTRY:
        lead = replace(lead, item="leftovers")
    theirs[0] = lead
    bench = sample_team(book, [Revealed(s.species) for s in mine + theirs], 17, random.Random(seed + 2))[12:]
    other_bench = [lead] + bench
    item = "leftovers" if lead.item != "leftovers" else "lifeorb"
    tera = "Fairy" if lead.tera_type != "Fairy" else "Ghost"
    other_lead = [replace(lead, item=item, tera_type=tera)] + theirs[1:]
    return mine, theirs, other_bench, other_lead


def _play(p1_team: list[PokemonSet], p2_team: list[PokemonSet], seed: int, spec: str = SPEC) -> Recording:
    teams = {"p1": TeamInfo(packed=_packed(p1_team)), "p2": TeamInfo(packed=_packed(p2_team))}
    return asyncio.run(play_battle(make_policy(spec), make_policy("maxdamage"), format_id=FORMAT, seed=seed,
                                   teams=teams, max_turns=8))


def _same_history(a: Recording, b: Recording) -> int:
    """How many of p1's first decisions follow the same public history in both battles (the same spectator lines
    and the same view for p1 at each)."""
    same = 0
    for x, y in zip(a.turns, b.turns):
        if x.events != y.events or ("p1" in x.decisions) != ("p1" in y.decisions):
            break
        if "p1" in x.decisions:
            if x.decisions["p1"].state != y.decisions["p1"].state:
                break
            same += 1
            if x.decisions["p1"].command != y.decisions["p1"].command:
                return -same  # the histories agree here and the decisions do not
        if x.decisions.get("p2") and x.decisions["p2"].command != y.decisions["p2"].command:
            break
    return same


@pytest.mark.parametrize(("seed", "spec"), [(5, SPEC), (6, SPEC), (5, TOP)])
def test_the_decision_does_not_change_when_the_opponents_hidden_parts_do(seed: int, spec: str) -> None:
    mine, theirs, other_bench, other_lead = _teams(seed)
    truth = _play(mine, theirs, seed, spec)
    assert truth.players["p1"].metadata["kind"] == "search"
    searched = [t for t in truth.turns if "search" in (t.decisions.get("p1") and
                                                      t.decisions["p1"].policy_info or {})]
    assert searched and isinstance(searched[0].decisions["p1"].policy_info["search"], dict)
    for changed in (other_bench, other_lead):
        assert changed != theirs
        shared = _same_history(truth, _play(mine, changed, seed, spec))
        assert shared >= 1, f"decision {-shared} of p1 changed with the opponent's hidden parts"


def test_the_same_battle_seed_gives_the_same_decisions() -> None:
    mine, theirs, _, _ = _teams(7)
    first, again = _play(mine, theirs, 7), _play(mine, theirs, 7)
    assert [t.decisions["p1"].command for t in first.turns if "p1" in t.decisions] == \
        [t.decisions["p1"].command for t in again.turns if "p1" in t.decisions]
    assert [t.decisions["p1"].policy_info for t in first.turns if "p1" in t.decisions] == \
        [t.decisions["p1"].policy_info for t in again.turns if "p1" in t.decisions]


@pytest.mark.parametrize("spec", [SPEC, TOP])
def test_search_asks_its_simulator_only_for_worlds_and_rollouts_and_never_sees_the_opponents_request(
        spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything the search sends goes through its own simulator (watched here, not replaced): only set data,
    worlds built from p1's view and rollouts in them; never a battle of the runner's, a fork or a snapshot of one.
    The opponent's request (its whole team) is never in what it sends: no world holds p2's true unseen sets."""
    sent: list[tuple[str, dict[str, Any]]] = []
    real_call = SimProcess.call

    async def watched(self: SimProcess, op: str, **fields: Any) -> dict[str, Any]:
        if self in search_module._ENGINE._processes:
            sent.append((op, fields))
        return await real_call(self, op, **fields)

    monkeypatch.setattr(SimProcess, "call", watched)
    mine, theirs, _, _ = _teams(8)
    recording = _play(mine, theirs, 8, spec)
    ops = {op for op, _ in sent}
    assert "world" in ops and "playout" in ops
    assert ops <= {"hello", "set-tally", "world", "playout", "forget"}
    true_sets = {(s.species, s.item, s.ability, tuple(s.moves)) for s in theirs}
    for op, fields in sent:
        if op != "world":
            continue
        foe = fields["sides"]["p2"]["team"]
        sampled = {(m["species"], m["item"], m["ability"], tuple(m["moves"])) for m in foe}
        assert len(sampled & true_sets) < len(true_sets)  # not the true team (a chance match of one set may be)
    if spec == TOP:  # the rollouts' player decides in the simulator, on the world's state only
        assert {str(fields["policy"]) for op, fields in sent if op == "playout"} == {"simple"}
    assert recording.result.reason in ("win", "tie", "turn_limit")


def test_the_search_kind_is_registered_with_typed_options_and_visitor_ranges() -> None:
    registry = default_registry()
    kind = registry.lookup("search?level=3")
    options = {o.name: o for o in kind.option_list()}
    assert options["level"].choices == (1, 2, 3) and options["level"].default == 2
    assert all(options[name].visitor_range for name in ("worlds", "rollouts", "horizon"))
    registry.check("search?level=1&worlds=3")
    with pytest.raises(PolicySpecError, match="level='4' is not one of 1, 2, 3"):
        registry.check("search?level=4")
    with pytest.raises(InputError, match="worlds must be 1-64"):
        make_policy("search?worlds=65")
    policy = make_policy("search?level=3&rollouts=8")
    assert policy.metadata()["rollouts"] == 8 and policy.metadata()["level"] == 3
    assert not [spec for spec, _, _ in registry.choices() if spec.startswith("search")]  # costly: the operator's
    served = ServedCatalogue.from_registry(registry, ["search"])
    assert served.admit("search?level=3&worlds=3") and served.admit("search?level=1&rollouts=64")
    with pytest.raises(PolicyRefused):
        served.admit("search?level=1&rollouts=65")
    with pytest.raises(PolicyRefused):
        ServedCatalogue.from_registry(registry).admit("search?level=1")

