"""Every shaped-reward term fires on its event, with the documented value and cap."""

from __future__ import annotations

import pytest
from game_helpers import both, new_battle, request, team

from wolfeclick.game.reward import (
    REWARD_TERMS,
    RewardBudget,
    RewardView,
    outcome_reward,
    reward_view,
    shaped_reward,
    total,
)

KO_LINES = [
    "|move|p1a: Pikachu|Thunderbolt|p2a: Gyarados",
    "|-supereffective|p2a: Gyarados",
    "|-damage|p2a: Gyarados|0 fnt",
    "|faint|p2a: Gyarados",
]


def view(**overrides: object) -> RewardView:
    base: dict[str, object] = dict(
        own_team_hp=100.0, opp_team_hp=100.0, own_fainted=0, opp_fainted=0, own_active="garchomp", own_boosts=()
    )
    base.update(overrides)
    return RewardView(**base)  # type: ignore[arg-type]


def step(side: str, lines: list[str], illegal: bool = False, budget: RewardBudget = RewardBudget()):
    """Shaped reward for ``side`` across the opening and then ``lines``."""
    prev_p1, prev_p2 = both([])
    curr_p1, curr_p2 = both(lines)
    prev, curr = (prev_p1, curr_p1) if side == "p1" else (prev_p2, curr_p2)
    return shaped_reward(reward_view(prev), reward_view(curr), lines, side, illegal, budget)


def test_components_always_present_and_turn_cost() -> None:
    comps, budget = shaped_reward(view(), view(), [], "p1", False, RewardBudget())
    assert set(comps) == set(REWARD_TERMS)
    assert comps["turn"] == -0.05
    assert all(v == 0.0 for k, v in comps.items() if k != "turn")
    assert total(comps) == -0.05
    assert budget == RewardBudget()


def test_knockout_rewards_the_attacker_and_penalises_the_fainted_side() -> None:
    p1, _ = step("p1", KO_LINES)
    p2, _ = step("p2", KO_LINES)
    assert p1["knockouts"] == 3.0
    assert p2["knockouts"] == -3.0
    # A faint also empties one of six slots: 100 points / 6 / 10.
    assert p1["damage_dealt"] == pytest.approx(1.6667)
    assert p2["damage_taken"] == pytest.approx(-1.6667)
    assert p1["effectiveness"] == 0.5 and p2["effectiveness"] == 0.0


def test_damage_counts_six_slots_not_the_revealed_one() -> None:
    lines = ["|move|p1a: Pikachu|Surf|p2a: Gyarados", "|-resisted|p2a: Gyarados", "|-damage|p2a: Gyarados|100/200"]
    p1, _ = step("p1", lines)
    p2, _ = step("p2", lines)
    assert p1["damage_dealt"] == pytest.approx(50 / 6 / 10, abs=1e-4)
    assert p1["damage_dealt"] == 0.8333
    assert p2["damage_taken"] == -0.8333
    assert p1["damage_taken"] == 0.0 and p2["damage_dealt"] == 0.0


def test_super_effective_after_our_move_only() -> None:
    se = [
        "|move|p1a: Pikachu|Thunderbolt|p2a: Gyarados",
        "|-supereffective|p2a: Gyarados",
        "|-damage|p2a: Gyarados|20/200",
    ]
    assert step("p1", se)[0]["effectiveness"] == 0.5
    # The opponent hitting us super-effectively is not our effectiveness.
    theirs = ["|move|p2a: Gyarados|Earthquake|p1a: Pikachu", "|-supereffective|p1a: Pikachu"]
    comps, _ = shaped_reward(view(), view(), theirs, "p1", False, RewardBudget())
    assert comps["effectiveness"] == 0.0
    comps, _ = shaped_reward(view(), view(), theirs, "p2", False, RewardBudget())
    assert comps["effectiveness"] == 0.5
    # Only lines up to the next |move| belong to our move.
    later = [
        "|move|p1a: Pikachu|Surf|p2a: Gyarados",
        "|move|p2a: Gyarados|Waterfall|p1a: Pikachu",
        "|-supereffective|p2a: Gyarados",
    ]
    comps, _ = shaped_reward(view(), view(), later, "p1", False, RewardBudget())
    assert comps["effectiveness"] == 0.0


def test_immune_costs_one() -> None:
    lines = [
        "|move|p2a: Gyarados|Thunder Wave|p1a: Pikachu",
        "|-immune|p1a: Pikachu",
        "|move|p1a: Pikachu|Thunder Wave|p2a: Gyarados",
        "|-immune|p2a: Gyarados",
    ]
    comps, _ = shaped_reward(view(), view(), lines, "p1", False, RewardBudget())
    assert comps["effectiveness"] == -1.0
    comps, _ = shaped_reward(view(), view(), lines, "p2", False, RewardBudget())
    assert comps["effectiveness"] == -1.0
    assert step("p1", lines)[0]["effectiveness"] == -1.0


def test_illegal_costs_ten() -> None:
    comps, _ = step("p1", [], illegal=True)
    assert comps["illegal"] == -10.0
    assert total(comps) == -10.05
    assert step("p1", [], illegal=False)[0]["illegal"] == 0.0


def test_healing_fires_and_is_capped_at_three_per_battle() -> None:
    req = request("p1", team("p1", {"Pikachu": "20/200"}))
    lead = ["|switch|p1a: Pikachu|Pikachu, L88|20/200"]
    hurt = new_battle("p1", req, lead)
    healed = new_battle("p1", req, lead + ["|-heal|p1a: Pikachu|120/200"])
    comps, budget = shaped_reward(reward_view(hurt), reward_view(healed), [], "p1", False, RewardBudget())
    assert comps["healing"] == pytest.approx(50 / 6 / 10, abs=1e-4)
    assert budget.healing_used == pytest.approx(50 / 6 / 10)

    budget = RewardBudget()
    comps, budget = shaped_reward(view(own_team_hp=40.0), view(own_team_hp=100.0), [], "p1", False, budget)
    assert comps["healing"] == 3.0 and budget.healing_used == 3.0
    comps, budget = shaped_reward(view(own_team_hp=80.0), view(own_team_hp=100.0), [], "p1", False, budget)
    assert comps["healing"] == 0.0 and budget.healing_used == 3.0


def test_setup_fires_and_is_capped_per_pokemon() -> None:
    lines = ["|move|p1a: Pikachu|Nasty Plot|p1a: Pikachu", "|-boost|p1a: Pikachu|spa|2"]
    comps, budget = step("p1", lines)
    assert comps["setup"] == 1.0
    assert dict(budget.setup_used) == {"pikachu": 1.0}

    budget = RewardBudget()
    plus2, plus4, plus6 = (view(own_boosts=(("atk", n),)) for n in (2, 4, 6))
    comps, budget = shaped_reward(view(), plus2, [], "p1", False, budget)
    assert comps["setup"] == 1.0
    comps, budget = shaped_reward(plus2, plus4, [], "p1", False, budget)
    assert comps["setup"] == 1.0
    comps, budget = shaped_reward(plus4, plus6, [], "p1", False, budget)
    assert comps["setup"] == 0.0
    assert dict(budget.setup_used) == {"garchomp": 2.0}
    # Another Pokémon has its own cap.
    other = view(own_active="scizor")
    comps, budget = shaped_reward(other, view(own_active="scizor", own_boosts=(("atk", 2),)), [], "p1", False, budget)
    assert comps["setup"] == 1.0


def test_setup_needs_the_same_active() -> None:
    comps, _ = shaped_reward(view(own_active="scizor"), view(own_boosts=(("atk", 2),)), [], "p1", False, RewardBudget())
    assert comps["setup"] == 0.0


def test_setup_counts_stage_gains_from_a_drop_and_ignores_evasion() -> None:
    dropped = view(own_boosts=(("atk", -1),))
    comps, _ = shaped_reward(dropped, view(own_boosts=(("atk", 1),)), [], "p1", False, RewardBudget())
    assert comps["setup"] == 1.0
    comps, _ = shaped_reward(dropped, view(), [], "p1", False, RewardBudget())
    assert comps["setup"] == 0.5
    p1, _ = both(["|-boost|p1a: Pikachu|evasion|2"])
    assert reward_view(p1).own_boosts == ()


def test_budget_is_immutable_and_components_rounded() -> None:
    budget = RewardBudget()
    comps, new = shaped_reward(view(opp_team_hp=100.0), view(opp_team_hp=100 - 100 / 3), [], "p1", False, budget)
    assert budget == RewardBudget() and new is not budget
    assert comps["damage_dealt"] == 3.3333


def test_outcome_is_apart_from_total() -> None:
    assert outcome_reward("p1", "p1") == 10.0
    assert outcome_reward("p2", "p1") == -10.0
    assert outcome_reward(None, "p2") == 0.0
    assert "outcome" not in REWARD_TERMS


def test_reward_view_reads_a_battle() -> None:
    p1, p2 = both(KO_LINES + ["|-boost|p1a: Pikachu|spe|1"])
    v1, v2 = reward_view(p1), reward_view(p2)
    assert v1.opp_fainted == 1 and v1.own_fainted == 0
    assert v2.own_fainted == 1 and v2.opp_fainted == 0
    assert v1.own_active == "pikachu" and v1.own_boosts == (("spe", 1),)
    assert v1.opp_team_hp == pytest.approx(500 / 6)
    assert v2.own_team_hp == pytest.approx(500 / 6)
