"""The state markdown a policy is shown: Part A (active field), B (own roster), C (opponent history).

It mirrors the three-part layout the published WolfeClick checkpoints were trained on, but spells things out:
statuses as ``BRN``/``PAR``/…, moves with full type names and base power, and an opponent speed range that accounts
for level and stat stages. It is built only from one side's poke-env ``Battle``, so it holds nothing that side
cannot know; orders follow the battle's own (request order for our team, reveal order for theirs), so the same
battle always gives the same text.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

from poke_env.data import GenData

TEAM_SLOTS = 6
"""Random battles field six Pokémon a side; unseen opponent slots are counted against this."""

SPEED_SPREADS = ((0, 0, 0.9), (31, 252, 1.1))
"""(IV, EV, nature) bounds of the opponent speed range: the slowest and fastest legal spreads. Random battles mostly
use 31 IVs and 84 EVs with a neutral nature, which lands inside this range."""

_BATTLE_STATS = ("atk", "def", "spa", "spd", "spe", "accuracy", "evasion")
_UNKNOWN_ITEM = GenData.UNKNOWN_ITEM


def display_name(mon: Any) -> str:
    """The Pokédex name (``Pikachu``), not poke-env's id (``pikachu``) nor a nickname."""
    species = getattr(mon, "species", "") or ""
    key = (getattr(mon, "gen", 0), species)
    name = _DISPLAY_NAMES.get(key)
    if name is None:
        try:
            name = str(GenData.from_gen(mon.gen).pokedex[species]["name"])
        except (KeyError, AttributeError, ValueError):
            name = species or "?"
        _DISPLAY_NAMES[key] = name
    return name


_DISPLAY_NAMES: dict[tuple[int, str], str] = {}
"""Pokédex names are fixed per generation; looking them up is a hot path of every state and snapshot."""


def status_name(mon: Any) -> str | None:
    """``'BRN'``, ``'PAR'``, … or None; fainting is reported by the fainted flag, not as a status."""
    status = getattr(mon, "status", None)
    if status is None:
        return None
    name = str(status._name_)  # the member's name; ``.name`` goes through enum's slower descriptor (hot path)
    return None if name == "FNT" else name


def hp_percent(mon: Any) -> float:
    """HP as a percent, one decimal; 0 when fainted."""
    if mon.fainted:
        return 0.0
    return round(max(0.0, min(1.0, float(mon.current_hp_fraction))) * 100.0, 1)


def public_hp(percent: float | None) -> int:
    """HP as Showdown shows it to spectators: whole percent, rounded up, never 100 while damaged and never 0 while
    alive. The app's one way of writing an HP level (narration, field, team rows, chart), so a 90.04% Pokémon is
    91% everywhere (its snapshot, one decimal, would have read 90.0 → 90%)."""
    if percent is None:
        return 0
    value = round(float(percent), 6)
    if value <= 0:
        return 0
    shown = math.ceil(value)
    return 99 if shown >= 100 and value < 100 else min(100, shown)


def request_hp(condition: str) -> tuple[float, float] | None:
    """A request's ``condition`` as (HP now, max HP): ``'123/300 par'`` → (123, 300), ``'0 fnt'`` → (0, 1); None
    when it names no HP. The one reader of that text (the buttons' percent, the RL features)."""
    parts = str(condition or "").split()
    head = parts[0] if parts else ""
    if "/" not in head:
        return (0.0, 1.0) if head == "0" else None
    now, _, top = head.partition("/")
    try:
        now_f, top_f = float(now), float(top)
    except ValueError:
        return None
    return (now_f, top_f) if top_f > 0 else None


def team_share(count: int, *, slots: int = TEAM_SLOTS) -> float:
    """``count`` Pokémon as a share of a team's ``slots`` (alive, fainted, seen): the one place a count is divided by
    the team size, beside the one HP mean below."""
    return count / slots


def mean_team_hp(levels: Sequence[float], *, full: float = 100.0, slots: int = TEAM_SLOTS) -> float:
    """A team's HP as one percent comparable across turns: the mean over all ``slots`` slots of each Pokémon's HP
    (``levels``, out of ``full``: 1.0 for fractions, 100 for percents; a fainted one is 0 there), an unseen slot
    counting as full. The reward, the recorded snapshot and the viewer's chart all read this one mean; callers
    round it (the snapshot to one decimal, the chart to two). The arithmetic order is fixed: recordings keep it."""
    known = list(levels[:slots])
    return 100.0 / full * (sum(known) + full * (slots - len(known))) / slots


def slot_share(count: float, *, slots: int = TEAM_SLOTS) -> float:
    """``count`` of a team's ``slots`` as a share (4 Pokémon standing → 0.667): the one place, beside
    ``mean_team_hp``, that divides by the team's size (the value model's features read shares of six)."""
    return count / slots


def stage_multiplier(stage: int) -> float:
    """The in-battle multiplier of a stat stage (-6..+6) for atk/def/spa/spd/spe."""
    stage = max(-6, min(6, stage))
    return (2 + stage) / 2 if stage >= 0 else 2 / (2 - stage)


def speed_stat(base: int, level: int, iv: int, ev: int, nature: float) -> int:
    """The standard (gen 3+) non-HP stat formula applied to speed."""
    return math.floor((math.floor((2 * base + iv + ev // 4) * level / 100) + 5) * nature)


def speed_range(mon: Any) -> tuple[int, int] | None:
    """Slowest and fastest speed the opponent's active could have, after its speed stage; None if base unknown."""
    base = (mon.base_stats or {}).get("spe")
    if not base:
        return None
    return _speed_bounds(base, mon.level, mon.boosts.get("spe", 0))


@functools.lru_cache(maxsize=4096)
def _speed_bounds(base: int, level: int, stage: int) -> tuple[int, int]:
    """``speed_range``'s arithmetic, remembered: an active's base, level and stage repeat turn after turn."""
    mult = stage_multiplier(stage)
    low, high = (math.floor(speed_stat(base, level, iv, ev, nat) * mult) for iv, ev, nat in SPEED_SPREADS)
    return low, high


def _stages(mon: Any) -> str:
    boosts = mon.boosts  # a property: read once, not twice per stat
    parts = [f"{stat} {boosts[stat]:+d}" for stat in _BATTLE_STATS if boosts.get(stat, 0)]
    return ", ".join(parts) or "none"


def _item(item: str | None) -> str:
    """poke-env marks an unseen item ``unknown_item`` and a removed or absent one None/empty."""
    if item == _UNKNOWN_ITEM:
        return "unknown"
    return item or "none"


def _opp_ability(mon: Any) -> str:
    if mon.ability:
        return str(mon.ability)
    possible = [a for a in (mon.possible_abilities or []) if a]
    return "possible: " + " / ".join(possible) if possible else "unknown"


def _move_line(move: Any) -> str:
    """``Thunderbolt (Electric, 90 BP)``; a move's type and power are fixed per generation, so this is cached."""
    key = (move.id, getattr(move, "_gen", 0))
    line = _MOVE_LINES.get(key)
    if line is None:
        line = _MOVE_LINES[key] = _describe_move(move)
    return line


_MOVE_LINES: dict[tuple[str, int], str] = {}


def _describe_move(move: Any) -> str:
    name = move.entry.get("name", move.id) if isinstance(move.entry, dict) else move.id
    type_name = move.type.name.replace("_", " ").title() if move.type is not None else "Unknown"
    if move.category.name == "STATUS":
        power = "status"
    elif move.base_power:
        power = f"{move.base_power} BP"
    else:
        power = "variable BP"
    return f"{name} ({type_name}, {power})"


def _enum_names(table: dict[Any, Any]) -> str:
    if not table:  # the usual case: no weather, no field, no side condition
        return "none"
    names = sorted(key.name.replace("_", " ").lower() for key in table)
    return ", ".join(names) or "none"


def _own_active(mon: Any) -> list[str]:
    spe = (mon.stats or {}).get("spe")
    if spe:
        stage = mon.boosts.get("spe", 0)
        speed = f"{spe}" + (f" (effective {math.floor(spe * stage_multiplier(stage))} at {stage:+d})" if stage else "")
    else:
        speed = "unknown"
    return [
        f"### Our active: {display_name(mon)} (L{mon.level})",
        f"- HP: {hp_percent(mon):.1f}%",
        f"- Status: {status_name(mon) or 'none'}",
        f"- Ability: {mon.ability or 'unknown'}",
        f"- Item: {_item(mon.item)}",
        f"- Stat stages: {_stages(mon)}",
        f"- Speed: {speed}",
    ]


def _opp_active(mon: Any) -> list[str]:
    bounds = speed_range(mon)
    speed = f"{bounds[0]}-{bounds[1]}" if bounds else "unknown"
    return [
        f"### Opponent active: {display_name(mon)} (L{mon.level})",
        f"- HP: {hp_percent(mon):.1f}%",
        f"- Status: {status_name(mon) or 'none'}",
        f"- Ability: {_opp_ability(mon)}",
        f"- Item: {_item(mon.item)}",
        f"- Stat stages: {_stages(mon)}",
        f"- Possible speed: {speed} (IV 0/EV 0/-Spe nature to IV 31/EV 252/+Spe nature, with stages)",
    ]


def _part_a(battle: Any) -> list[str]:
    lines = ["## Part A: Active Field"]
    own, opp = battle.active_pokemon, battle.opponent_active_pokemon
    lines += _own_active(own) if own is not None else ["### Our active: none"]
    lines += _opp_active(opp) if opp is not None else ["### Opponent active: none"]
    lines += [
        "### Field",
        f"- Weather: {_enum_names(battle.weather)}",
        f"- Fields: {_enum_names(battle.fields)}",
        f"- Our side: {_enum_names(battle.side_conditions)}",
        f"- Opponent side: {_enum_names(battle.opponent_side_conditions)}",
    ]
    return lines


RosterLines = dict[tuple[Any, ...], tuple[str, str]]
"""One battle's roster lines by everything they show (``format_state``'s ``cache``)."""


def _mon_lines(mon: Any, own: bool) -> tuple[str, str]:
    """A roster entry's two lines: one's own Pokémon as it knows them, or the opponent's as revealed so far."""
    tags = [tag for tag, on in (("active", mon.active), ("fainted", mon.fainted)) if on]
    moves = [_move_line(move) for move in mon.moves.values()]
    hp, ability, moves_label, no_moves = (("HP", mon.ability or "unknown", "Moves", "unknown") if own
                                          else ("Last HP", _opp_ability(mon), "Revealed moves", "none"))
    return (
        f"- {display_name(mon)} (L{mon.level}){' [' + ', '.join(tags) + ']' if tags else ''}"
        f" | {hp} {hp_percent(mon):.1f}% | Status: {status_name(mon) or 'none'}"
        f" | Item: {_item(mon.item)} | Ability: {ability}",
        f"  - {moves_label}: " + ("; ".join(moves) if moves else no_moves),
    )


def _roster(mons: Any, own: bool, cache: RosterLines | None) -> list[str]:
    """``_mon_lines`` for each Pokémon; with ``cache``, looked up by what they show.

    The key is every value ``_mon_lines`` reads (the generation aside, which is the battle's, so one cache serves one
    battle) and the move objects themselves (a move's line depends on its id and generation only). Reading them is
    a fraction of the cost of writing the lines, and most of a roster is unchanged from one decision to the next.
    """
    lines: list[str] = []
    for mon in mons:
        if cache is None:
            lines += _mon_lines(mon, own)
            continue
        key = (own, mon.species, mon.level, mon.active, mon.fainted, mon.current_hp_fraction, mon.status,
               mon.item, mon.ability, tuple(mon.possible_abilities or ()), *mon.moves.values())
        shown = cache.get(key)
        if shown is None:
            shown = cache[key] = _mon_lines(mon, own)
        lines += shown
    return lines


def _part_b(battle: Any, cache: RosterLines | None = None) -> list[str]:
    lines = ["## Part B: Full Self Roster"]
    if not battle.team:
        return lines + ["- (team not known yet)"]
    return lines + _roster(battle.team.values(), True, cache)


def _part_c(battle: Any, cache: RosterLines | None = None) -> list[str]:
    seen = list(battle.opponent_team.values())
    return (["## Part C: Opponent History"] + _roster(seen, False, cache)
            + [f"- Unrevealed: {max(0, TEAM_SLOTS - len(seen))}"])


def format_state(battle: Any, cache: RosterLines | None = None) -> str:
    """The state markdown for the side that owns ``battle`` (a poke-env ``Battle`` fed from that side's stream).

    ``cache`` (an empty dict at first, then kept for this one battle) reuses roster lines whose Pokémon show the
    same as before: the text is the same with or without it."""
    return "\n".join(_part_a(battle) + [""] + _part_b(battle, cache) + [""] + _part_c(battle, cache)) + "\n"
