"""The value model: p1's chance to win, read at once from the public state of every decision (issue 48, item 3).

A rollout analysis plays each decision out K times from the true simulator state: minutes a battle. This is the
instant estimate beside it, for every replay including imported ones whose hidden information no one has: a tiny
network over documented features of what a spectator of the battle knows (``SIDE_FEATURES``, ``SHARED_FEATURES``),
trained by ``scripts/train_value_model.py`` on seeded battles between the rollout policies and shipped beside this
file (``value_model.json``; its recipe and data card: docs/value-model.md).

Everything here is pure over plain data — a recording's turns (snapshots and protocol events) → a feature matrix;
weights and features → probabilities — but ``load_model``, which reads the weights file, and ``default_model``, its
cached call on the shipped file. Inference is numpy only.

**Symmetric by construction.** A decision's input is ``[own side's features, other side's features, shared]`` read
from p1's seat; the model's score is ``g(p1's input) − g(p2's input)`` for one learnt function ``g``, so swapping
the sides gives exactly ``1 − p`` (and a position identical for both sides gives ½).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import orjson

from wolfeclick.battle.schema import Recording, TurnRecord
from wolfeclick.game.state import TEAM_SLOTS, mean_team_hp, public_hp, slot_share
from wolfeclick.sides import SIDES, other

MODEL_SCHEMA = "wolfeclick.value-model/1"
MODEL_PATH = Path(__file__).with_name("value_model.json")
"""The shipped weights (package data)."""

SEES = ("the public state: each side's fainted count, its revealed Pokémon with their species, level, HP and status "
        "(unrevealed ones count as healthy), the active Pokémon's stat boosts, types and base stats, hazards, screens, "
        "whether it has terastallized, who must switch, how each side has played so far (its switches, its moves that "
        "hit, super effective or resisted), and the turn; not the unrevealed Pokémon, nor any moves' names, items, "
        "abilities or exact stats")
"""What the model reads, in the words the viewer shows beside its line."""

STATUSES = ("BRN", "PAR", "PSN", "SLP", "FRZ")
"""The active Pokémon's status as one of these flags (badly poisoned counts as poisoned)."""
BOOSTS = ("atk", "def", "spa", "spd", "spe", "evasion")
MAX_STAGE = 6
"""Stat stages run from −6 to +6; a boost feature is the stage over this."""
HAZARDS = {"stealthrock": 1, "spikes": 3, "toxicspikes": 2, "stickyweb": 1}
"""Entry hazards on a side, with their most layers (features are layers / most)."""
SCREENS = ("reflect", "lightscreen", "auroraveil")

SIDE_FEATURES: tuple[str, ...] = (
    "left",  # Pokémon not fainted, of six
    "team_hp",  # mean public HP over six slots (a fainted one 0, an unrevealed one full), 0-1
    "unrevealed",  # slots not yet seen, of six
    "active_hp",  # the active Pokémon's public HP, 0-1 (0 when fainted or none)
    "must_switch",  # the active Pokémon has fainted: this side sends in another before anything else
    "alone",  # this side is the only one deciding here (a forced switch, a U-turn's pick)
    *(f"active_{status.lower()}" for status in STATUSES),
    "statused",  # revealed Pokémon still standing with a status, of six
    *(f"boost_{stat}" for stat in BOOSTS),  # the active Pokémon's stages, of 6
    *HAZARDS,  # on this side (they hurt this side's switch-ins)
    *SCREENS,  # up on this side
    "terastallized",  # this side has used its terastallization
    "active_level",  # the active Pokémon's level, of 100 (0 when none)
    "active_offence",  # its better attacking stat, estimated from base stats and level (of 400)
    "active_bulk",  # its HP times its mean defence, estimated likewise (of 400 × 400, square-rooted)
    "outspeeds",  # its estimated speed (boosts and paralysis counted) beats the other active's: 1, a tie ½, else 0
    "type_edge",  # the best multiplier of its own types against the other active's, log2 / 2 (immune −1)
    "team_strength",  # mean base stat total × level / 100 of its revealed Pokémon still standing (of 600; 0.7
    # when none is)
    # how this side has played so far, as everyone saw it (issue 62: the pairing is not known, its play is shown):
    "switch_rate",  # its switches out of a standing Pokémon, over its actions so far (moves and such switches) + 2
    "hit_rate",  # its moves that hurt the other side directly, over its moves so far + 2
    "edge_rate",  # its moves shown super effective, less those shown resisted or not affecting, over its moves + 2
)
SHARED_FEATURES: tuple[str, ...] = ("turn",)  # the battle turn, of 100 (capped)
FEATURES: tuple[str, ...] = (*(f"p1.{name}" for name in SIDE_FEATURES), *(f"p2.{name}" for name in SIDE_FEATURES),
                             *SHARED_FEATURES)
"""The input columns, from p1's seat; p2's seat is the same with the two sides' blocks swapped (``swap_sides``)."""
WIDTH = len(SIDE_FEATURES)


# --------------------------------------------------------------------------------------------- the public field
def _side_of(ident: str) -> str | None:
    """``'p1a: Garchomp'`` or ``'p1: Alice'`` → ``'p1'``."""
    return ident[:2] if ident[:2] in SIDES and ident[2:3] in ("a", ":") else None


def _id(name: str) -> str:
    """Showdown's id of a name: ``'Keldeo-Resolute'`` → ``'keldeoresolute'``."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _condition(name: str) -> str:
    """``'move: Stealth Rock'`` → ``'stealthrock'``."""
    return re.sub(r"[^a-z]", "", name.lower().removeprefix("move: "))


@dataclass
class _Seen:
    """One Pokémon as a spectator has seen it: its species, its last public HP (percent), status and whether it is
    down."""

    species: str
    hp: float = 100.0
    status: str | None = None
    fainted: bool = False


def _status(text: str) -> str | None:
    """A protocol status (``'tox'``, ``'par'``…) as the model's flags read it (badly poisoned is poisoned)."""
    name = text.strip().upper()
    name = "PSN" if name == "TOX" else name
    return name if name in STATUSES else None


def _read_condition(condition: str) -> tuple[float | None, str | None]:
    """A public condition → (HP percent, status): ``'7/100 tox'`` → (7, 'PSN'), ``'24y/48'`` → (50, None),
    ``'0 fnt'`` → (0, None); (None, None) when it names no HP."""
    words = condition.split()
    if not words:
        return None, None
    if words[0] == "0" or "fnt" in words[1:2]:
        return 0.0, None
    now, _, top = words[0].partition("/")
    try:
        value, full = float(now), float(top.rstrip("gyr") or 100)
    except ValueError:
        return None, None
    if full <= 0:
        return None, None
    return max(0.0, min(100.0, 100 * value / full)), _status(words[1]) if len(words) > 1 else None


@dataclass
class _Field:
    """What the protocol says that the snapshots do not: per side, the active Pokémon's boosts, hazards and screens
    on that side, terastallization used, the levels switch-ins showed. Internal to ``decision_rows``, which reads it
into plain numbers after each decision's lines."""

    boosts: dict[str, dict[str, int]]
    conditions: dict[str, dict[str, int]]
    tera: dict[str, bool]
    passing: dict[str, bool]  # the side's last move was Baton Pass: its next switch-in keeps the boosts
    levels: dict[str, dict[str, int]]  # per side, species id → the level its switch-in showed
    active: dict[str, str]  # per side, the species id of the Pokémon last switched in
    tera_type: dict[str, str]  # per side, the type its active terastallized into (gone when it leaves)
    roster: dict[str, dict[str, _Seen]]  # per side, each Pokémon seen on the field by its name, in order seen
    on_field: dict[str, str]  # per side, the name of the Pokémon last switched in
    play: dict[str, dict[str, int]]  # per side, its play as shown: moves, switches (out of a standing Pokémon),
    # hits (moves that hurt the other side), edge (super effective less resisted or not affecting)
    mover: str | None = None  # the side whose move the lines now follow
    hit: bool = False  # that move has already hurt the other side

    @classmethod
    def start(cls) -> "_Field":
        return cls({s: {} for s in SIDES}, {s: {} for s in SIDES}, {s: False for s in SIDES},
                   {s: False for s in SIDES}, {s: {} for s in SIDES}, {}, {}, {s: {} for s in SIDES}, {},
                   {s: {"moves": 0, "switches": 0, "hits": 0, "edge": 0} for s in SIDES})

    def _played(self, tag: str, side: str, parts: list[str]) -> None:
        """How each side plays, from the lines everyone saw: a ``move`` line is a move of its side; a ``switch``
        while the side's Pokémon still stands is a switch (a forced replacement is not); a direct ``-damage`` to the
        other side after a move (no ``[from]``: not hazards, weather, recoil…) makes that move a hit;
        ``-supereffective``, ``-resisted`` and ``-immune`` on the other side move its edge."""
        if tag == "move":
            self.play[side]["moves"] += 1
            self.mover, self.hit = side, False
        elif tag == "switch":
            standing = self.on(side)
            if standing is not None and not standing.fainted:
                self.play[side]["switches"] += 1
            self.mover = None
        elif self.mover is None or self.mover == side:
            return
        elif tag == "-damage" and not self.hit and not any(p.startswith("[from]") for p in parts[4:]):
            self.play[self.mover]["hits"] += 1
            self.hit = True
        elif tag in ("-supereffective", "-resisted", "-immune"):
            self.play[self.mover]["edge"] += 1 if tag == "-supereffective" else -1

    def play_vector(self, side: str) -> list[float]:
        """``switch_rate``, ``hit_rate``, ``edge_rate`` of a side (0 before it has acted)."""
        play = self.play[side]
        return [play["switches"] / (play["moves"] + play["switches"] + 2), play["hits"] / (play["moves"] + 2),
                play["edge"] / (play["moves"] + 2)]

    def _health(self, side: str, ident: str, condition: str | None, species: str | None = None) -> None:
        """What a line says of one Pokémon's health: its HP as the public percent, its status, whether it fainted."""
        name = ident.partition(": ")[2] if ": " in ident else ident[3:]
        mon = self.roster[side].get(name)
        if mon is None:
            if species is None:
                return  # a Pokémon never seen on the field: nothing to follow yet
            mon = self.roster[side][name] = _Seen(species)
        elif species is not None:
            mon.species = species
        if condition is None:
            return
        hp, status = _read_condition(condition)
        if hp is None:
            return
        mon.hp, mon.status = hp, status
        mon.fainted = hp <= 0

    def feed(self, line: str) -> None:  # noqa: C901 - one branch per protocol message, kept flat to read
        parts = line.split("|")
        tag = parts[1] if len(parts) > 1 else ""
        if tag == "-clearallboost":
            self.boosts = {"p1": {}, "p2": {}}
        elif tag == "-swapsideconditions":  # Court Change
            self.conditions = {"p1": self.conditions["p2"], "p2": self.conditions["p1"]}
        side = _side_of(parts[2]) if len(parts) > 2 else None
        if tag == "turn":
            self.mover = None
        if side is None:
            return
        self._played(tag, side, parts)
        self._follow(tag, side, parts)
        boosts = self.boosts[side]
        if tag in ("switch", "drag", "replace", "detailschange") and len(parts) > 3:
            details = parts[3].split(", ")
            species = _id(details[0])
            level = next((int(d[1:]) for d in details[1:] if re.fullmatch(r"L[0-9]{1,3}", d)), 100)
            self.levels[side][species] = max(1, min(100, level))
            self.active[side] = species
            if tag in ("switch", "drag"):
                self.tera_type.pop(side, None)
        if tag in ("switch", "drag"):
            if not self.passing[side]:
                self.boosts[side] = {}
            self.passing[side] = False
        elif tag == "faint":
            self.boosts[side] = {}
        elif tag == "move":
            self.passing[side] = len(parts) > 3 and parts[3] == "Baton Pass"
        elif tag in ("-boost", "-unboost", "-setboost") and len(parts) > 4 and parts[3] in BOOSTS:
            try:
                amount = int(parts[4])
            except ValueError:
                return
            now = amount if tag == "-setboost" else boosts.get(parts[3], 0) + (amount if tag == "-boost" else -amount)
            boosts[parts[3]] = max(-MAX_STAGE, min(MAX_STAGE, now))
        elif tag == "-clearboost":
            self.boosts[side] = {}
        elif tag == "-clearnegativeboost":
            self.boosts[side] = {k: v for k, v in boosts.items() if v > 0}
        elif tag == "-clearpositiveboost":
            self.boosts[side] = {k: v for k, v in boosts.items() if v < 0}
        elif tag == "-invertboost":
            self.boosts[side] = {k: -v for k, v in boosts.items()}
        elif tag in ("-copyboost", "-swapboost") and len(parts) > 3 and _side_of(parts[3]) not in (None, side):
            target = _side_of(parts[3])
            assert target is not None
            if tag == "-copyboost":
                self.boosts[side] = dict(self.boosts[target])
            else:
                self.boosts[side], self.boosts[target] = self.boosts[target], boosts
        elif tag in ("-sidestart", "-sideend") and len(parts) > 3:
            name = _condition(parts[3])
            if name in HAZARDS or name in SCREENS:
                here = self.conditions[side]
                if tag == "-sideend":
                    here.pop(name, None)
                else:
                    here[name] = min(HAZARDS.get(name, 1), here.get(name, 0) + 1)
        elif tag == "-terastallize":
            self.tera[side] = True
            if len(parts) > 3:
                self.tera_type[side] = parts[3].upper()

    def _follow(self, tag: str, side: str, parts: list[str]) -> None:
        """The public HP tracker: each Pokémon's last HP and status as the protocol showed them to everyone. A
        Pokémon's true HP may move unseen (Regenerator heals on switching out and nothing says so): it stays at the
        last value shown until a line shows another (its next switch-in does)."""
        if tag in ("switch", "drag", "replace") and len(parts) > 3:
            self._health(side, parts[2], parts[4] if len(parts) > 4 else None, parts[3].split(", ")[0])
            self.on_field[side] = parts[2].partition(": ")[2]
        elif tag == "detailschange" and len(parts) > 3:
            self._health(side, parts[2], None)
            mon = self.roster[side].get(parts[2].partition(": ")[2])
            if mon is not None:
                mon.species = parts[3].split(", ")[0]
        elif tag in ("-damage", "-heal", "-sethp") and len(parts) > 3:
            self._health(side, parts[2], parts[3])
        elif tag == "faint":
            mon = self.roster[side].get(parts[2].partition(": ")[2])
            if mon is not None:
                mon.hp, mon.fainted = 0.0, True
        elif tag in ("-status", "-curestatus") and len(parts) > 3:
            mon = self.roster[side].get(parts[2].partition(": ")[2])
            if mon is not None and not mon.fainted:
                mon.status = _status(parts[3]) if tag == "-status" else None
        elif tag == "-cureteam":
            for mon in self.roster[side].values():
                mon.status = None

    def seen(self, side: str) -> list[_Seen]:
        """The side's Pokémon seen on the field (at most six, in the order they were first seen)."""
        return list(self.roster[side].values())[:TEAM_SLOTS]

    def on(self, side: str) -> _Seen | None:
        """The side's Pokémon on the field (fainted until its replacement comes), or None before any came."""
        name = self.on_field.get(side)
        return self.roster[side].get(name) if name is not None else None

    def side_vector(self, side: str) -> list[float]:
        boosts, conditions = self.boosts[side], self.conditions[side]
        return ([boosts.get(stat, 0) / MAX_STAGE for stat in BOOSTS] + [conditions.get(h, 0) / most for h, most in HAZARDS.items()]
                + [float(conditions.get(s, 0) > 0) for s in SCREENS] + [float(self.tera[side])])


# ------------------------------------------------------------------------------------------------------ features
def _public_vector(field: _Field, side: str, alone: bool) -> list[float]:
    """The material part of a side's features, from what a spectator has seen (``_Field``'s public tracker): the
    Pokémon seen on the field, each at its last public HP (whole percent, ``game.state.public_hp``) and status; an
    unseen one counts as healthy. Nothing is read from a side's own snapshot, which holds what only its owner knows
    (exact HP, Regenerator's unseen heal, the unrevealed Pokémon)."""
    seen = field.seen(side)
    levels = [0 if mon.fainted else public_hp(mon.hp) for mon in seen]
    team_hp = mean_team_hp(levels) / 100
    left = slot_share(max(0, TEAM_SLOTS - sum(mon.fainted for mon in seen)))
    active = field.on(side)
    active_hp = public_hp(active.hp) / 100 if active is not None and not active.fainted else 0.0
    must_switch = float(active is not None and active_hp == 0)
    status = active.status if active is not None else None
    flags = [float(active_hp > 0 and status == name) for name in STATUSES]
    statused = slot_share(sum(1 for mon in seen if mon.status and not mon.fainted))
    return [left, team_hp, slot_share(TEAM_SLOTS - len(seen)), active_hp, must_switch, float(alone), *flags,
            statused]


def _static(kind: str, gen: int) -> Any:
    """One of poke-env's static data files (``pokedex`` or ``typechart`` of a generation), read as it lies in the
    installed package: found without importing poke-env, whose package start and ``GenData`` (every move and the
    whole learnset) cost a second where these two files take milliseconds."""
    spec = importlib.util.find_spec("poke_env")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("poke-env is not installed")
    root = Path(list(spec.submodule_search_locations)[0]) / "data" / "static"
    return orjson.loads((root / kind / f"gen{gen}{kind}.json").read_bytes())


@functools.lru_cache(maxsize=10)
def _pokedex(gen: int) -> dict[str, tuple[dict[str, int], tuple[str, ...]]]:
    """A generation's species id → (base stats, types in capitals); a cosmetic forme (``florgeswhite``) reads as
    its species, as poke-env's Pokédex has it."""
    try:
        raw = _static("pokedex", gen)
    except (OSError, ValueError):
        return {}
    dex: dict[str, tuple[dict[str, int], tuple[str, ...]]] = {}
    for name, entry in raw.items():
        if not isinstance(entry, dict) or "baseStats" not in entry or "types" not in entry:
            continue
        found = (dict(entry["baseStats"]), tuple(str(t).upper() for t in entry["types"]))
        dex[name] = found
        for forme in entry.get("cosmeticFormes") or ():
            dex.setdefault(_id(forme), found)
    return dex


@functools.lru_cache(maxsize=10)
def _type_chart(gen: int) -> dict[str, dict[str, float]]:
    """A generation's defending type → attacking type → multiplier, from its type chart's damage codes (0 neutral,
    1 super effective, 2 resisted, 3 immune)."""
    try:
        raw = _static("typechart", gen)
    except (OSError, ValueError):
        return {}
    factor = {0: 1.0, 1: 2.0, 2: 0.5, 3: 0.0}
    types = {name.upper() for name in raw}
    return {name.upper(): {attacking.upper(): factor.get(code, 1.0)
                           for attacking, code in (entry.get("damageTaken") or {}).items()
                           if attacking.upper() in types}
            for name, entry in raw.items()}


def _dex(gen: int, species: str) -> tuple[dict[str, int], tuple[str, ...]] | None:
    """(base stats, types in capitals) of a species id in a generation's Pokédex (static data), or None."""
    return _pokedex(gen).get(species)


def _stat(base: int, level: int, hp: bool = False) -> float:
    """A stat at ``level`` with 31 IVs, 85 EVs and a neutral nature (random battles' spread)."""
    core = (2 * base + 31 + 21) * level / 100
    return core + level + 10 if hp else core + 5


STRENGTH_PRIOR = 0.7
"""``team_strength`` of a side none of whose standing Pokémon is revealed: about a random-battle Pokémon's mean."""
BOOST_MULTIPLIER = {stage: (2 + max(stage, 0)) / (2 - min(stage, 0)) for stage in range(-6, 7)}


def _matchup(gen: int, field: _Field) -> dict[str, list[float]]:
    """Per side: the active Pokémon's level, offence, bulk, whether it outspeeds the other's, its type edge, and its
    team's strength (``SIDE_FEATURES``' last six), from species and levels the battle has shown."""
    chart = _type_chart(gen)
    known: dict[str, tuple[int, dict[str, int], tuple[str, ...]] | None] = {}
    for side in SIDES:
        species = field.active.get(side)
        active = field.on(side)
        found = _dex(gen, species) if species and active is not None and not active.fainted else None
        if found is not None:
            types = (field.tera_type[side],) if side in field.tera_type else found[1]
            known[side] = (field.levels[side].get(species or "", 100), found[0], types)
        else:
            known[side] = None
    speeds = {}
    for seat in SIDES:
        found_here = known[seat]
        if found_here is not None:
            boost = BOOST_MULTIPLIER[max(-6, min(6, field.boosts[seat].get("spe", 0)))]
            on = field.on(seat)
            paralysed = on is not None and on.status == "PAR"
            speeds[seat] = _stat(found_here[1]["spe"], found_here[0]) * boost * (0.5 if paralysed else 1.0)
    out: dict[str, list[float]] = {}
    for side in SIDES:
        other_side = other(side)
        here, there = known[side], known[other_side]
        values = []
        for mon in field.seen(side):
            species = _id(mon.species)
            found = _dex(gen, species) if not mon.fainted else None
            if found is not None:
                values.append(sum(found[0].values()) * field.levels[side].get(species, 100) / 100)
        strength = sum(values) / len(values) / 600 if values else STRENGTH_PRIOR
        if here is None:
            out[side] = [0.0, 0.0, 0.0, 0.0, 0.0, strength]
            continue
        level, base, types = here
        offence = max(_stat(base["atk"], level), _stat(base["spa"], level)) / 400
        bulk = math.sqrt(_stat(base["hp"], level, hp=True) * (_stat(base["def"], level) + _stat(base["spd"], level))
                         / 2) / 400
        outspeeds = 0.0
        if side in speeds and other_side in speeds:
            mine, theirs = speeds[side], speeds[other_side]
            outspeeds = 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        edge = 0.0
        if there is not None:
            best = max(math.prod(chart.get(defending, {}).get(attacking, 1.0) for defending in there[2])
                       for attacking in types)
            edge = max(-1.0, math.log2(best) / 2) if best > 0 else -1.0
        out[side] = [level / 100, offence, bulk, outspeeds, edge, strength]
    return out


def decision_rows(turns: Sequence[TurnRecord], format_id: str = "gen9randombattle") -> np.ndarray:
    """Pure: one row of ``FEATURES`` per decision of a battle (its turns in order; each turn's ``events`` are the
    protocol lines since the one before, so the rows read the battle up to each decision and nothing after).
    A row reads only what a spectator saw: the spectator protocol lines, the turn number and who decides there;
    never the turn's snapshots, which hold each side's own knowledge.
    ``format_id`` names the generation whose Pokédex gives species their types and base stats."""
    gen = _generation(format_id)
    field = _Field.start()
    rows = np.zeros((len(turns), len(FEATURES)), dtype=np.float64)
    for n, turn in enumerate(turns):
        for line in turn.events:
            field.feed(line)
        sides = []
        for side in SIDES:
            alone = side in turn.deciding and len(turn.deciding) == 1
            sides.append(_public_vector(field, side, alone) + field.side_vector(side))
        matchup = _matchup(gen, field)
        sides = [sides[0] + matchup["p1"] + field.play_vector("p1"), sides[1] + matchup["p2"] + field.play_vector("p2")]
        rows[n] = [*sides[0], *sides[1], min(turn.turn, 100) / 100]
    return rows


def _generation(format_id: str) -> int:
    """``gen4randombattle`` → 4; a format naming none (or one the Pokédex lacks) reads as generation 9."""
    match = re.match(r"gen([0-9])(?![0-9])", format_id or "")
    return int(match.group(1)) if match and 1 <= int(match.group(1)) <= 9 else 9


def swap_sides(rows: np.ndarray) -> np.ndarray:
    """Pure: the rows read from p2's seat (the two sides' blocks exchanged, the shared columns kept)."""
    return np.concatenate([rows[:, WIDTH:2 * WIDTH], rows[:, :WIDTH], rows[:, 2 * WIDTH:]], axis=1)


# ------------------------------------------------------------------------------------------------------ the model
@dataclass(frozen=True)
class ValueModel:
    """The weights: inputs standardised by ``mean``/``scale``, then ``g(z) = linear·z + out·tanh(hidden z + bias)``;
    p1's chance is ``sigmoid(g(z_p1) − g(z_p2))``. ``card`` is the training recipe and measures (plain data)."""

    mean: np.ndarray
    scale: np.ndarray
    linear: np.ndarray
    hidden: np.ndarray  # (units, inputs)
    bias: np.ndarray
    out: np.ndarray
    card: dict[str, Any]

    def to_json(self) -> str:
        """The weights file: fixed key order and 6 significant digits, so equal weights give equal bytes."""
        def numbers(array: np.ndarray) -> Any:
            return json.loads(json.dumps(np.asarray(array).tolist()), parse_float=lambda s: float(f"{float(s):.6g}"))

        data = {"schema": MODEL_SCHEMA, "features": list(FEATURES), "card": self.card,
                "mean": numbers(self.mean), "scale": numbers(self.scale), "linear": numbers(self.linear),
                "hidden": numbers(self.hidden), "bias": numbers(self.bias), "out": numbers(self.out)}
        return json.dumps(data, indent=None, separators=(",", ":"), sort_keys=False) + "\n"


def model_from_json(text: str) -> ValueModel:
    """Pure: a weights file's text → the model; one-line ValueError for another schema or other features."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("schema") != MODEL_SCHEMA:
        raise ValueError(f"not a value model file (expected schema {MODEL_SCHEMA})")
    if data.get("features") != list(FEATURES):
        raise ValueError("the value model file was trained on other features than this code reads: retrain it "
                         "(scripts/train_value_model.py)")
    arrays = {key: np.asarray(data[key], dtype=np.float64) for key in ("mean", "scale", "linear", "hidden", "bias",
                                                                       "out")}
    inputs, units = len(FEATURES), len(arrays["bias"])
    shapes = {"mean": (inputs,), "scale": (inputs,), "linear": (inputs,), "hidden": (units, inputs),
              "bias": (units,), "out": (units,)}
    for key, shape in shapes.items():
        if arrays[key].shape != shape or not np.all(np.isfinite(arrays[key])):
            raise ValueError(f"the value model file's {key!r} is not {shape} finite numbers")
    return ValueModel(card=dict(data.get("card") or {}), **arrays)


def load_model(path: Path = MODEL_PATH) -> ValueModel:
    """Read a weights file (the only I/O here)."""
    return model_from_json(Path(path).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def default_model() -> ValueModel:
    """The shipped model, read once per process."""
    return load_model(MODEL_PATH)


def _g(model: ValueModel, rows: np.ndarray) -> np.ndarray:
    z = (rows - model.mean) / model.scale
    result: np.ndarray = z @ model.linear + np.tanh(z @ model.hidden.T + model.bias) @ model.out
    return result


def scores(model: ValueModel, rows: np.ndarray) -> np.ndarray:
    """Pure: p1's log-odds at each row (antisymmetric: ``scores(swap_sides(rows)) == -scores(rows)``)."""
    result: np.ndarray = _g(model, rows) - _g(model, swap_sides(rows))
    return result


def format_temperature(model: ValueModel, format_id: str | None) -> float:
    """Pure: the extra temperature the card gives ``format_id``'s generation (``calibration.per_generation``, fitted
    on that generation's calibration battles on top of the pooled one the weights carry), 1 for a generation it has
    none for, or no format. Why: one temperature for every format left gen9 overconfident and gen4 under."""
    if format_id is None:
        return 1.0
    per = (model.card.get("calibration") or {}).get("per_generation") or {}
    return float(per.get(str(_generation(format_id)), 1.0))


def win_probability(model: ValueModel, rows: np.ndarray, format_id: str | None = None) -> np.ndarray:
    """Pure: p1's chance to win at each row of a battle in ``format_id`` (the logistic of ``scores`` over the
    format's temperature, written so that no score overflows). Without a format: the pooled temperature only."""
    return 0.5 * (1 + np.tanh(scores(model, rows) / format_temperature(model, format_id) / 2))


def estimate_battle(model: ValueModel, recording: Recording) -> list[tuple[int, float]]:
    """Pure: (decision index, p1's estimated chance to win, 4 places) at every decision of ``recording``."""
    if not recording.turns:
        return []
    values = win_probability(model, decision_rows(recording.turns, recording.format), recording.format)
    return [(turn.index, round(float(value), 4)) for turn, value in zip(recording.turns, values)]


# --------------------------------------------------------------------------------------------------------- fitting
def fit(rows: np.ndarray, outcomes: np.ndarray, *, units: int = 16, steps: int = 1500, rate: float = 0.01,
        l2: float = 1e-3, seed: int = 0, card: dict[str, Any] | None = None) -> ValueModel:
    """Pure (deterministic for a seed on one machine): fit the model to p1's outcomes (1 a win, 0 a loss, ½ a tie)
    by full-batch Adam on the log loss, L2 on the weights; ``units=0`` is a logistic regression (the linear part
    alone). The standardisation is read from both seats, so it treats p1 and p2 alike."""
    both = np.concatenate([rows, swap_sides(rows)])
    mean = both.mean(axis=0)
    scale = both.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z1, z2 = (rows - mean) / scale, (swap_sides(rows) - mean) / scale
    y = np.asarray(outcomes, dtype=np.float64)
    rng = np.random.default_rng(seed)
    inputs = rows.shape[1]
    params = {"linear": np.zeros(inputs), "hidden": rng.normal(0, 1 / math.sqrt(inputs), (units, inputs)),
              "bias": np.zeros(units), "out": rng.normal(0, 1 / math.sqrt(max(units, 1)), units)}
    first = {k: np.zeros_like(v) for k, v in params.items()}
    second = {k: np.zeros_like(v) for k, v in params.items()}
    count = len(y)
    for step in range(1, steps + 1):
        h1, h2 = np.tanh(z1 @ params["hidden"].T + params["bias"]), np.tanh(z2 @ params["hidden"].T + params["bias"])
        score = z1 @ params["linear"] + h1 @ params["out"] - z2 @ params["linear"] - h2 @ params["out"]
        p = 0.5 * (1 + np.tanh(score / 2))
        d = (p - y) / count  # d(mean log loss)/d(score)
        back1, back2 = np.outer(d, params["out"]) * (1 - h1 ** 2), np.outer(d, params["out"]) * (1 - h2 ** 2)
        grads = {"linear": (z1 - z2).T @ d + l2 * params["linear"],
                 "out": (h1 - h2).T @ d + l2 * params["out"],
                 "hidden": back1.T @ z1 - back2.T @ z2 + l2 * params["hidden"],
                 "bias": back1.sum(axis=0) - back2.sum(axis=0)}
        for key, grad in grads.items():
            first[key] = 0.9 * first[key] + 0.1 * grad
            second[key] = 0.999 * second[key] + 0.001 * grad ** 2
            params[key] = params[key] - rate * (first[key] / (1 - 0.9 ** step)) / (
                np.sqrt(second[key] / (1 - 0.999 ** step)) + 1e-8)
    return ValueModel(mean=mean, scale=scale, card=dict(card or {}), **params)


def fit_temperature(model: ValueModel, rows: np.ndarray, outcomes: np.ndarray) -> float:
    """Pure: the temperature ``T`` of least log loss for p1's chance ``sigmoid(score / T)`` on held-out ``rows`` (a
    golden-section search over log T in [−2, 2]: deterministic). T < 1 sharpens an underconfident model."""
    score = scores(model, rows)
    y = np.asarray(outcomes, dtype=np.float64)

    def loss(log_t: float) -> float:
        p = np.clip(0.5 * (1 + np.tanh(score / math.exp(log_t) / 2)), 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

    low, high = -2.0, 2.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(80):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if loss(a) < loss(b):
            high = b
        else:
            low = a
    return math.exp((low + high) / 2)


def with_temperature(model: ValueModel, temperature: float, card: dict[str, Any] | None = None) -> ValueModel:
    """Pure: the model whose score is ``model``'s divided by ``temperature`` (its linear and output weights are), so
    the weights file keeps its shape and the model stays symmetric; ``card`` replaces the card when given."""
    return ValueModel(mean=model.mean, scale=model.scale, linear=model.linear / temperature, hidden=model.hidden,
                      bias=model.bias, out=model.out / temperature,
                      card=dict(model.card if card is None else card))


def brier(predicted: Iterable[float], outcomes: Iterable[float]) -> float:
    """Pure: the mean squared gap between predictions and outcomes."""
    pairs = list(zip(predicted, outcomes))
    return sum((p - y) ** 2 for p, y in pairs) / len(pairs) if pairs else math.nan
