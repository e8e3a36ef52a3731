"""One side's view of a battle as a world the simulator can play on: pure (issue 61).

``revealed_foes`` reads what a side's poke-env ``Battle`` has seen of the opposing team (``sets.Revealed`` for each
Pokémon, with its public state: HP fraction, status, boosts). ``world_request`` puts together the bridge's ``world``
request from the side's own request (its team exactly: sets, stats, HP, PP), the public field and a sampled opposing
team. Only the side's own ``Battle`` and its own request are read: never the opponent's request, never a snapshot
of the true battle, so whatever the world holds beyond what the side saw came from the sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from wolfeclick.game.actions import to_id
from wolfeclick.game.sets import STATS, PokemonSet, Revealed
from wolfeclick.sides import Side, other

__all__ = ["FoeState", "revealed_foes", "team_size", "world_request", "own_sets"]

_NOT_SET_MOVES = {"struggle", "recharge"}
_VOLATILES = {"SUBSTITUTE": "substitute", "LEECH_SEED": "leechseed", "CONFUSION": "confusion", "TAUNT": "taunt",
              "ENCORE": "encore", "YAWN": "yawn", "CURSE": "curse"}
_TERRAINS = {"electricterrain", "grassyterrain", "mistyterrain", "psychicterrain"}
_PSEUDO = {"trickroom", "gravity", "magicroom", "wonderroom"}
_STACKED = {"spikes", "toxicspikes"}
_TIMED = {"reflect": 5, "lightscreen": 5, "auroraveil": 5, "tailwind": 4, "safeguard": 5, "mist": 5}
_HAZARDS = {"stealthrock", "stickyweb"}
DEFAULT_TEAM_SIZE = 6


@dataclass(frozen=True)
class FoeState:
    """One opposing Pokémon as the side saw it: what is known of its set, and its public state."""

    revealed: Revealed
    hp_fraction: float
    fainted: bool
    active: bool
    status: str = ""
    boosts: Mapping[str, int] = field(default_factory=dict)
    volatiles: tuple[str, ...] = ()
    terastallized: str = ""


def _status(mon: Any) -> str:
    status = getattr(mon, "status", None)
    return status.name.lower() if status is not None and status.name.lower() != "fnt" else ""


def _volatiles(mon: Any) -> tuple[str, ...]:
    return tuple(sorted(_VOLATILES[e.name] for e in (getattr(mon, "effects", None) or {}) if e.name in _VOLATILES))


def _tera(mon: Any) -> str:
    if not getattr(mon, "is_terastallized", False) or getattr(mon, "tera_type", None) is None:
        return ""
    return str(mon.tera_type.name).capitalize()


def revealed_foes(battle: Any) -> list[FoeState]:
    """The opposing Pokémon the side has seen, the active one first, then in the order they were seen."""
    seen = list((battle.opponent_team or {}).values())
    seen.sort(key=lambda mon: not bool(getattr(mon, "active", False)))
    foes = []
    for mon in seen:
        item = mon.item
        known_item = None if item == "unknown_item" else (item or "")
        moves = frozenset(to_id(m) for m in (mon.moves or {}) if to_id(m) not in _NOT_SET_MOVES)
        tera = _tera(mon)
        revealed = Revealed(species=to_id(mon.species), level=mon.level, moves=moves, item=known_item,
                            ability=to_id(mon.ability) if mon.ability else None, tera_type=tera or None)
        foes.append(FoeState(revealed, float(mon.current_hp_fraction), bool(mon.fainted), bool(mon.active),
                             _status(mon), dict(mon.boosts or {}) if mon.active else {}, _volatiles(mon)
                             if mon.active else (), tera))
    return foes


def team_size(battle: Any, side: str) -> int:
    """How many Pokémon ``side`` brought (its ``|teamsize|`` line; 6 when the log had none)."""
    sizes = getattr(battle, "_team_size", None) or {}
    return int(sizes.get(side, DEFAULT_TEAM_SIZE))


def _details(details: str) -> tuple[str, int, str]:
    """Species, level and gender from a request's ``details`` (``Garchomp, L74, F``)."""
    parts = [p.strip() for p in details.split(",")]
    level = next((int(p[1:]) for p in parts[1:] if p.startswith("L") and p[1:].isdigit()), 100)
    gender = next((p for p in parts[1:] if p in ("M", "F")), "")
    return parts[0], level, gender


def _condition(text: str) -> tuple[int, int, str, bool]:
    """HP, max HP, status and fainted from a request's ``condition`` (``123/300 par``, ``0 fnt``)."""
    head, _, status = str(text).partition(" ")
    if status == "fnt" or head == "0":
        return 0, 0, "", True
    hp, _, top = head.partition("/")
    return int(hp), int(top or hp), status, False


def _set_move(move_id: str) -> str:
    """A request's move id as a set names it (``hiddenpowerfire60`` → ``hiddenpowerfire``)."""
    return move_id.rstrip("0123456789") if move_id.startswith("hiddenpower") else move_id


def own_sets(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The side's own team as Showdown sets, in its request's order (the active Pokémon first)."""
    sets = []
    for mon in (request.get("side") or {}).get("pokemon") or []:
        species, level, gender = _details(str(mon.get("details", "")))
        sets.append({"name": species, "species": species, "level": level, "gender": gender,
                     "moves": [_set_move(str(m)) for m in mon.get("moves") or []],
                     "ability": mon.get("baseAbility") or mon.get("ability") or "", "item": mon.get("item") or "",
                     "teraType": mon.get("teraType") or "", "evs": dict.fromkeys(STATS, 85),
                     "ivs": dict.fromkeys(STATS, 31), "nature": ""})
    return sets


def _own_states(battle: Any, request: Mapping[str, Any]) -> list[dict[str, Any]]:
    team = (request.get("side") or {}).get("pokemon") or []
    active_moves = ((request.get("active") or [{}])[0] or {}).get("moves") or [] if request.get("active") else []
    mine = getattr(battle, "active_pokemon", None)
    states = []
    for mon in team:
        hp, top, status, fainted = _condition(str(mon.get("condition", "")))
        state: dict[str, Any] = {"fainted": fainted, "stats": dict(mon.get("stats") or {})}
        if not fainted:
            state.update(hp=hp, maxhp=top, status=status)
        if mon.get("terastallized"):
            state["terastallized"] = mon["terastallized"]
        if mon.get("active") and not fainted:
            state["pp"] = [m.get("pp") for m in active_moves if isinstance(m.get("pp"), int)]
            if mine is not None:
                state["boosts"] = dict(mine.boosts or {})
                state["volatiles"] = list(_volatiles(mine))
            usable = [m for m in active_moves if not m.get("disabled")]
            if str(mon.get("item", "")).startswith("choice") and len(usable) == 1 and len(active_moves) > 1:
                state["lockedMove"] = usable[0].get("id")
        states.append(state)
    return states


def _foe_state(foe: FoeState) -> dict[str, Any]:
    if foe.fainted:
        return {"fainted": True}
    state: dict[str, Any] = {"hpFraction": foe.hp_fraction, "status": foe.status}
    if foe.terastallized:
        state["terastallized"] = foe.terastallized
    if foe.active:
        state.update(boosts=dict(foe.boosts), volatiles=list(foe.volatiles))
    return state


def _field(battle: Any, side: str, foe: str) -> dict[str, Any]:
    turn = int(getattr(battle, "turn", 0) or 0)
    out: dict[str, Any] = {"conditions": {}}
    for weather, start in (getattr(battle, "weather", None) or {}).items():
        out["weather"] = weather.name.lower()
        out["weatherTurns"] = max(1, 5 - max(0, turn - int(start)))
    pseudo = []
    for effect, start in (getattr(battle, "fields", None) or {}).items():
        name = effect.name.lower().replace("_", "")
        if name in _TERRAINS:
            out["terrain"], out["terrainTurns"] = name, max(1, 5 - max(0, turn - int(start)))
        elif name in _PSEUDO:
            pseudo.append(name)
    out["pseudo"] = sorted(pseudo)
    for who, conditions in ((side, battle.side_conditions), (foe, battle.opponent_side_conditions)):
        kept = {}
        for condition, value in (conditions or {}).items():
            name = condition.name.lower().replace("_", "")
            if name in _STACKED:
                kept[name] = max(1, min(3, int(value)))
            elif name in _HAZARDS or name in _TIMED:
                kept[name] = 1
        out["conditions"][who] = kept
    return out


def world_request(battle: Any, request: Mapping[str, Any], side: Side, foes: Sequence[FoeState],
                  foe_team: Sequence[PokemonSet], seed: list[int], snapshot: str, format_id: str) -> dict[str, Any]:
    """The bridge's ``world`` request (``PROTOCOL.md``) for ``side``: its own team from its request, the opposing
    team ``foe_team`` (a set for each of ``foes`` in order, then the unseen ones), the field as the side saw it."""
    foe = other(side)
    foe_states = [_foe_state(f) for f in foes] + [{"hpFraction": 1.0}] * (len(foe_team) - len(foes))
    foe_sets = [s.showdown() for s in foe_team]
    switching = []
    if any(request.get("forceSwitch") or []):
        switching.append(side)
        if foes and foes[0].active and foes[0].fainted:
            switching.append(foe)
    return {
        "format": format_id, "snapshot": snapshot, "seed": seed, "turn": max(1, int(getattr(battle, "turn", 1) or 1)),
        "sides": {side: {"team": own_sets(request), "mons": _own_states(battle, request),
                         "teraUsed": bool(getattr(battle, "used_tera", False))},
                  foe: {"team": foe_sets, "mons": foe_states,
                        "teraUsed": bool(getattr(battle, "opponent_used_tera", False))}},
        "field": _field(battle, side, foe), "switching": switching,
    }
