"""The shaped reward: small, dense signals between two decision points, plus a terminal outcome kept apart.

Everything is computed from two ``RewardView`` snapshots of one side's ``Battle`` and the spectator protocol lines in
between, so it is pure and replayable from a recording. Team HP is a mean over all six slots (unseen opponents count
as full), which keeps one hit worth the same whether the opponent has shown one Pokémon or six.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wolfeclick.game.state import mean_team_hp
from wolfeclick.sides import Side, other

HP_UNIT = 10.0
"""Team-HP points (percent of a six-slot mean) per 1.0 of damage/healing reward."""
KO_VALUE = 3.0
HEALING_CAP = 3.0
SETUP_PER_STAGE = 0.5
SETUP_CAP = 2.0
SUPER_EFFECTIVE_VALUE = 0.5
IMMUNE_VALUE = -1.0
ILLEGAL_VALUE = -10.0
TURN_VALUE = -0.05
OUTCOME_VALUE = 10.0
SETUP_STATS = ("atk", "def", "spa", "spd", "spe")
"""Stats whose stages count as setup; accuracy/evasion are left out (evasion boosting is not play worth paying)."""

REWARD_TERMS: dict[str, str] = {
    "damage_dealt": "+1.0 per 10 points the opponent's six-slot team HP fell (unseen opponents count as 100%).",
    "damage_taken": "-1.0 per 10 points our six-slot team HP fell.",
    "knockouts": "+3.0 per newly fainted opponent, -3.0 per newly fainted Pokémon of ours.",
    "healing": "+1.0 per 10 points our six-slot team HP rose; at most 3.0 per battle.",
    "setup": "+0.5 per stat stage (atk/def/spa/spd/spe) our same active gained; at most 2.0 per Pokémon per battle.",
    "effectiveness": "+0.5 per '-supereffective' on the opponent after our move; -1.0 per '-immune' on the opponent.",
    "illegal": "-10.0 when the policy's output named no legal action (a fallback was played).",
    "turn": "-0.05 every decision, so dawdling costs.",
}
"""Each shaped term, as documented in docs/rewards.md. ``outcome`` (+10 win / -10 loss) is reported apart."""

COMPONENTS = tuple(REWARD_TERMS)


@dataclass(frozen=True)
class RewardView:
    """What the reward needs from one side's battle at one moment."""

    own_team_hp: float
    opp_team_hp: float
    own_fainted: int
    opp_fainted: int
    own_active: str | None
    own_boosts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class RewardBudget:
    """Caps spent so far this battle: healing reward in total, setup reward per species."""

    healing_used: float = 0.0
    setup_used: tuple[tuple[str, float], ...] = ()


def _team_reading(mons: Any) -> tuple[float, int]:
    """A team's six-slot mean HP (of fractions) and how many of it fainted, in one pass."""
    levels: list[float] = []
    fainted = 0
    for mon in mons:
        if mon.fainted:
            levels.append(0.0)
            fainted += 1
        else:
            levels.append(max(0.0, min(1.0, float(mon.current_hp_fraction))))
    return mean_team_hp(levels, full=1.0), fainted


def reward_view(battle: Any, own: tuple[float, int, Any] | None = None) -> RewardView:
    """Read a ``RewardView`` off a side's poke-env ``Battle``; ``own``: its own team's reading when already made
    (``game.snapshot.side_snapshot_read``: mean HP, fainted count, active Pokémon), so the team is not read twice."""
    if own is None:
        own_team_hp, own_fainted = _team_reading(battle.team.values())
        active = battle.active_pokemon
    else:
        own_team_hp, own_fainted, active = own
    opp_team_hp, opp_fainted = _team_reading(battle.opponent_team.values())
    boosts: tuple[tuple[str, int], ...] = ()
    if active is not None:
        boosts = tuple(sorted((s, int(v)) for s, v in active.boosts.items() if s in SETUP_STATS and v))
    return RewardView(
        own_team_hp=own_team_hp,
        opp_team_hp=opp_team_hp,
        own_fainted=own_fainted,
        opp_fainted=opp_fainted,
        own_active=active.species if active is not None else None,
        own_boosts=boosts,
    )


_SCORED = ("|move", "|turn", "|-supereffective", "|-immune")
"""Every line ``_effectiveness`` acts on starts with one of these; the rest have no effect there."""


def _effectiveness(events: list[str], side: Side) -> float:
    """Score ``-supereffective``/``-immune`` on the opponent that follow one of our ``|move|`` lines."""
    opp = other(side)
    ours = False
    score = 0.0
    for line in events:
        if line.startswith("|") and not line.startswith(_SCORED):
            continue  # only these tags matter; most lines are skipped without being split
        parts = line.split("|")
        tag = parts[1] if len(parts) > 1 else ""
        target = parts[2] if len(parts) > 2 else ""
        if tag == "move":
            ours = target.startswith(side)
        elif tag == "turn":
            ours = False
        elif ours and target.startswith(opp):
            if tag == "-supereffective":
                score += SUPER_EFFECTIVE_VALUE
            elif tag == "-immune":
                score += IMMUNE_VALUE
    return score


def shaped_reward(
    prev: RewardView,
    curr: RewardView,
    events: list[str],
    side: Side,
    illegal: bool,
    budget: RewardBudget,
) -> tuple[dict[str, float], RewardBudget]:
    """All shaped components for one decision (0.0 when not fired) and the budget after it."""
    own_delta = curr.own_team_hp - prev.own_team_hp
    opp_loss = prev.opp_team_hp - curr.opp_team_hp
    new_opp_faints = max(0, curr.opp_fainted - prev.opp_fainted)
    new_own_faints = max(0, curr.own_fainted - prev.own_fainted)

    healing = 0.0
    if own_delta > 0:
        healing = max(0.0, min(own_delta / HP_UNIT, HEALING_CAP - budget.healing_used))

    setup = 0.0
    setup_used = dict(budget.setup_used)
    if curr.own_active is not None and curr.own_active == prev.own_active:
        before, after = dict(prev.own_boosts), dict(curr.own_boosts)
        gained = sum(max(0, after.get(stat, 0) - before.get(stat, 0)) for stat in SETUP_STATS)
        spent = setup_used.get(curr.own_active, 0.0)
        setup = max(0.0, min(gained * SETUP_PER_STAGE, SETUP_CAP - spent))
        if setup:
            setup_used[curr.own_active] = spent + setup

    components = {
        "damage_dealt": opp_loss / HP_UNIT if opp_loss > 0 else 0.0,
        "damage_taken": own_delta / HP_UNIT if own_delta < 0 else 0.0,
        "knockouts": KO_VALUE * (new_opp_faints - new_own_faints),
        "healing": healing,
        "setup": setup,
        "effectiveness": _effectiveness(events, side),
        "illegal": ILLEGAL_VALUE if illegal else 0.0,
        "turn": TURN_VALUE,
    }
    rounded = {name: round(float(value), 4) + 0.0 for name, value in components.items()}
    new_budget = RewardBudget(  # built directly: dataclasses.replace inspects the fields on every call
        healing_used=budget.healing_used + healing,
        setup_used=tuple(sorted(setup_used.items())),
    )
    return rounded, new_budget


def total(components: dict[str, float]) -> float:
    """The shaped total of one decision (``outcome`` is never among the components)."""
    return round(sum(components.values()), 4) + 0.0


def outcome_reward(winner: str | None, side: Side) -> float:
    """+10 when ``side`` won, -10 when the other side won, 0 for a tie or an unfinished battle (winner None)."""
    if winner is None:
        return 0.0
    return OUTCOME_VALUE if winner == side else -OUTCOME_VALUE
