"""What a side's unseen Pokémon may be: candidate sets consistent with what was revealed, and seeded samples.

Pure over plain data (issue 61). A ``SetBook`` holds, for one random-battle format, every set its own team generator
was seen to make (each with how often: ``wolfeclick.sim.setdata`` tallies them and reads Showdown's
``random-battles/genN/sets.json`` beside them), and the roles of ``sets.json`` (movepool, abilities, tera types) for
a Pokémon whose revealed facts match no tallied set. ``Revealed`` is what is known of one Pokémon: its species, the
moves it used, its item (or that it has none), its ability, its tera type. ``candidates`` gives the sets consistent
with it and their probabilities; ``sample_set`` draws one; ``sample_team`` completes a team of known and unseen
members. The search policy samples its opponent's hidden parts with them; a public replay's players can be completed
the same way (a side's own team, from what the log revealed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["PokemonSet", "Revealed", "Role", "SetBook", "book_from_data", "candidates", "consistent", "resolve_species",
           "sample_set", "sample_team"]

MOVES_PER_SET = 4
STATS = ("hp", "atk", "def", "spa", "spd", "spe")


@dataclass(frozen=True)
class PokemonSet:
    """One whole set, as a team generator makes it (ids throughout; ``item`` and ``tera_type`` may be empty)."""

    species: str
    level: int
    moves: tuple[str, ...]
    ability: str
    item: str = ""
    tera_type: str = ""
    role: str = ""
    evs: tuple[int, ...] = (85, 85, 85, 85, 85, 85)
    ivs: tuple[int, ...] = (31, 31, 31, 31, 31, 31)

    def showdown(self) -> dict[str, Any]:
        """The set in Showdown's JSON team form (what ``Teams.pack`` takes)."""
        return {"name": self.species, "species": self.species, "level": self.level, "moves": list(self.moves),
                "ability": self.ability, "item": self.item, "teraType": self.tera_type,
                "evs": dict(zip(STATS, self.evs)), "ivs": dict(zip(STATS, self.ivs)), "gender": "", "nature": ""}


@dataclass(frozen=True)
class Revealed:
    """What is known of one Pokémon. ``item``: None when unknown, ``""`` when it is known to hold none (knocked off,
    consumed); ``ability``/``tera_type``: None when unknown; ``moves``: the moves it was seen to use."""

    species: str
    level: int | None = None
    moves: frozenset[str] = frozenset()
    item: str | None = None
    ability: str | None = None
    tera_type: str | None = None


@dataclass(frozen=True)
class Role:
    """One role of a species in ``sets.json``: what its sets choose from."""

    name: str
    movepool: tuple[str, ...]
    abilities: tuple[str, ...]
    tera_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class SetBook:
    """A format's set data: tallied sets by species (each with its count) and ``sets.json``'s levels and roles."""

    format: str
    sets: Mapping[str, tuple[tuple[PokemonSet, int], ...]]
    roles: Mapping[str, tuple[Role, ...]] = field(default_factory=dict)
    levels: Mapping[str, int] = field(default_factory=dict)
    totals: Mapping[str, int] = field(default_factory=dict)
    """How many sets of each species the tally holds (``book_from_data`` fills it; ``species_count`` reads it)."""

    def species_count(self, species: str) -> int:
        if species in self.totals:
            return self.totals[species]
        return sum(count for _, count in self.sets.get(species, ()))


def _id(text: str) -> str:
    return "".join(c for c in str(text).lower() if c.isalnum())


def _stats(values: Mapping[str, Any], default: int) -> tuple[int, ...]:
    return tuple(int(values.get(stat, default)) for stat in STATS)


def book_from_data(format_id: str, tally: Mapping[str, Sequence[Mapping[str, Any]]],
                   sets_json: Mapping[str, Mapping[str, Any]] | None = None) -> SetBook:
    """A ``SetBook`` from plain data: the bridge's ``set-tally`` species map and (optionally) ``sets.json``."""
    sets: dict[str, tuple[tuple[PokemonSet, int], ...]] = {}
    for species, entries in tally.items():
        sets[species] = tuple(
            (PokemonSet(species=species, level=int(e["level"]), moves=tuple(sorted(_id(m) for m in e["moves"])),
                        ability=_id(e.get("ability", "")), item=_id(e.get("item", "")),
                        tera_type=str(e.get("teraType", "") or ""), role=str(e.get("role", "")),
                        evs=_stats(e.get("evs") or {}, 85), ivs=_stats(e.get("ivs") or {}, 31)), int(e["count"]))
            for e in entries)
    roles: dict[str, tuple[Role, ...]] = {}
    levels: dict[str, int] = {}
    for species, entry in (sets_json or {}).items():
        if isinstance(entry.get("level"), int):
            levels[species] = entry["level"]
        roles[species] = tuple(Role(str(r.get("role", "")), tuple(_id(m) for m in r.get("movepool", [])),
                                    tuple(_id(a) for a in r.get("abilities", [])),
                                    tuple(str(t) for t in r.get("teraTypes", [])))
                               for r in entry.get("sets", []) if isinstance(r, Mapping))
    totals = {species: sum(count for _, count in entries) for species, entries in sets.items()}
    return SetBook(format_id, sets, roles, levels, totals)


def resolve_species(book: SetBook, species: str) -> str:
    """The book's key for a species id as a battle shows it: itself, or the longest known species its id starts with
    (a form the battle changed into: ``mimikyubusted`` → ``mimikyu``); the id itself when the book knows none."""
    key = _id(species)
    if key in book.sets or key in book.roles:
        return key
    known = [name for name in (*book.sets, *book.roles) if key.startswith(name)]
    return max(known, key=len) if known else key


def _hidden_power(move: str) -> str:
    return "hiddenpower" if move.startswith("hiddenpower") else move


def _has_moves(moves: Iterable[str], wanted: frozenset[str]) -> bool:
    have = set(moves) | {_hidden_power(m) for m in moves}
    return all(m in have or _hidden_power(m) in have for m in wanted)


def consistent(candidate: PokemonSet, revealed: Revealed) -> bool:
    """Whether ``candidate`` agrees with everything ``revealed`` says."""
    if not _id(revealed.species).startswith(candidate.species):  # the species, or a form it changed into
        return False
    if revealed.level is not None and candidate.level != revealed.level:
        return False
    if not _has_moves(candidate.moves, revealed.moves):
        return False
    if revealed.item is not None and revealed.item != "" and _id(revealed.item) != candidate.item:
        return False
    if revealed.ability is not None and _id(revealed.ability) != candidate.ability:
        return False
    return revealed.tera_type is None or _id(revealed.tera_type) == _id(candidate.tera_type)


def _settled(candidate: PokemonSet, revealed: Revealed) -> PokemonSet:
    """``candidate`` with what is known laid over it: an item known to be gone is gone, a seen level is the level."""
    changes: dict[str, Any] = {}
    if revealed.item == "":
        changes["item"] = ""
    if revealed.level is not None:
        changes["level"] = revealed.level
    return replace(candidate, **changes) if changes else candidate


def _from_roles(book: SetBook, species: str, revealed: Revealed) -> list[tuple[PokemonSet, float]]:
    """Sets built from ``sets.json``'s roles when no tallied set agrees: each role whose movepool holds the revealed
    moves, its moves the revealed ones and (as placeholders the sampler fills) the rest of the pool."""
    out = []
    items = [s.item for s, _ in book.sets.get(species, ())]
    common_item = max(set(items), key=lambda i: (items.count(i), i)) if items else ""
    for role in book.roles.get(species, ()):
        if not _has_moves(role.movepool, revealed.moves):
            continue
        if revealed.ability is not None and role.abilities and _id(revealed.ability) not in role.abilities:
            continue
        pool = [m for m in role.movepool if m not in revealed.moves and _hidden_power(m) not in revealed.moves]
        moves = tuple(sorted(revealed.moves)) + tuple(pool)
        ability = _id(revealed.ability) if revealed.ability is not None else (role.abilities[0] if role.abilities else "")
        tera = revealed.tera_type if revealed.tera_type is not None else (role.tera_types[0] if role.tera_types else "")
        item = _id(revealed.item) if revealed.item else common_item
        level = revealed.level or book.levels.get(species, 100)
        out.append((PokemonSet(species, level, moves, ability, item, tera, role.name), 1.0))
    return out


def candidates(book: SetBook, revealed: Revealed) -> list[tuple[PokemonSet, float]]:
    """The sets ``revealed`` may be, with probabilities summing to 1, most likely first (ties in the book's order).

    Tallied sets that agree with every revealed fact, weighted by how often the generator made them. If none agrees
    (a combination the tally never drew), the ``sets.json`` roles whose movepool holds the revealed moves, equally
    weighted: their ``moves`` list the revealed moves first, then the rest of the pool, and ``sample_set`` keeps four.
    If neither knows the species, one set of exactly what was revealed.
    """
    species = resolve_species(book, revealed.species)
    if revealed == Revealed(revealed.species):  # nothing but the species: every set of it (already most likely first)
        entries = book.sets.get(species, ())
        total = float(sum(count for _, count in entries))
        if entries:
            return [(s, count / total) for s, count in entries]
    found: list[tuple[PokemonSet, float]] = [(_settled(s, revealed), float(count)) for s, count in
                                             book.sets.get(species, ()) if consistent(s, revealed)]
    if not found:
        found = _from_roles(book, species, revealed)
    if not found:
        level = revealed.level or book.levels.get(species, 100)
        found = [(PokemonSet(species, level, tuple(sorted(revealed.moves)), _id(revealed.ability or ""),
                             _id(revealed.item or ""), revealed.tera_type or ""), 1.0)]
    total = sum(weight for _, weight in found)
    ranked = sorted(enumerate(found), key=lambda item: (-item[1][1], item[0]))
    return [(s, weight / total) for _, (s, weight) in ranked]


def _pick(options: Sequence[tuple[Any, float]], rng: random.Random) -> Any:
    point = rng.random() * sum(weight for _, weight in options)
    for value, weight in options:
        point -= weight
        if point < 0:
            return value
    return options[-1][0]


def sample_set(book: SetBook, revealed: Revealed, rng: random.Random) -> PokemonSet:
    """One set for ``revealed``, drawn by its probability with ``rng`` (a set built from a role keeps the revealed
    moves and draws the rest of its four from the role's pool)."""
    chosen: PokemonSet = _pick(candidates(book, revealed), rng)
    if len(chosen.moves) <= MOVES_PER_SET:
        return chosen
    known = [m for m in chosen.moves if m in revealed.moves or _hidden_power(m) in revealed.moves]
    rest = [m for m in chosen.moves if m not in known]
    rng.shuffle(rest)
    return replace(chosen, moves=tuple(sorted(known + rest[:max(0, MOVES_PER_SET - len(known))])))


def sample_team(book: SetBook, known: Sequence[Revealed], size: int, rng: random.Random) -> list[PokemonSet]:
    """A whole team: a set for each ``known`` Pokémon (in order), then ``size - len(known)`` more of species not yet
    on it, each species drawn by how often the generator made it, then its set as for an unrevealed Pokémon."""
    team = [sample_set(book, revealed, rng) for revealed in known]
    taken = {resolve_species(book, r.species) for r in known}
    pool = [(species, float(book.species_count(species))) for species in book.sets if species not in taken]
    while len(team) < size and pool:
        species = _pick(pool, rng)
        pool = [(s, w) for s, w in pool if s != species]
        team.append(sample_set(book, Revealed(species), rng))
    return team
