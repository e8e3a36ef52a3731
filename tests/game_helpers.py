"""Crafted poke-env battles for tests: hand-written protocol lines and request dicts, no simulator needed."""

from __future__ import annotations

import logging
from typing import Any

from poke_env.battle import Battle
from poke_env.data import GenData

PLAYERS = {"p1": "Alice", "p2": "Bob"}
SKIP = {
    "", "t:", "init", "title", "j", "c", "raw", "html", "uhtml", "split", "gametype", "gen", "tier", "rule",
    "teamsize", "start", "upkeep", "timestamp",
}  # fmt: skip

TEAMS: dict[str, list[tuple[str, int, list[str], str, str, int]]] = {
    # (species, level, moves, item, ability, speed stat)
    "p1": [
        ("Pikachu", 88, ["thunderbolt", "voltswitch", "surf", "thunderwave"], "lightball", "static", 240),
        ("Snorlax", 80, ["bodyslam", "curse", "rest", "earthquake"], "leftovers", "thickfat", 100),
        ("Garchomp", 77, ["earthquake", "swordsdance", "scaleshot", "stoneedge"], "lifeorb", "roughskin", 220),
        ("Starmie", 85, ["hydropump", "psychic", "recover", "icebeam"], "choicespecs", "naturalcure", 250),
        ("Scizor", 79, ["bulletpunch", "uturn", "swordsdance", "knockoff"], "choiceband", "technician", 140),
        ("Gengar", 82, ["shadowball", "sludgebomb", "focusblast", "nastyplot"], "focussash", "cursedbody", 240),
    ],
    "p2": [
        ("Gyarados", 80, ["waterfall", "dragondance", "earthquake", "icefang"], "heavydutyboots", "intimidate", 200),
        ("Ferrothorn", 84, ["leechseed", "gyroball", "stealthrock", "powerwhip"], "leftovers", "ironbarbs", 60),
        ("Dragonite", 74, ["extremespeed", "dragondance", "earthquake", "firepunch"],
         "heavydutyboots", "multiscale", 170),
        ("Blissey", 87, ["softboiled", "seismictoss", "toxic", "thunderwave"], "leftovers", "naturalcure", 120),
        ("Weavile", 80, ["tripleaxel", "knockoff", "iceshard", "swordsdance"], "choiceband", "pressure", 260),
        ("Tyranitar", 78, ["stoneedge", "crunch", "earthquake", "dragondance"], "leftovers", "sandstream", 130),
    ],
}


def pokemon(
    side: str,
    species: str,
    level: int = 80,
    moves: list[str] | None = None,
    item: str = "leftovers",
    ability: str = "pressure",
    spe: int = 100,
    condition: str = "200/200",
    active: bool = False,
) -> dict[str, Any]:
    """One entry of a request's ``side.pokemon``."""
    return {
        "ident": f"{side}: {species}",
        "details": f"{species}, L{level}",
        "condition": condition,
        "active": active,
        "stats": {"atk": 100, "def": 100, "spa": 100, "spd": 100, "spe": spe},
        "moves": list(moves or ["tackle"]),
        "baseAbility": ability,
        "item": item,
        "pokeball": "pokeball",
        "ability": ability,
    }


def team(side: str, conditions: dict[str, str] | None = None, active: str | None = None) -> list[dict[str, Any]]:
    """The side's standard six, the first (or ``active``) marked active; ``conditions`` overrides by species."""
    conditions = conditions or {}
    entries = TEAMS[side]
    active = active or entries[0][0]
    return [
        pokemon(side, sp, lvl, mv, it, ab, spe, conditions.get(sp, "200/200"), sp == active)
        for sp, lvl, mv, it, ab, spe in entries
    ]


def request(
    side: str,
    mons: list[dict[str, Any]] | None = None,
    *,
    force_switch: bool = False,
    trapped: bool = False,
    disabled: tuple[str, ...] = (),
    wait: bool = False,
) -> dict[str, Any]:
    """A ``|request|`` dict for ``side``: the active's moves (unless forced to switch) and the team."""
    mons = mons if mons is not None else team(side)
    req: dict[str, Any] = {"side": {"name": PLAYERS[side], "id": side, "pokemon": mons}, "rqid": 1}
    active = next((m for m in mons if m["active"]), None)
    if wait:
        req["wait"] = True
    elif force_switch:
        req["forceSwitch"] = [True]
    elif active is not None:
        dex = GenData.from_gen(9).moves
        moves = [
            {"move": dex[m]["name"], "id": m, "pp": 16, "maxpp": 16, "target": "normal", "disabled": m in disabled}
            for m in active["moves"]
        ]
        entry: dict[str, Any] = {"moves": moves}
        if trapped:
            entry["trapped"] = True
        req["active"] = [entry]
    return req


def feed(battle: Battle, lines: list[str]) -> Battle:
    """Feed protocol lines as a player's stream would, skipping bookkeeping lines poke-env need not see."""
    for line in lines:
        parts = line.split("|")
        if len(parts) < 2 or parts[1] in SKIP:
            continue
        battle.parse_message(parts)
    return battle


def new_battle(side: str, req: dict[str, Any] | None = None, lines: list[str] | None = None, gen: int = 9) -> Battle:
    """A ``Battle`` owned by ``side``: players announced, ``req`` parsed (seeding the team), then ``lines`` fed."""
    battle = Battle(f"battle-gen{gen}randombattle-1", PLAYERS[side], logging.getLogger("test"), gen=gen)
    feed(battle, [f"|player|p1|{PLAYERS['p1']}|", f"|player|p2|{PLAYERS['p2']}|"])
    battle.parse_request(req if req is not None else request(side))
    return feed(battle, lines or [])


OPENING = [
    "|start",
    "|switch|p1a: Pikachu|Pikachu, L88|200/200",
    "|switch|p2a: Gyarados|Gyarados, L80|200/200",
    "|turn|1",
]
"""Both leads in: Pikachu (p1) against Gyarados (p2)."""


def both(lines: list[str]) -> tuple[Battle, Battle]:
    """The same spectator lines seen by p1 and by p2, each from its own ``Battle``."""
    return new_battle("p1", lines=OPENING + lines), new_battle("p2", lines=OPENING + lines)
