"""Showdown spectator protocol → plain sentences ("heuristic's Frosmoth used Ice Beam on random's Porygon-Z.").

Pure text in, text out: the sentences are *not* HTML-escaped here (the view escapes everything it shows). A
``Narrator`` keeps the little state a reader needs to say "lost 39% of its HP": the last known HP of every Pokémon
it has seen. Lines it has nothing useful to say about (``|upkeep``, ``|rule|…``, timestamps, unknown minor
messages) are skipped rather than shown raw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from wolfeclick.digits import ascii_int
from wolfeclick.game.state import public_hp

__all__ = ["Sentence", "Narrator", "Message", "MESSAGES", "narrate", "pokemon_name", "effect_name"]

STATUS_WORDS = {
    "brn": ("was burned", "burn"),
    "par": ("was paralyzed", "paralysis"),
    "slp": ("fell asleep", "sleep"),
    "frz": ("was frozen solid", "freeze"),
    "psn": ("was poisoned", "poison"),
    "tox": ("was badly poisoned", "poison"),
}
CANT_WORDS = {
    "par": "is paralyzed and can't move",
    "slp": "is fast asleep",
    "frz": "is frozen solid",
    "flinch": "flinched and couldn't move",
    "recharge": "must recharge",
    "nopp": "has no PP left",
    "Focus Punch": "lost its focus and couldn't move",
    "Truant": "is loafing around",
    "attract": "is immobilized by love",
}
STAT_NAMES = {
    "atk": "Attack", "def": "Defense", "spa": "Sp. Atk", "spd": "Sp. Def", "spe": "Speed",
    "accuracy": "accuracy", "evasion": "evasiveness",
}
WEATHER_NAMES = {
    "SunnyDay": "The sunlight turned harsh", "RainDance": "It started to rain",
    "Sandstorm": "A sandstorm kicked up", "Hail": "It started to hail", "Snow": "It started to snow",
    "DesolateLand": "The sunlight turned extremely harsh", "PrimordialSea": "A heavy rain began to fall",
    "DeltaStream": "Mysterious strong winds appeared",
}
SKIPPED = {
    "", "upkeep", "t:", "gametype", "gen", "tier", "rule", "teamsize", "teampreview", "clearpoke",
    "poke", "-anim", "debug", "split", "inactive", "inactiveoff", "j", "J", "l", "L", "n", "N", "c", "c:", "chat",
    "raw", "html", "uhtml", "uhtmlchange", "seed", "timestamp", "badge", "rated", "-nothing", "-hint", "-center",
    "-combine", "-waiting", "request", "sentchoice", "bigerror", "error", "choice",
}
_EFFECT_PREFIX = re.compile(r"^(move|item|ability|pokemon|confusion)?:\s*", re.IGNORECASE)
_IDENT = re.compile(r"^(p[1-4])[a-d]?:\s*(.*)$")


@dataclass(frozen=True)
class Sentence:
    """One narrated event. ``kind`` lets the view style it: turn, move, damage, heal, faint, switch, status,
    boost, field, info, win."""

    kind: str
    text: str
    side: str | None = None


def effect_name(raw: str) -> str:
    """``"item: Life Orb"`` → ``"Life Orb"``; ``"move: Stealth Rock"`` → ``"Stealth Rock"``."""
    return _EFFECT_PREFIX.sub("", raw.strip())


def pokemon_name(ident: str) -> tuple[str | None, str]:
    """``"p2a: Porygon-Z"`` → ``("p2", "Porygon-Z")``; anything else → ``(None, ident)``."""
    match = _IDENT.match(ident.strip())
    if not match:
        return None, ident.strip()
    return match.group(1), match.group(2).strip()


def _hp_percent(raw: str) -> tuple[float | None, str | None]:
    """``"61/100"`` → (61.0, None); ``"0 fnt"`` → (0.0, "fnt"); ``"47/100 par"`` → (47.0, "par")."""
    parts = raw.strip().split()
    if not parts:
        return None, None
    status = parts[1] if len(parts) > 1 else None
    value = parts[0]
    try:
        if "/" in value:
            now, top = value.split("/", 1)
            top_f = float(top)
            return (max(0.0, min(100.0, 100.0 * float(now) / top_f)) if top_f > 0 else 0.0), status
        return max(0.0, min(100.0, float(value))), status
    except ValueError:
        return None, status


def possessive(owner: str) -> str:
    """"random's", and "your" for the person at this page ("You")."""
    return "your" if owner == "You" else f"{owner}'s"


def _fmt(pct: float) -> str:
    """An amount of HP (lost, restored)."""
    return f"{pct:.0f}%"


def _level(pct: float) -> str:
    """An HP level, written as the field writes it."""
    return f"{public_hp(pct)}%"


@dataclass
class Narrator:
    """Narrates protocol lines in order, remembering HP so damage can be told as an amount.

    ``names`` maps ``p1``/``p2`` to the players' display names. ``hp_delta`` accumulates each side's HP change in
    percentage points (for an end-of-battle estimate of team HP) and can be reset by the caller.
    """

    names: dict[str, str] = field(default_factory=dict)
    hp: dict[str, float] = field(default_factory=dict)
    hp_delta: dict[str, float] = field(default_factory=lambda: {"p1": 0.0, "p2": 0.0})
    active: dict[str, str] = field(default_factory=dict)
    """The name each side last sent out (for the end-of-battle field)."""
    players: dict[str, str] = field(default_factory=dict)
    """The simulator's player name → side (``|player|`` lines)."""

    # --- helpers -------------------------------------------------------------------------------------------
    def who(self, ident: str) -> str:
        side, name = pokemon_name(ident)
        if side is None:
            return name or "a Pokémon"
        return f"{possessive(self.names.get(side, side))} {name}"

    def side_name(self, raw: str) -> str:
        """``"p2: random"`` → ``"random's side"``."""
        side = raw.split(":", 1)[0].strip()
        return f"{possessive(self.names.get(side, side))} side" if side in ("p1", "p2", "p3", "p4") else raw

    def _key(self, ident: str) -> str:
        side, name = pokemon_name(ident)
        return f"{side}:{name}"

    def _set_hp(self, ident: str, pct: float | None) -> float | None:
        """Record a new HP and return the previous one (None when unknown)."""
        if pct is None:
            return None
        key = self._key(ident)
        before = self.hp.get(key)
        self.hp[key] = pct
        side = pokemon_name(ident)[0]
        if before is not None and side in self.hp_delta:
            self.hp_delta[side] += pct - before
        return before

    @staticmethod
    def _tags(args: list[str]) -> dict[str, str]:
        tags = {}
        for arg in args:
            if arg.startswith("[") and "]" in arg:
                key, _, value = arg[1:].partition("]")
                tags[key.strip()] = value.strip()
        return tags

    # --- the narration --------------------------------------------------------------------------------------
    def feed(self, lines: Iterable[str]) -> list[Sentence]:
        out: list[Sentence] = []
        for line in lines:
            try:
                sentence = self.line(line)
            except (IndexError, ValueError):  # a malformed line is skipped, never fatal
                sentence = None
            if sentence is not None:
                out.append(sentence)
        return out

    def line(self, line: str) -> Sentence | None:
        """One protocol line → one sentence (or None): parse it once, then look its message up in ``MESSAGES``."""
        if not isinstance(line, str) or not line.startswith("|"):
            return None
        parts = line.split("|")[1:]
        kind, args = parts[0], parts[1:]
        if kind in SKIPPED:
            return None
        handler = MESSAGES.get(kind)
        if handler is None:
            return None
        tags = self._tags(args)
        message = Message(kind=kind, args=args, plain=[a for a in args if not (a.startswith("[") and "]" in a)],
                          tags=tags, source=effect_name(tags["from"]) if tags.get("from") else None,
                          side=pokemon_name(args[0])[0] if args else None)
        return handler(self, message)


@dataclass(frozen=True)
class Message:
    """One parsed protocol line: its message kind, arguments (with and without ``[tag]``s) and the acting side."""

    kind: str
    args: list[str]
    plain: list[str]
    tags: dict[str, str]
    source: str | None
    side: str | None


Handler = Callable[[Narrator, Message], "Sentence | None"]


def _turn(n: Narrator, m: Message) -> Sentence:
    return Sentence("turn", f"Turn {m.args[0]}")


def _start(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", "The battle started.")


def _switch(n: Narrator, m: Message) -> Sentence:
    args, side = m.args, m.side
    name = pokemon_name(args[0])[1]
    details = args[1].split(",") if len(args) > 1 else [name]
    species = details[0].strip()
    level = next((d.strip() for d in details[1:] if d.strip().startswith("L")), "")
    pct, _ = _hp_percent(args[2]) if len(args) > 2 else (None, None)
    n.hp[n._key(args[0])] = pct if pct is not None else n.hp.get(n._key(args[0]), 100.0)
    if side is not None and m.kind != "replace":
        n.active[side] = name
    shown = name if species == name else f"{name} ({species})"
    extra = ", ".join(x for x in (level, _level(pct) + " HP" if pct is not None else "") if x)
    owner = n.names.get(side or "", side or "")
    if m.kind == "drag":
        return Sentence("switch", f"{possessive(owner)} {shown} was dragged out ({extra}).", side)
    if m.kind == "replace":
        return Sentence("switch", f"The Illusion ended: it was {possessive(owner)} {shown}.", side)
    return Sentence("switch", f"{owner} sent out {shown}" + (f" ({extra})." if extra else "."), side)


def _move(n: Narrator, m: Message) -> Sentence:
    args = m.args
    user = n.who(args[0])
    move = args[1] if len(args) > 1 else "a move"
    target = m.plain[2] if len(m.plain) > 2 and m.plain[2] else None
    text = f"{user} used {move}"
    if target and pokemon_name(target) != pokemon_name(args[0]) and pokemon_name(target)[0] is not None:
        text += f" on {n.who(target)}"
    if "miss" in m.tags:
        text += ", but it missed"
    if m.source and m.source.lower() not in ("lockedmove",):
        text += f" (via {m.source})"
    return Sentence("move", text + ".", m.side)


def _hp_change(n: Narrator, m: Message) -> Sentence | None:
    args, side = m.args, m.side
    who = n.who(args[0])
    pct, _status = _hp_percent(args[1]) if len(args) > 1 else (None, None)
    before = n._set_hp(args[0], pct)
    via = f" from {m.source}" if m.source else ""
    if pct is None:
        return None
    if m.kind == "-sethp":
        return Sentence("heal", f"{who}'s HP is now {_level(pct)}{via}.", side)
    if before is None:
        verb = "is down to" if m.kind == "-damage" else "is up to"
        return Sentence("damage" if m.kind == "-damage" else "heal", f"{who} {verb} {_level(pct)} HP{via}.", side)
    change = abs(before - pct)
    if m.kind == "-damage":
        return Sentence("damage", f"{who} lost {_fmt(change)} of its HP{via} ({_level(pct)} left).", side)
    return Sentence("heal", f"{who} restored {_fmt(change)} HP{via} (now {_level(pct)}).", side)


def _faint(n: Narrator, m: Message) -> Sentence:
    n._set_hp(m.args[0], 0.0)
    return Sentence("faint", f"{n.who(m.args[0])} fainted!", m.side)


def _status(n: Narrator, m: Message) -> Sentence:
    words = STATUS_WORDS.get(m.args[1], (f"got the {m.args[1]} status", m.args[1]))[0]
    return Sentence("status", f"{n.who(m.args[0])} {words}" + (f" by {m.source}" if m.source else "") + ".", m.side)


def _cure_status(n: Narrator, m: Message) -> Sentence:
    if m.args[1] == "slp":
        return Sentence("status", f"{n.who(m.args[0])} woke up.", m.side)
    if m.args[1] == "frz":
        return Sentence("status", f"{n.who(m.args[0])} thawed out.", m.side)
    noun = STATUS_WORDS.get(m.args[1], ("", m.args[1]))[1]
    return Sentence("status", f"{n.who(m.args[0])} was cured of its {noun}.", m.side)


def _cure_team(n: Narrator, m: Message) -> Sentence:
    return Sentence("status", f"{n.who(m.args[0])}'s team was cured of status problems.", m.side)


def _boost(n: Narrator, m: Message) -> Sentence:
    args = m.args
    stat = STAT_NAMES.get(args[1], args[1])
    amount = (ascii_int(args[2], 3, signed=True) if len(args) > 2 else None)
    amount = 1 if amount is None else amount
    rising = m.kind == "-boost"
    if amount == 0:
        return Sentence("boost", f"{n.who(args[0])}'s {stat} won't go any {'higher' if rising else 'lower'}.", m.side)
    how = {1: "", 2: " sharply", 3: " drastically"}.get(amount, " drastically")
    verb, sign = ("rose", "+") if rising else ("fell", "-")
    return Sentence("boost", f"{n.who(args[0])}'s {stat}{how} {verb} ({sign}{amount}).", m.side)


def _set_boost(n: Narrator, m: Message) -> Sentence:
    stat = STAT_NAMES.get(m.args[1], m.args[1])
    return Sentence("boost", f"{n.who(m.args[0])}'s {stat} was set to {m.args[2]}.", m.side)


def _clear_boost(n: Narrator, m: Message) -> Sentence:
    target = n.who(m.args[0]) + "'s" if m.args and m.kind != "-clearallboost" else "All"
    return Sentence("boost", f"{target} stat changes were removed.", m.side)


def _alter_boost(n: Narrator, m: Message) -> Sentence:
    return Sentence("boost", f"{n.who(m.args[0])}'s stat changes were altered.", m.side)


def _fixed(kind: str, text: str) -> Handler:
    """A message that always reads the same."""
    return lambda n, m: Sentence(kind, text)


def _immune(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", f"It doesn't affect {n.who(m.args[0])}" + (f" ({m.source})" if m.source else "") + ".")


def _crit(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", f"A critical hit on {n.who(m.args[0])}!")


def _miss(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", f"{n.who(m.args[0])}'s attack missed.", m.side)


def _hit_count(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", f"Hit {m.args[1]} time{'s' if m.args[1] != '1' else ''}!")


def _cant(n: Narrator, m: Message) -> Sentence:
    reason = m.args[1] if len(m.args) > 1 else ""
    words = CANT_WORDS.get(reason) or CANT_WORDS.get(effect_name(reason)) or f"can't move ({effect_name(reason)})"
    return Sentence("status", f"{n.who(m.args[0])} {words}.", m.side)


def _weather(n: Narrator, m: Message) -> Sentence | None:
    weather = m.args[0]
    if weather == "none":
        return Sentence("field", "The weather cleared.")
    if "upkeep" in m.tags:
        return None
    name = WEATHER_NAMES.get(weather, f"The weather became {weather}")
    return Sentence("field", name + (f" ({m.source})" if m.source else "") + ".")


def _side_condition(n: Narrator, m: Message) -> Sentence:
    what = effect_name(m.args[1]) if len(m.args) > 1 else "an effect"
    where = n.side_name(m.args[0])
    if m.kind == "-sidestart":
        return Sentence("field", f"{what} was set up on {where}.")
    return Sentence("field", f"{what} ended on {where}.")


def _field_condition(n: Narrator, m: Message) -> Sentence:
    return Sentence("field", f"{effect_name(m.args[0])} {'started' if m.kind == '-fieldstart' else 'ended'}.")


def _volatile(n: Narrator, m: Message) -> Sentence:
    args, side = m.args, m.side
    what = effect_name(args[1]) if len(args) > 1 else "an effect"
    who = n.who(args[0])
    if m.kind == "-start":
        if what.lower() == "confusion":
            return Sentence("status", f"{who} became confused.", side)
        if what == "Substitute":
            return Sentence("status", f"{who} put up a substitute.", side)
        if what == "typechange" and len(args) > 2:
            return Sentence("status", f"{who} became {args[2]} type.", side)
        return Sentence("status", f"{who} is affected by {what}.", side)
    if what == "Substitute":
        return Sentence("status", f"{who}'s substitute faded.", side)
    return Sentence("status", f"{who} is no longer affected by {what}.", side)


def _item(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", f"{n.who(m.args[0])} has {effect_name(m.args[1])}"
                            + (f" (revealed by {m.source})" if m.source else "") + ".", m.side)


def _end_item(n: Narrator, m: Message) -> Sentence:
    item = effect_name(m.args[1])
    if "eat" in m.tags:
        return Sentence("info", f"{n.who(m.args[0])} ate its {item}.", m.side)
    return Sentence("info", f"{n.who(m.args[0])}'s {item} was used up or removed.", m.side)


def _ability(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", f"{n.who(m.args[0])}'s ability: {effect_name(m.args[1])}.", m.side)


def _end_ability(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", f"{n.who(m.args[0])}'s ability was suppressed.", m.side)


def _activate(n: Narrator, m: Message) -> Sentence:
    what = effect_name(m.args[1]) if len(m.args) > 1 else "an effect"
    if pokemon_name(m.args[0])[0]:
        return Sentence("info", f"{what} activated for {n.who(m.args[0])}.", m.side)
    return Sentence("info", f"{what} activated.", m.side)


PROTECTS = ("Protect", "Detect", "King's Shield", "Spiky Shield", "Baneful Bunker", "Endure")


def _single_turn(n: Narrator, m: Message) -> Sentence:
    what = effect_name(m.args[1])
    if what in PROTECTS:
        return Sentence("status", f"{n.who(m.args[0])} protected itself.", m.side)
    return Sentence("status", f"{n.who(m.args[0])}: {what}.", m.side)


def _single_move(n: Narrator, m: Message) -> Sentence:
    return Sentence("status", f"{n.who(m.args[0])} used {effect_name(m.args[1])}.", m.side)


def _prepare(n: Narrator, m: Message) -> Sentence:
    return Sentence("move", f"{n.who(m.args[0])} is preparing {m.args[1]}.", m.side)


def _terastallize(n: Narrator, m: Message) -> Sentence:
    return Sentence("status", f"{n.who(m.args[0])} terastallized into the {m.args[1]} type!", m.side)


def _power(n: Narrator, m: Message) -> Sentence:
    return Sentence("status", f"{n.who(m.args[0])} transformed with {m.kind[1:]} power!", m.side)


def _transform(n: Narrator, m: Message) -> Sentence:
    return Sentence("status", f"{n.who(m.args[0])} transformed into {n.who(m.args[1])}.", m.side)


def _forme(n: Narrator, m: Message) -> Sentence:
    return Sentence("status", f"{n.who(m.args[0])} changed form to {m.args[1].split(',')[0]}.", m.side)


def _recharge(n: Narrator, m: Message) -> Sentence:
    return Sentence("status", f"{n.who(m.args[0])} must recharge.", m.side)


def _text(n: Narrator, m: Message) -> Sentence:
    return Sentence("info", m.args[0] if m.args else "")


def _player(n: Narrator, m: Message) -> None:
    """``|player|p1|NAME|…``: remembered so ``|win|NAME`` is told with the side's shown name (a take-over's
    simulator still knows the parent's names; the page calls the person "You")."""
    if len(m.args) > 1 and m.args[1]:
        n.players[m.args[1]] = m.args[0]
    return None


def _win(n: Narrator, m: Message) -> Sentence:
    side = n.players.get(m.args[0])
    shown = n.names.get(side, m.args[0]) if side else m.args[0]
    return Sentence("win", f"{shown} won the battle!", side)


def _swap(n: Narrator, m: Message) -> Sentence:
    return Sentence("switch", f"{n.who(m.args[0])} moved position.", m.side)


MESSAGES: dict[str, Handler] = {
    "turn": _turn, "start": _start,
    "switch": _switch, "drag": _switch, "replace": _switch, "swap": _swap,
    "move": _move, "-prepare": _prepare,
    "-damage": _hp_change, "-heal": _hp_change, "-sethp": _hp_change, "faint": _faint,
    "-status": _status, "-curestatus": _cure_status, "-cureteam": _cure_team,
    "-boost": _boost, "-unboost": _boost, "-setboost": _set_boost,
    "-clearboost": _clear_boost, "-clearallboost": _clear_boost, "-clearnegativeboost": _clear_boost,
    "-clearpositiveboost": _clear_boost, "-swapboost": _alter_boost, "-copyboost": _alter_boost,
    "-invertboost": _alter_boost,
    "-supereffective": _fixed("info", "It's super effective!"), "-resisted": _fixed("info", "It's not very effective…"),
    "-fail": _fixed("info", "But it failed!"), "-notarget": _fixed("info", "But there was no target."),
    "-ohko": _fixed("info", "It's a one-hit KO!"), "tie": _fixed("win", "The battle ended in a tie."),
    "-immune": _immune, "-crit": _crit, "-miss": _miss, "-hitcount": _hit_count, "cant": _cant,
    "-weather": _weather, "-sidestart": _side_condition, "-sideend": _side_condition,
    "-fieldstart": _field_condition, "-fieldend": _field_condition, "-start": _volatile, "-end": _volatile,
    "-item": _item, "-enditem": _end_item, "-ability": _ability, "-endability": _end_ability,
    "-activate": _activate, "-singleturn": _single_turn, "-singlemove": _single_move,
    "-terastallize": _terastallize, "-mega": _power, "-primal": _power, "-burst": _power, "-zpower": _power,
    "-transform": _transform, "detailschange": _forme, "-formechange": _forme, "-mustrecharge": _recharge,
    "-message": _text, "message": _text, "win": _win, "player": _player,
}
"""Protocol message kind → its narration; kinds not here (and ``SKIPPED``) say nothing."""


def narrate(lines: Iterable[str], names: dict[str, str] | None = None) -> list[Sentence]:
    """Narrate a batch of lines with a fresh narrator (HP amounts are known only within the batch)."""
    return Narrator(names=dict(names or {})).feed(lines)
