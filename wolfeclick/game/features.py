"""A fixed-size numeric view of one side's decision: what ``ShowdownEnv(observation="vector"|"dict")`` returns.

Text suits language models; RL libraries (Stable-Baselines3, CleanRL, RLlib) want a ``Box`` of numbers whose every
position means the same thing at every step. This module turns what a policy may see (the side's poke-env
``Battle``, the simulator's request and the legal actions) into that vector, as a pure function: the same state
gives the same bytes. Every value lies in [-1, 1]; ``FEATURE_NAMES[i]`` names position ``i`` and ``GROUPS`` the
slices (the ``dict`` observation's keys). ``docs/training.md`` lists them.

What it reads is only what the side may know: its own team from the request, the opponent from what the battle
has revealed (an unrevealed slot counts as unseen at full HP, as the reward's team HP does).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from poke_env.battle import Field, Move, MoveCategory, PokemonType, SideCondition, Status, Weather
from poke_env.data import GenData

from wolfeclick.game.actions import MAX_MOVES, MAX_SWITCHES, LegalAction
from wolfeclick.game.discrete import ACTION_COUNT, action_mask
from wolfeclick.game.state import (
    TEAM_SLOTS,
    mean_team_hp,
    request_hp,
    speed_range,
    stage_multiplier,
    team_share,
)

TYPES: tuple[PokemonType, ...] = tuple(t for t in PokemonType if t not in (PokemonType.THREE_QUESTION_MARKS,
                                                                           PokemonType.STELLAR))
"""The 18 types, in poke-env's enum order."""
STATUSES = (Status.BRN, Status.FRZ, Status.PAR, Status.PSN, Status.SLP, Status.TOX)
BOOSTS = ("atk", "def", "spa", "spd", "spe", "accuracy", "evasion")
BASE_STATS = ("hp", "atk", "def", "spa", "spd", "spe")
CATEGORIES = (MoveCategory.PHYSICAL, MoveCategory.SPECIAL, MoveCategory.STATUS)
WEATHERS: tuple[tuple[str, tuple[Weather, ...]], ...] = (
    ("sun", (Weather.SUNNYDAY, Weather.DESOLATELAND)), ("rain", (Weather.RAINDANCE, Weather.PRIMORDIALSEA)),
    ("sand", (Weather.SANDSTORM,)), ("snow", (Weather.SNOWSCAPE, Weather.HAIL)))
FIELDS = (("electric_terrain", Field.ELECTRIC_TERRAIN), ("grassy_terrain", Field.GRASSY_TERRAIN),
          ("misty_terrain", Field.MISTY_TERRAIN), ("psychic_terrain", Field.PSYCHIC_TERRAIN),
          ("trick_room", Field.TRICK_ROOM), ("gravity", Field.GRAVITY))
SIDE_CONDITIONS: tuple[tuple[str, SideCondition, int], ...] = (
    ("stealth_rock", SideCondition.STEALTH_ROCK, 1), ("spikes", SideCondition.SPIKES, 3),
    ("toxic_spikes", SideCondition.TOXIC_SPIKES, 2), ("sticky_web", SideCondition.STICKY_WEB, 1),
    ("reflect", SideCondition.REFLECT, 1), ("light_screen", SideCondition.LIGHT_SCREEN, 1),
    ("aurora_veil", SideCondition.AURORA_VEIL, 1), ("tailwind", SideCondition.TAILWIND, 1),
    ("safeguard", SideCondition.SAFEGUARD, 1))
"""(name, condition, layers that count as full): spikes stack to 3, toxic spikes to 2, the rest are on or off."""
MAX_DEX = 1025.0
MAX_BASE_STAT = 255.0
MAX_POWER = 250.0
MAX_EFFECTIVENESS = 4.0
MAX_SPEED = 600.0
MAX_TURN = 100.0
MAX_STAGE = 6.0
"""Boost stages run from -6 to +6; move priority (-7 to +5) is scaled by the same number."""


def _mon_names(prefix: str) -> list[str]:
    return [f"{prefix}_present", f"{prefix}_dex", f"{prefix}_level", *(f"{prefix}_base_{s}" for s in BASE_STATS),
            *(f"{prefix}_type_{t.name.lower()}" for t in TYPES), f"{prefix}_hp", *(
                f"{prefix}_status_{s.name.lower()}" for s in STATUSES), *(f"{prefix}_boost_{b}" for b in BOOSTS),
            f"{prefix}_terastallized"]


MOVE_FIELDS = ("legal", "power", "effectiveness", "stab", "accuracy", "pp", "physical", "special", "status",
               "priority")
SWITCH_FIELDS = ("present", "hp", "fainted", "statused", "threat", "offense")
TEAM_FIELDS = ("me_alive", "me_team_hp", "opp_fainted", "opp_revealed", "opp_team_hp")
FIELD_FIELDS = (*(f"weather_{name}" for name, _ in WEATHERS), *(name for name, _ in FIELDS),
                *(f"me_{name}" for name, _, _ in SIDE_CONDITIONS), *(f"opp_{name}" for name, _, _ in SIDE_CONDITIONS),
                "me_speed", "faster_than_slowest", "faster_than_fastest", "can_gimmick", "opp_used_tera", "turn")

GROUP_NAMES: dict[str, tuple[str, ...]] = {
    "me": tuple(_mon_names("me")),
    "opp": tuple(_mon_names("opp")),
    "moves": tuple(f"move{k}_{f}" for k in range(1, MAX_MOVES + 1) for f in MOVE_FIELDS),
    "switches": tuple(f"switch{p}_{f}" for p in range(2, MAX_SWITCHES + 2) for f in SWITCH_FIELDS),
    "team": TEAM_FIELDS,
    "field": FIELD_FIELDS,
}
"""The feature groups, in vector order: both actives, the four move slots, the five switch slots (team positions
2–6), team totals, and field, side conditions, speed and gimmick."""
FEATURE_NAMES: tuple[str, ...] = tuple(name for names in GROUP_NAMES.values() for name in names)
FEATURE_COUNT = len(FEATURE_NAMES)
GROUPS: dict[str, slice] = {}
_start = 0
for _group, _names in GROUP_NAMES.items():
    GROUPS[_group] = slice(_start, _start + len(_names))
    _start += len(_names)


def _clip(value: float, low: float = -1.0, high: float = 1.0) -> float:
    return float(min(high, max(low, value)))


@functools.cache
def _gen_data(gen: int) -> Any:
    return GenData.from_gen(gen)


@dataclass(frozen=True)
class MoveNumbers:
    power: float
    type: PokemonType | None
    category: MoveCategory
    accuracy: float
    max_pp: int
    priority: int


@functools.cache
def _move(move_id: str, gen: int) -> MoveNumbers | None:
    """A move's numbers from poke-env's data; None for an id it lacks or cannot read whole (``recharge``, some
    request-only pseudo-moves have no ``priority`` or type entry)."""
    try:
        move = Move(move_id, gen)
        return MoveNumbers(float(move.base_power), move.type, move.category, float(move.accuracy), int(move.max_pp),
                           int(move.priority))
    except Exception:  # noqa: BLE001 - a move without known numbers, whatever poke-env raised for it
        return None


def effectiveness(attack: PokemonType | None, defender: Sequence[PokemonType], gen: int) -> float:
    """The type multiplier of ``attack`` on ``defender``'s types (1 when either is unknown)."""
    if attack is None or attack not in TYPES or not defender:
        return 1.0
    chart = _gen_data(gen).type_chart
    result = 1.0
    for kind in defender:
        if kind in TYPES:
            result *= float(chart.get(kind.name, {}).get(attack.name, 1.0))
    return result


def _types(mon: Any) -> list[PokemonType]:
    try:
        return [t for t in (mon.types or []) if t is not None]
    except (AttributeError, KeyError):
        return []


def _mon(mon: Any, gen: int) -> list[float]:
    """Presence, species (dex number, level, base stats, types), HP, status, boosts, terastallized."""
    if mon is None:
        return [0.0] * len(GROUP_NAMES["me"])
    entry = _gen_data(gen).pokedex.get(getattr(mon, "species", ""), {})
    base = mon.base_stats or {}
    types = set(_types(mon))
    status = mon.status
    return [
        1.0, _clip(float(entry.get("num", 0)) / MAX_DEX, 0.0), _clip((mon.level or 0) / 100.0, 0.0),
        *(_clip(base.get(s, 0) / MAX_BASE_STAT, 0.0) for s in BASE_STATS),
        *(1.0 if t in types else 0.0 for t in TYPES),
        0.0 if mon.fainted else _clip(float(mon.current_hp_fraction), 0.0),
        *(1.0 if status == s else 0.0 for s in STATUSES),
        *(_clip(mon.boosts.get(b, 0) / MAX_STAGE) for b in BOOSTS),
        1.0 if getattr(mon, "is_terastallized", False) else 0.0,
    ]


def _moves(battle: Any, request: dict[str, Any], mask: np.ndarray, me: Any, opp: Any) -> list[float]:
    """Each of the request's four move slots: legal now, base power, type effectiveness on the opponent's active,
    same-type bonus, accuracy, PP left, category, priority."""
    active = (request.get("active") or [{}])[0] if request.get("active") else {}
    slots = list(active.get("moves") or [])[:MAX_MOVES]
    mine, theirs = set(_types(me)) if me is not None else set(), _types(opp) if opp is not None else []
    out: list[float] = []
    for k in range(MAX_MOVES):
        if k >= len(slots):
            out.extend([0.0] * len(MOVE_FIELDS))
            continue
        slot = slots[k]
        move = _move(str(slot.get("id") or ""), battle.gen)
        if move is None:
            out.extend([float(mask[k]), *([0.0] * (len(MOVE_FIELDS) - 1))])
            continue
        category = move.category
        damaging = category != MoveCategory.STATUS
        maxpp = slot.get("maxpp") or move.max_pp or 1
        pp = slot.get("pp", maxpp)
        out.extend([
            float(mask[k]), _clip(move.power / MAX_POWER, 0.0),
            _clip(effectiveness(move.type, theirs, battle.gen) / MAX_EFFECTIVENESS, 0.0) if damaging else 0.0,
            1.0 if damaging and move.type in mine else 0.0, _clip(float(move.accuracy), 0.0),
            _clip(float(pp) / float(maxpp), 0.0),
            *(1.0 if category == c else 0.0 for c in CATEGORIES), _clip(move.priority / MAX_STAGE),
        ])
    return out


def _switches(battle: Any, request: dict[str, Any], opp: Any) -> list[float]:
    """Team positions 2–6 from the request: there, HP, fainted, statused, how hard the opponent's active hits it
    (its best type on this Pokémon's types) and how hard this Pokémon's types hit the opponent's active."""
    team = list((request.get("side") or {}).get("pokemon") or [])
    theirs = _types(opp) if opp is not None else []
    out: list[float] = []
    for position in range(2, MAX_SWITCHES + 2):
        if position > len(team):
            out.extend([0.0] * len(SWITCH_FIELDS))
            continue
        entry = team[position - 1]
        condition = str(entry.get("condition", ""))
        fainted = condition.endswith(" fnt") or condition == "0 fnt"
        mon = battle.team.get(str(entry.get("ident", "")))
        types = _types(mon) if mon is not None else []
        threat = max((effectiveness(t, types, battle.gen) for t in theirs), default=1.0)
        offense = max((effectiveness(t, theirs, battle.gen) for t in types), default=1.0)
        out.extend([1.0, _hp_fraction(condition), 1.0 if fainted else 0.0,
                    1.0 if len(condition.split()) > 1 and not fainted else 0.0,
                    _clip(threat / MAX_EFFECTIVENESS, 0.0), _clip(offense / MAX_EFFECTIVENESS, 0.0)])
    return out


def _hp_fraction(condition: str) -> float:
    """``'184/284 par'`` → 0.648; ``'0 fnt'`` → 0."""
    hp = request_hp(condition)
    return _clip(hp[0] / hp[1], 0.0) if hp is not None else 0.0


def _team(battle: Any, request: dict[str, Any]) -> list[float]:
    team = list((request.get("side") or {}).get("pokemon") or [])
    levels = [_hp_fraction(str(e.get("condition", ""))) for e in team]
    alive = sum(1 for level in levels if level > 0)
    seen = list(battle.opponent_team.values())
    fainted = sum(1 for mon in seen if mon.fainted)
    opp_levels = [0.0 if mon.fainted else float(mon.current_hp_fraction) for mon in seen][:TEAM_SLOTS]
    opp_hp = mean_team_hp(opp_levels, full=1.0) / 100.0  # the house's one team-HP mean (unseen slots full)
    me_hp = mean_team_hp(levels[:TEAM_SLOTS], full=1.0) / 100.0
    return [team_share(alive), _clip(me_hp, 0.0), team_share(fainted), _clip(team_share(len(seen)), 0.0),
            _clip(opp_hp, 0.0)]


def _field(battle: Any, request: dict[str, Any], mask: np.ndarray, opp: Any) -> list[float]:
    weather, fields = battle.weather or {}, battle.fields or {}
    mine, theirs = battle.side_conditions or {}, battle.opponent_side_conditions or {}
    side = [_clip(float(conditions.get(c, 0) if c in conditions else 0) / full, 0.0) if full > 1 else (
        1.0 if c in conditions else 0.0) for conditions in (mine, theirs) for _, c, full in SIDE_CONDITIONS]
    own = ((request.get("side") or {}).get("pokemon") or [{}])[0]
    me_active = battle.active_pokemon
    raw = float((own.get("stats") or {}).get("spe") or 0)
    speed = raw * stage_multiplier(me_active.boosts.get("spe", 0)) if me_active is not None else raw
    bounds = speed_range(opp) if opp is not None else None
    return [
        *(1.0 if any(w in weather for w in kinds) else 0.0 for _, kinds in WEATHERS),
        *(1.0 if f in fields else 0.0 for _, f in FIELDS), *side,
        _clip(speed / MAX_SPEED, 0.0),
        1.0 if bounds is not None and speed > bounds[0] else 0.0,
        1.0 if bounds is not None and speed > bounds[1] else 0.0,
        1.0 if mask[-MAX_MOVES:].any() else 0.0,
        1.0 if getattr(battle, "opponent_used_tera", False) else 0.0,
        _clip(float(battle.turn) / MAX_TURN, 0.0),
    ]


def feature_groups(battle: Any, request: dict[str, Any], legal: Sequence[LegalAction]) -> dict[str, np.ndarray]:
    """The features by group (``GROUP_NAMES``), each a ``float32`` array."""
    mask = action_mask(request, legal)
    me, opp = battle.active_pokemon, battle.opponent_active_pokemon
    builders: dict[str, Callable[[], list[float]]] = {
        "me": lambda: _mon(me, battle.gen), "opp": lambda: _mon(opp, battle.gen),
        "moves": lambda: _moves(battle, request, mask, me, opp), "switches": lambda: _switches(battle, request, opp),
        "team": lambda: _team(battle, request), "field": lambda: _field(battle, request, mask, opp)}
    groups = {}
    for name, build in builders.items():
        values = np.asarray(build(), dtype=np.float32)
        assert values.shape == (len(GROUP_NAMES[name]),), (name, values.shape)
        groups[name] = values
    return groups


def features(battle: Any, request: dict[str, Any], legal: Sequence[LegalAction]) -> np.ndarray:
    """The whole vector (``FEATURE_COUNT`` ``float32`` values in [-1, 1], ``FEATURE_NAMES`` order)."""
    return np.concatenate(list(feature_groups(battle, request, legal).values()))


def empty_groups() -> dict[str, np.ndarray]:
    """Every group zero: the observation once the battle is over (there is no decision to describe)."""
    return {name: np.zeros(len(names), dtype=np.float32) for name, names in GROUP_NAMES.items()}


__all__ = ["ACTION_COUNT", "FEATURE_COUNT", "FEATURE_NAMES", "GROUPS", "GROUP_NAMES", "empty_groups", "feature_groups",
           "features"]
