"""The player's view from a public log: each side's own team completed from the format's set data, and at each of
its decisions the state text, the v1 prompt, the legal actions and the action taken, every guess marked.

A public log (a replay, a spectator's protocol log) shows what was revealed: the moves each Pokémon used, an item
once it acted or was lost, an ability once announced, HP as a whole percent. The player knew more about its own
team: every set, exact HP, the team's order. ``own_team`` completes each revealed Pokémon with the most likely
set of the format's set data that agrees with what the log revealed (``wolfeclick.game.sets.candidates``, the
sampler the ``search`` policy uses), with that set's probability. ``player_views`` then replays the log into each
side's own tracker — its own Pokémon's HP lines written as exact HP from the inferred maximum — and, at every
decision point of the import, feeds it the request that side would have been sent, built from the completed team.
The observation the runner would have built comes out of it: the state markdown, the ``wolfeclick-v1`` chat, the
legal actions and the action the log shows was taken.

What a public log cannot hold, and so is always marked inferred when it shows in a prompt:

- a Pokémon that never appeared (its species): left out of the roster, ``team`` confidence 0;
- the team's order (Part B lists the team in its original order, the options list switches in the request's
  order): the lead first, the rest in the order they appeared; confidence 1/(n-1)! for n Pokémon known;
- exact HP: a spectator sees ``ceil(100·hp/max)``; the range of HP that shows is narrowed by heals and damage of a
  known amount (Leftovers, Life Orb, poison and Toxic, burn, weather, Leech Seed, Stealth Rock, Spikes, Recover-like
  moves, Substitute) and its middle is shown; confidence 1/width;
- moves, item, ability and tera type not revealed: the most likely consistent set's, with the probability that the
  field is right (the candidates agreeing on it);
- PP (uses counted from the log, Pressure ignored) and what disables a move besides a choice lock, Taunt, Encore,
  Disable and running out of PP; trapping is never inferred.

Pure over plain data: the recording and a ``SetBook`` in, ``PlayerView`` rows out (``wolfeclick.sim.setdata``
loads the book at the edge).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from poke_env.data import GenData

from wolfeclick.battle.schema import Recording
from wolfeclick.battle.tracker import SideTracker, generation
from wolfeclick.game.actions import LegalAction, legal_actions, to_id
from wolfeclick.game.prompts import ArenaV1, WolfeclickV1
from wolfeclick.game.sets import STATS, PokemonSet, Revealed, SetBook, candidates
from wolfeclick.game.state import format_state
from wolfeclick.policies.base import Observation
from wolfeclick.sides import SIDES, Side, other

__all__ = ["FIELDS", "OwnMon", "PlayerView", "own_team", "player_views", "revealed_team"]

FIELDS = ("team", "order", "moves", "item", "ability", "tera", "hp")
"""What a view may have inferred, each with the confidence that it is what the player saw (1.0: known)."""
_NOT_SET_MOVES = {"struggle", "recharge"}
_HP_AT = {"switch": 4, "drag": 4, "replace": 4, "-damage": 3, "-heal": 3, "-sethp": 3}
_HALF_HEALS = frozenset({"recover", "roost", "softboiled", "milkdrink", "slackoff", "healorder"})
"""Moves that heal half the user's max HP whatever the weather (a ``-heal`` line with no ``[from]``)."""
_TRICKS = ("[from] move: Trick", "[from] move: Switcheroo", "[from] move: Thief", "[from] move: Covet",
           "[from] move: Bestow", "[from] move: Recycle", "[from] ability: Pickup", "[from] ability: Harvest",
           "[from] ability: Magician", "[from] ability: Pickpocket")


def _key(ident: str) -> str:
    """``p1a: Luxray`` → ``p1: Luxray`` (poke-env's team key)."""
    head, _, name = ident.partition(": ")
    return f"{head[:2]}: {name}"


def _of_tag(parts: list[str]) -> str | None:
    return next((p[4:].strip() for p in parts[3:] if p.startswith("[of]")), None)


# ------------------------------------------------------------------------------------------- revealed facts


@dataclass(frozen=True)
class SeenMon:
    """One of a side's Pokémon as the whole log revealed it."""

    key: str
    details: str
    revealed: Revealed
    used: tuple[str, ...]
    """Its moves in the order it first used them."""


def original_items(log: list[str], side: Side) -> dict[str, str]:
    """The item each of ``side``'s Pokémon started with, where the log shows it before anything swapped it."""
    found: dict[str, str] = {}
    swapped: set[str] = set()
    for line in log:
        parts = line.split("|")
        if len(parts) < 4:
            continue
        tag = parts[1]
        holder: str | None = None
        item: str | None = None
        if tag in ("-item", "-enditem"):
            if any(p in _TRICKS for p in parts[4:]):
                swapped.add(_key(parts[2]))
                continue
            holder, item = parts[2], parts[3]
        else:
            named = next((p[len("[from] item: "):] for p in parts[3:] if p.startswith("[from] item: ")), None)
            if named is not None:
                holder, item = _of_tag(parts) or parts[2], named
            elif tag == "-activate" and parts[3].startswith("item: "):
                holder, item = parts[2], parts[3][len("item: "):]
        if holder is None or item is None or not holder.startswith(side):
            continue
        key = _key(holder)
        if key not in swapped:
            found.setdefault(key, to_id(item))
    return found


def ruled_out_items(log: list[str], side: Side) -> dict[str, set[str]]:
    """Items a Pokémon of ``side`` cannot hold, by what the log shows did not happen: no Leftovers heal at the end
    of a turn in which a move damaged it and it stayed in, no Life Orb recoil after its move damaged a foe (a faint
    in between leaves it open), two different moves in a row without switching out (no Choice item)."""
    out: dict[str, set[str]] = {}
    active: str | None = None
    damaged = False
    healed = False
    last_move: dict[str, str] = {}
    acting: str | None = None
    hit = recoil = False
    for line in log:
        parts = line.split("|")
        tag = parts[1] if len(parts) > 1 else ""
        fromed = any(p.startswith("[from]") for p in parts[4:])
        if acting is not None and tag in ("move", "turn", "upkeep", "switch", "drag", "cant", "faint"):
            if hit and not recoil and tag != "faint":
                out.setdefault(acting, set()).add("lifeorb")
            acting = None
        mine = len(parts) > 2 and parts[2].startswith(side)
        if tag in ("switch", "drag", "replace") and mine:
            active, damaged, healed = _key(parts[2]), False, False
            last_move.pop(active, None)
        elif tag == "turn":
            healed = False
        elif tag == "upkeep":
            if active is not None and damaged and not healed:
                out.setdefault(active, set()).add("leftovers")
            damaged = False
        elif tag == "faint" and mine:
            active = None
        elif tag == "move" and mine and active is not None and len(parts) > 3 and not fromed:
            move = to_id(parts[3])
            if last_move.get(active, move) != move:
                out.setdefault(active, set()).update({"choiceband", "choicescarf", "choicespecs"})
            last_move[active] = move
            acting, hit, recoil = active, False, False
        elif tag in ("-damage", "-heal") and len(parts) > 3:
            if mine and active is not None and _key(parts[2]) == active:
                if tag == "-heal" and "[from] item: Leftovers" in parts[4:]:
                    healed = True
                elif tag == "-damage" and not fromed and not parts[3].startswith("0"):
                    damaged = True
                elif tag == "-damage" and "[from] item: Life Orb" in parts[4:]:
                    recoil = True
            elif tag == "-damage" and not mine and acting is not None and not fromed:
                hit = True
    return out


def revealed_team(log: list[str], fmt: str, side: Side, names: Mapping[str, str] | None = None) -> list[SeenMon]:
    """``side``'s Pokémon the log showed, in the order they first appeared, with what it revealed of each (read
    by the opponent's own tracker, as that player saw them, plus the item each started with)."""
    names = {s: (names or {}).get(s) or s for s in SIDES}
    watcher = SideTracker("views", other(side), names[other(side)], fmt)
    watcher.feed([f"|player|{s}|{names[s]}|" for s in SIDES])
    watcher.feed(log)
    details: dict[str, str] = {}
    for line in log:
        parts = line.split("|")
        if len(parts) > 3 and parts[1] in ("switch", "drag", "replace") and parts[2].startswith(side):
            details.setdefault(_key(parts[2]), parts[3])
    items = original_items(log, side)
    team = []
    for key, text in details.items():
        mon = watcher.battle.opponent_team.get(key)
        species = to_id(text.split(",")[0])
        level = next((int(p.strip()[1:]) for p in text.split(",")[1:] if p.strip()[1:].isdigit()
                      and p.strip().startswith("L")), 100)
        used = tuple(to_id(m) for m in (mon.moves if mon is not None else {}) if to_id(m) not in _NOT_SET_MOVES)
        ability = to_id(mon.ability) if mon is not None and mon.ability else None
        tera = getattr(mon, "tera_type", None) if mon is not None and getattr(mon, "terastallized", False) else None
        revealed = Revealed(species=species, level=level, moves=frozenset(used), item=items.get(key),
                            ability=ability, tera_type=tera.name.lower() if tera is not None else None)
        team.append(SeenMon(key, text, revealed, used))
    return team


# ------------------------------------------------------------------------------------------- the completed team


@dataclass(frozen=True)
class OwnMon:
    """One of a side's Pokémon completed: what was revealed, the set inferred for it and how sure each field is."""

    key: str
    details: str
    species: str
    level: int
    set: PokemonSet
    moves: tuple[str, ...]
    """The set's four moves, the ones used first (in the order used), then the rest (a guess at the set's order)."""
    probability: float
    """The probability of the whole set given what was revealed."""
    confidence: Mapping[str, float]
    """``moves``, ``item``, ``ability``, ``tera``: the probability each field is right (1.0: revealed)."""
    max_hp: int
    stats: Mapping[str, int]


def _stat(base: int, level: int, iv: int, ev: int, hp: bool) -> int:
    core = (2 * base + iv + ev // 4) * level // 100
    return core + level + 10 if hp else core + 5


def _ordered_moves(chosen: PokemonSet, used: tuple[str, ...]) -> tuple[str, ...]:
    def same(a: str, b: str) -> bool:
        return a == b or (a.startswith("hiddenpower") and b.startswith("hiddenpower"))

    first = [m for u in used for m in chosen.moves if same(m, u)]
    first = list(dict.fromkeys(first))
    rest = [m for m in chosen.moves if m not in first]
    return tuple((first + rest)[:4])


_HP_TYPES = ("fighting", "flying", "poison", "ground", "rock", "bug", "ghost", "steel", "fire", "water", "grass",
             "electric", "psychic", "ice", "dragon", "dark")


def hidden_power(ivs: tuple[int, ...], gen: int) -> tuple[str, int]:
    """Hidden Power's type and power from a set's IVs (``STATS`` order), by the games' rule (gen 3 on)."""
    order = (0, 1, 2, 5, 3, 4)  # hp, atk, def, spe, spa, spd
    kind = sum((ivs[at] % 2) << bit for bit, at in enumerate(order))
    power = sum(((ivs[at] // 2) % 2) << bit for bit, at in enumerate(order))
    return _HP_TYPES[kind * 15 // 63], (power * 40 // 63 + 30 if gen < 6 else 60)


def _likeliest(found: list[tuple[PokemonSet, float]], mon: SeenMon) -> tuple[PokemonSet, float, dict[str, float]]:
    """Each field's most likely value over the consistent sets (what gets the most fields right): the used moves and
    the most likely others to four, the most likely item, ability and tera type; the spread and level of the most
    likely set. With each field's probability (the moves': the product of the guessed moves')."""
    chosen, probability = found[0]

    def mode(read: Any) -> tuple[Any, float]:
        weights: dict[Any, float] = {}
        for candidate, p in found:
            weights[read(candidate)] = weights.get(read(candidate), 0.0) + p
        value = max(weights.items(), key=lambda item: item[1])  # ties: the first seen, the likeliest set's
        return value[0], value[1]

    used = [m for m in _ordered_moves(chosen, mon.used) if m in mon.revealed.moves or _plain(m) in
            {_plain(u) for u in mon.revealed.moves}]
    weights: dict[str, float] = {}
    for candidate, p in found:
        rest = [m for m in candidate.moves if m not in used]
        share = min(1.0, max(0, 4 - len(used)) / len(rest)) if rest else 0.0
        for move in rest:
            weights[move] = weights.get(move, 0.0) + p * share
    guessed = sorted(weights.items(), key=lambda item: -item[1])[:max(0, 4 - len(used))]
    moves = tuple(used + [m for m, _ in guessed])
    item, item_p = mode(lambda c: c.item)
    ability, ability_p = mode(lambda c: c.ability)
    tera, tera_p = mode(lambda c: c.tera_type)
    confidence = {"moves": round(math.prod(min(1.0, w) for _, w in guessed), 6), "item": round(item_p, 6),
                  "ability": round(ability_p, 6), "tera": round(tera_p, 6)}
    if "hiddenpower" in moves and "hiddenpower" not in chosen.moves:  # its type is in the IVs of a set that has it
        chosen = replace(chosen, ivs=next(c.ivs for c, _ in found if "hiddenpower" in c.moves))
    return replace(chosen, moves=moves, item=item, ability=ability, tera_type=tera), probability, confidence


def _plain(move: str) -> str:
    return "hiddenpower" if move.startswith("hiddenpower") else move


def own_team(book: SetBook, seen: Iterable[SeenMon], gen: int,
             excluded: Mapping[str, set[str]] | None = None) -> list[OwnMon]:
    """Each seen Pokémon completed: each field's most likely value over the sets that agree with what was revealed
    of it (``excluded``: items the log rules out, by Pokémon key)."""
    excluded = excluded or {}
    dex = GenData.from_gen(gen).pokedex
    team = []
    for mon in seen:
        found = candidates(book, mon.revealed)
        if mon.revealed.item is None and excluded.get(mon.key):
            kept = [(s, p) for s, p in found if s.item not in excluded[mon.key]]
            total = sum(p for _, p in kept)
            found = [(s, p / total) for s, p in kept] if kept and total > 0 else found
        chosen, probability, confidence = _likeliest(found, mon)
        revealed = mon.revealed
        if len(revealed.moves) >= 4:
            confidence["moves"] = 1.0
        if revealed.item is not None:
            confidence["item"] = 1.0
        if revealed.ability is not None:
            confidence["ability"] = 1.0
        if revealed.tera_type is not None or gen < 9:
            confidence["tera"] = 1.0
        level = revealed.level or chosen.level
        entry = dex.get(mon.revealed.species) or dex.get(chosen.species) or {}
        base = entry.get("baseStats") or dict.fromkeys(STATS, 80)
        stats = {stat: _stat(int(base[stat]), level, chosen.ivs[i], chosen.evs[i], stat == "hp")
                 for i, stat in enumerate(STATS)}
        max_hp = 1 if mon.revealed.species == "shedinja" else stats.pop("hp")
        stats.pop("hp", None)
        moves = tuple(f"hiddenpower{hidden_power(chosen.ivs, gen)[0]}" if m == "hiddenpower" else m
                      for m in chosen.moves)
        team.append(OwnMon(mon.key, mon.details, mon.revealed.species, level, chosen, moves, round(probability, 6),
                           confidence, max_hp, stats))
    return team


# ------------------------------------------------------------------------------------------- HP from percents


def percent_range(percent: int, max_hp: int) -> tuple[int, int]:
    """The HP values a spectator sees as ``percent`` (Showdown: ``ceil(100·hp/max)``, 99 while not full)."""
    if percent <= 0:
        return 0, 0
    if percent >= 100:
        return max_hp, max_hp
    low = max(1, (percent - 1) * max_hp // 100 + 1)
    high = min(max_hp - 1, percent * max_hp // 100)
    if low > high:
        value = max(1, min(max_hp - 1, round(percent * max_hp / 100)))
        return value, value
    return low, high


def known_share(parts: list[str], gen: int) -> float | None:
    """The share of max HP a heal or damage line of a fixed amount moves (None: an amount the log does not say)."""
    source = next((p[len("[from] "):] for p in parts[4:] if p.startswith("[from] ")), None)
    if source is None:
        return None
    lowered = source.lower()
    shares = {"item: leftovers": 1 / 16, "item: black sludge": 1 / 16 if parts[1] == "-heal" else 1 / 8,
              "item: life orb": 1 / 10, "psn": 1 / 8, "brn": 1 / 8 if gen < 7 else 1 / 16, "leech seed": 1 / 8,
              "sandstorm": 1 / 16, "hail": 1 / 16, "ability: rain dish": 1 / 16, "ability: ice body": 1 / 16,
              "item: sticky barb": 1 / 8, "ability: solar power": 1 / 8, "nightmare": 1 / 4,
              "curse": 1 / 4}
    return shares.get(lowered)


@dataclass
class _HpTrack:
    max_hp: int
    low: int
    high: int

    def estimate(self) -> int:
        return (self.low + self.high) // 2

    def see(self, percent: int, amount: int | None, heal: bool, keep: bool) -> None:
        """A line showed ``percent``: after a change of ``amount`` (None: unknown; ``keep``: none expected)."""
        shown = percent_range(percent, self.max_hp)
        low, high = shown
        if amount is not None:
            if heal:
                low, high = min(self.max_hp, self.low + amount), min(self.max_hp, self.high + amount)
            else:
                low, high = max(0, self.low - amount), max(0, self.high - amount)
        elif not keep:
            self.low, self.high = shown
            return
        low, high = max(low, shown[0]), min(high, shown[1])
        self.low, self.high = (low, high) if low <= high else shown


def _percent(text: str) -> tuple[int, str] | None:
    head, _, status = text.partition(" ")
    if head == "0" or status == "fnt":
        return 0, status
    number, _, top = head.partition("/")
    if not number.isdigit() or top != "100":
        return None
    return int(number), status


# ------------------------------------------------------------------------------------------- the side's own view


@dataclass
class _Own:
    """What the walk through the log knows of one own Pokémon at the current line."""

    mon: OwnMon
    hp: _HpTrack
    item: str
    uses: dict[str, int] = field(default_factory=dict)
    locked: str | None = None
    encore: bool = False
    taunt: bool = False
    disabled: str | None = None
    last_move: str | None = None
    status: str = ""
    toxic: int = 0
    """Turns of Toxic damage since it was badly poisoned or last switched in."""
    pending: str | None = None
    """Its own move just used, until the next HP line (a heal or cost of a known share)."""
    copied: str | None = None
    """The key of the foe it transformed into (its moves are the foe's until it switches out)."""
    copied_uses: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PlayerView:
    """One decision of one side, as a battle played here would have shown it, with what was inferred."""

    index: int
    turn: int
    side: Side
    state: str
    messages: list[dict[str, str]]
    """The ``wolfeclick-v1`` chat (system, user): what the published checkpoints read."""
    arena_messages: list[dict[str, str]]
    """The ``arena-v1`` chat."""
    legal_actions: list[LegalAction]
    action: LegalAction | None
    completion: str
    """The taken action as the v1 profile's answer text (empty when the log shows none)."""
    confidence: Mapping[str, float]
    """Per field of ``FIELDS``: the probability it is what the player saw (1.0: no inference)."""

    @property
    def total_confidence(self) -> float:
        return round(math.prod(self.confidence.values()), 6)

    @property
    def exact(self) -> bool:
        return all(value >= 1.0 for value in self.confidence.values())

    @property
    def prompt(self) -> str:
        """The v1 chat's user text: the state and the options."""
        return self.messages[-1]["content"]

    @property
    def arena_prompt(self) -> str:
        return self.arena_messages[-1]["content"]


def _move_entry(move_id: str, gen: int, ivs: tuple[int, ...]) -> tuple[str, int, str]:
    """(request name, max PP, target) of a set's move id."""
    moves = GenData.from_gen(gen).moves
    if move_id.startswith("hiddenpower") and move_id != "hiddenpower":
        kind = move_id[len("hiddenpower"):].capitalize()
        entry = moves.get("hiddenpower", {})
        power = hidden_power(ivs, gen)[1]
        return f"Hidden Power {kind} {power}", int(entry.get("pp", 15)) * 8 // 5, "normal"
    entry = moves.get(move_id) or {}
    name = str(entry.get("name", move_id))
    if move_id in ("return", "frustration") and gen < 8:  # a request shows their power (happiness 255 / 0)
        name = f"{name} 102"
    return name, int(entry.get("pp", 5)) * 8 // 5, str(entry.get("target", "normal"))


def _is_status_move(move_id: str, gen: int) -> bool:
    entry = GenData.from_gen(gen).moves.get(move_id) or {}
    return entry.get("category") == "Status"


class _SideWalk:
    """One side's own view built line by line from the public log: HP rewritten exact, the request it was sent."""

    def __init__(self, side: Side, team: list[OwnMon], fmt: str, name: str, gen: int) -> None:
        self.side = side
        self.gen = gen
        self.own = {m.key: _Own(m, _HpTrack(m.max_hp, m.max_hp, m.max_hp), m.set.item) for m in team}
        self.slots = [m.key for m in team]
        self.tracker = SideTracker("views", side, name, fmt)
        self.fed = 0
        self.spikes = 0
        """Layers of Spikes on this side."""

    def rewrite(self, line: str) -> str:
        parts = line.split("|")
        tag = parts[1] if len(parts) > 1 else ""
        if tag in ("-sidestart", "-sideend") and len(parts) > 3 and parts[2].startswith(self.side) \
                and parts[3].replace("move: ", "") == "Spikes":
            self.spikes = self.spikes + 1 if tag == "-sidestart" else 0
        if tag in ("move", "turn"):
            for other_own in self.own.values():
                other_own.pending = None
        if len(parts) < 3 or not parts[2].startswith(self.side):
            return line
        key = _key(parts[2])
        own = self.own.get(key)
        if own is None:
            return line
        if tag in ("switch", "drag", "replace"):
            at = self.slots.index(key)
            self.slots[0], self.slots[at] = self.slots[at], self.slots[0]
            own.locked = None
            own.encore = own.taunt = False
            own.disabled = None
            own.copied, own.copied_uses = None, []
            own.toxic = 0
        elif tag == "move" and len(parts) > 3 and not any(p.startswith("[from]") for p in parts[4:]):
            move = to_id(parts[3])
            if own.copied is not None and move not in own.copied_uses:
                own.copied_uses.append(move)
            own.uses[move] = own.uses.get(move, 0) + 1
            own.pending = move
            own.last_move = move
            if own.item.startswith("choice"):
                own.locked = own.locked or move
        elif tag == "-status" and len(parts) > 3:
            own.status = parts[3]
            own.toxic = 0
        elif tag == "-curestatus":
            own.status = ""
        elif tag == "-transform" and len(parts) > 3:
            own.copied, own.copied_uses = _key(parts[3]), []
        elif tag == "-enditem" and len(parts) > 3:
            own.item = ""
            own.locked = None
        elif tag == "-item" and len(parts) > 3:
            own.item = to_id(parts[3])
        elif tag in ("-start", "-end") and len(parts) > 3:
            effect = parts[3].replace("move: ", "")
            start = tag == "-start"
            if effect == "Encore":
                own.encore = start
            elif effect == "Taunt":
                own.taunt = start
            elif effect == "Disable":
                own.disabled = to_id(parts[4]) if start and len(parts) > 4 else None
        where = _HP_AT.get(tag)
        if where is None or len(parts) <= where:
            return line
        shown = _percent(parts[where])
        if shown is None:
            return line
        percent, status = shown
        own.hp.see(percent, self.amount(parts, own) if tag in ("-damage", "-heal") else None, tag == "-heal",
                   keep=tag in ("switch", "drag", "replace"))
        if status or tag in ("switch", "drag", "replace"):
            own.status = status
        hp = own.hp.estimate()
        parts[where] = "0 fnt" if hp <= 0 else f"{hp}/{own.hp.max_hp}" + (f" {status}" if status else "")
        return "|".join(parts)

    def amount(self, parts: list[str], own: _Own) -> int | None:
        """The HP a heal or damage line moved, where the log says enough to know it."""
        top = own.hp.max_hp
        source = next((p[len("[from] "):] for p in parts[4:] if p.startswith("[from] ")), None)
        pending, own.pending = own.pending, None
        if source is None:  # the line right after its own Recover, Substitute…: a fixed share of its max HP
            if pending in _HALF_HEALS and parts[1] == "-heal":
                return (top * 2048 + 2047) // 4096
            if pending == "substitute" and parts[1] == "-damage":
                return max(1, top // 4)
            if pending == "bellydrum" and parts[1] == "-damage":
                return max(1, top // 2)
            return None
        if source == "psn" and own.status == "tox":  # Toxic: a sixteenth more each turn since it began
            own.toxic += 1
            return max(1, top // 16) * own.toxic
        if source == "Stealth Rock":
            dex = GenData.from_gen(self.gen)
            types = (dex.pokedex.get(own.mon.species) or {}).get("types") or []
            factor = math.prod(dex.type_chart.get(t.upper(), {}).get("ROCK", 1) for t in types)
            return max(1, math.floor(top * factor / 8))
        if source == "Spikes" and self.spikes:
            return max(1, top * (3, 4, 6)[min(self.spikes, 3) - 1] // 24)
        share = known_share(parts, self.gen)
        return max(1, math.floor(top * share)) if share is not None else None

    def feed_to(self, log: list[str], position: int) -> None:
        lines = [self.rewrite(line) for line in log[self.fed:position]]
        self.tracker.feed(lines)
        self.fed = max(self.fed, position)

    def active_moves(self, active: _Own) -> tuple[str, ...]:
        """The active Pokémon's moves: its set's, or after a Transform the foe's it has seen (and used) since."""
        if active.copied is None:
            return active.mon.moves
        foe = self.tracker.battle.opponent_team.get(active.copied)
        seen = [to_id(m) for m in (foe.moves if foe is not None else {}) if to_id(m) not in _NOT_SET_MOVES]
        mon = self.tracker.battle.team.get(active.mon.key)
        known = {to_id(m) for m in (mon.moves if mon is not None else {})}  # poke-env refuses a move it never saw
        return tuple(m for m in dict.fromkeys(active.copied_uses + seen) if m in known)[:4] or active.mon.moves

    def request(self, force_switch: bool, known_only: bool = False) -> dict[str, Any]:
        battle = self.tracker.battle
        pokemon = []
        for slot, key in enumerate(self.slots):
            own = self.own[key]
            seen = battle.team.get(key)
            hp = own.hp.estimate()
            status = getattr(seen, "status", None) if seen is not None else None
            status_text = status.name.lower() if status is not None and status.name != "FNT" else ""
            condition = "0 fnt" if hp <= 0 else f"{hp}/{own.hp.max_hp}" + (f" {status_text}" if status_text else "")
            entry: dict[str, Any] = {
                "ident": key, "details": own.mon.details, "condition": condition, "active": slot == 0,
                "stats": dict(own.mon.stats), "moves": list(own.mon.moves), "baseAbility": own.mon.set.ability,
                "item": own.item, "pokeball": "pokeball",
            }
            if self.gen >= 7:
                entry["ability"] = own.mon.set.ability
            if self.gen >= 9:
                entry["teraType"] = own.mon.set.tera_type
                entry["terastallized"] = ""
            pokemon.append(entry)
        request: dict[str, Any] = {"side": {"name": self.tracker.name, "id": self.side, "pokemon": pokemon},
                                   "rqid": self.fed}
        if force_switch:
            request["forceSwitch"] = [True]
            return request
        active = self.own[self.slots[0]]
        moves = []
        listed = self.active_moves(active)
        if known_only:
            mon = self.tracker.battle.team.get(active.mon.key)
            known = {to_id(m) for m in (mon.moves if mon is not None else {})}
            listed = tuple(m for m in listed if _plain(m) in known or m in known) or listed[:1]
        for move_id in listed:
            name, max_pp, target = _move_entry(move_id, self.gen, active.mon.set.ivs)
            plain = "hiddenpower" if move_id.startswith("hiddenpower") else move_id
            pp = max(0, max_pp - active.uses.get(plain, 0))
            disabled = pp <= 0 or (active.locked is not None and active.locked != plain) \
                or (active.encore and active.last_move is not None and active.last_move != plain) \
                or (active.taunt and _is_status_move(plain, self.gen)) or active.disabled == plain
            moves.append({"move": name, "id": plain, "pp": pp, "maxpp": max_pp, "target": target,
                          "disabled": disabled})
        request["active"] = [{"moves": moves}]
        return request


def _order_confidence(known: int) -> float:
    return 1.0 / math.factorial(max(0, known - 1))


def _action_of(seen: Any, legal: list[LegalAction]) -> LegalAction | None:
    if seen is None:
        return None
    wanted = to_id(seen.choice)
    for action in legal:
        if action.kind == seen.action and (wanted in action.ids() or (
                wanted == "hiddenpower" and action.id == "hiddenpower")):
            return action
    return None


def player_views(recording: Recording, book: SetBook, sides: Iterable[Side] = SIDES,
                 probe: Callable[[PlayerView, Observation], None] | None = None) -> list[PlayerView]:
    """Every decision of ``sides`` in a public-log import, as each player saw it (``book``: the format's set data).
    ``probe`` is called with each view and its observation, in decision order, while the tracker stands there (to ask
    a policy what it would play from the inferred state)."""
    from wolfeclick.interop.showdown import decision_points

    log = list(recording.log)
    fmt = recording.format
    gen = generation(fmt)
    points = decision_points(log)
    if len(points) != len(recording.turns):
        return []
    wanted = list(sides)
    names: dict[str, str] = {s: recording.players[s].name or s for s in SIDES}
    teams = {side: own_team(book, revealed_team(log, fmt, side, names), gen, ruled_out_items(log, side))
             for side in wanted}
    walks = {side: _SideWalk(side, teams[side], fmt, recording.players[side].name or side, gen) for side in wanted}
    profiles = {side: WolfeclickV1() for side in wanted}
    for walk in walks.values():
        walk.tracker.feed([f"|player|{s}|{recording.players[s].name or s}|" for s in SIDES])
    views = []
    for (position, _, deciding), record in zip(points, recording.turns):
        force = position == 0 or not log[position - 1].startswith("|turn|")
        for side in deciding:
            if side not in walks or side not in record.decisions:
                continue
            walk = walks[side]
            walk.feed_to(log, position)
            request = walk.request(force)
            try:
                walk.tracker.feed_request(request)
            except AssertionError:  # poke-env refuses a move it never saw the Pokémon have (a copied move set)
                request = walk.request(force, known_only=True)
                walk.tracker.feed_request(request)
            legal = legal_actions(request)
            observation = Observation(side=side, turn=record.turn, format=fmt, battle=walk.tracker.battle,
                                      request=request, legal_actions=legal, state=format_state(walk.tracker.battle),
                                      rng=random.Random(f"{recording.id}:{side}:{record.index}"))
            prompt = profiles[side].build(observation)
            action = _action_of(record.decisions[side].action, legal)
            completion = next((c.text for c in prompt.candidates if c.action == action), "")
            if action is not None and not completion:
                completion = action.json_text()
            arena = ArenaV1().build(observation).messages
            view = PlayerView(record.index, record.turn, side, observation.state, prompt.messages, arena, legal,
                              action, completion, _confidence(teams[side], walk, force))
            views.append(view)
            if probe is not None:
                probe(view, observation)
    return views


def _confidence(team: list[OwnMon], walk: _SideWalk, force: bool) -> dict[str, float]:
    """What this decision's prompt took on trust: every own Pokémon shows its moves and item (Part B), the active
    one its ability; HP of every own Pokémon; the team's order; members never seen."""
    size = getattr(walk.tracker.battle, "_team_size", {}).get(walk.side, 6)
    result = {name: 1.0 for name in FIELDS}
    result["team"] = 1.0 if len(team) >= size else 0.0
    result["order"] = _order_confidence(len(team))
    for mon in team:
        for name in ("moves", "item", "tera"):
            result[name] *= mon.confidence[name]
        track = walk.own[mon.key].hp
        result["hp"] *= 1.0 / (track.high - track.low + 1)
    active = walk.own[walk.slots[0]].mon if walk.slots else None
    if active is not None and not force:
        result["ability"] = active.confidence["ability"]
    return {name: round(value, 6) for name, value in result.items()}
