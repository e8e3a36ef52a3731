"""The move lists poke-env 0.8 kept, rebuilt from the protocol: what the ``wolfeclick-v1`` prompt shows.

The published checkpoints saw poke-env 0.8.3's ``Pokemon.moves``; this project runs 0.16, whose move tracking
differs after Transform, Mimic and Sketch (it keeps a transformed Pokémon's moves apart and never trims). 0.8's
rules, which this module applies to the events and request entries a battle parsed:

- a move is keyed by its id with ``return…``, ``frustration…`` and ``hiddenpower…`` folded (``return102`` →
  ``return``); a Hidden Power keeps its typed id (``hiddenpowerice``) and any power written in it; Struggle,
  Recharge and ids outside the move data are never stored;
- every ``move`` event (after 0.8's own clean-up of its tags, which misses Showdown's ``[from] move: …`` spelling, so
  a called move is revealed as the caller's) and ``-prepare`` event adds the move; past four, the set keeps the move
  just used, then the oldest others, four in all;
- a request entry that changed adds its moves in order; past four, only the entry's moves are kept.

A set is an ordered ``{key: raw id}``; the raw id gives the move's shown id and power.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.game.actions import to_id

MoveSet = dict[str, str]
"""``{key: raw id}`` in poke-env 0.8's insertion order."""

SPECIAL = frozenset({"struggle", "recharge"})
_FAILED = ("[miss]", "[still]", "[notarget]")
_DROPPED_TAGS = frozenset({"[from]lockedmove", "[from]Pursuit", "[zeffect]"})
_PLEDGES = frozenset({"Grass Pledge", "Water Pledge", "Fire Pledge"})


def move_key(move: str) -> str:
    """poke-env 0.8's ``Move.retrieve_id``."""
    move = to_id(move)
    for folded in ("return", "frustration", "hiddenpower"):
        if move.startswith(folded):
            return folded
    return move


def _storable(key: str, gen: int) -> bool:
    if key in SPECIAL:
        return False
    from poke_env.data import GenData

    entry = GenData.from_gen(gen).moves.get(key)
    if entry is None:
        return False
    if (key.startswith("z") and key[1:] in GenData.from_gen(gen).moves) or "isZ" in entry:
        return False
    return not (key.startswith("max") or entry.get("isNonstandard") == "Gigantamax" or entry.get("isMax") is not None)


def shown_id(key: str, raw: str) -> str:
    """The id 0.8's ``Move.id`` gave: the key, or for Hidden Power the typed id without its digits."""
    if key.startswith("hiddenpower"):
        return "".join(c for c in to_id(raw) if not c.isdigit())
    return key


def shown_power(key: str, raw: str, gen: int) -> tuple[Any, int]:
    """(type, base power) as 0.8 showed them: the data's, with a Hidden Power's power written in its raw id."""
    from poke_env.battle import PokemonType
    from poke_env.data import GenData

    entry = GenData.from_gen(gen).moves.get(shown_id(key, raw)) or {}
    kind = PokemonType.from_name(entry["type"]) if entry.get("type") else None
    digits = "".join(c for c in raw if c.isdigit()) if key.startswith("hiddenpower") else ""
    return kind, int(digits) if digits else int(entry.get("basePower", 0) or 0)


def add(moves: MoveSet, move: str, gen: int) -> str | None:
    """0.8's ``Pokemon._add_move``: the key stored (the first raw id seen stays), or None if not storable."""
    key = move_key(move)
    if not _storable(key, gen):
        return None
    moves.setdefault(key, to_id(move))
    return key


def moved(moves: MoveSet, move: str, gen: int) -> None:
    """0.8's ``Pokemon.moved``: add the move; past four keep it and then the oldest others."""
    key = add(moves, move, gen)
    if len(moves) <= 4:
        return
    kept: MoveSet = {key: moves[key]} if key is not None else {}
    for other, raw in moves.items():
        if len(kept) == 4:
            break
        kept.setdefault(other, raw)
    moves.clear()
    moves.update(kept)


def from_request(moves: MoveSet, entry_moves: list[str], gen: int) -> None:
    """0.8's ``update_from_request`` for a changed entry: add its moves; past four keep only the entry's."""
    for move in entry_moves:
        add(moves, move, gen)
    if len(moves) > 4:
        wanted = {move_key(m) for m in entry_moves}
        for key in [k for k in moves if k not in wanted]:
            del moves[key]


def move_event(event: list[str]) -> tuple[str, list[str], str | None] | None:
    """A ``move`` event read as 0.8 read it: (who, moves to record in order, ability it revealed), or None when 0.8
    recorded nothing (a move reflected by Magic Coat, Magic Bounce or copied by Dancer)."""
    ev = list(event)
    for tag in _FAILED:
        if ev[-1] == tag:
            ev = ev[:-1]
    if ev[-1] == "[notarget]":
        ev = ev[:-1]
    if ev[-1].startswith("[spread]"):
        ev = ev[:-1]
    if ev[-1] in _DROPPED_TAGS:
        ev = ev[:-1]
    if ev[-1].startswith("[anim]"):
        ev = ev[:-1]
    override, reveal_called = None, False
    if ev[-1].startswith("[from]move: "):
        override = ev.pop()[12:]
        if override == "Sleep Talk":
            reveal_called = True
        elif override in _PLEDGES:
            override = None
    if ev[-1] == "null":
        ev = ev[:-1]
    ability = None
    if ev[-1].startswith("[from]ability: "):
        ability = ev.pop()[15:]
        if ability in ("Magic Bounce", "Dancer"):
            return ev[2], [], ability
    if ev[-1] == "[from]Magic Coat":
        return None
    if len(ev) < 4:
        return None
    recorded = ([override] if override else []) + ([ev[3]] if override is None or reveal_called else [])
    return ev[2], recorded, ability
