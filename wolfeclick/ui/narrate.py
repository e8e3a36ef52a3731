"""Showdown spectator protocol → plain sentences ("heuristic's Frosmoth used Ice Beam on random's Porygon-Z.").

Pure text in, text out: the sentences are *not* HTML-escaped here (the view escapes everything it shows). A
``Narrator`` keeps the little state a reader needs to say "lost 39% of its HP": the last known HP of every Pokémon
it has seen. Lines it has nothing useful to say about (``|upkeep``, ``|rule|…``, timestamps, unknown minor
messages) are skipped rather than shown raw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

__all__ = ["Sentence", "Narrator", "narrate", "pokemon_name", "effect_name"]

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
    "", "upkeep", "t:", "gametype", "gen", "tier", "rule", "teamsize", "player", "teampreview", "clearpoke",
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


def _fmt(pct: float) -> str:
    return f"{pct:.0f}%"


@dataclass
class Narrator:
    """Narrates protocol lines in order, remembering HP so damage can be told as an amount.

    ``names`` maps ``p1``/``p2`` to the players' display names. ``hp_delta`` accumulates each side's HP change in
    percentage points (for an end-of-battle estimate of team HP) and can be reset by the caller.
    """

    names: dict[str, str] = field(default_factory=dict)
    hp: dict[str, float] = field(default_factory=dict)
    hp_delta: dict[str, float] = field(default_factory=lambda: {"p1": 0.0, "p2": 0.0})

    # --- helpers -------------------------------------------------------------------------------------------
    def who(self, ident: str) -> str:
        side, name = pokemon_name(ident)
        if side is None:
            return name or "a Pokémon"
        owner = self.names.get(side, side)
        return f"{owner}'s {name}"

    def side_name(self, raw: str) -> str:
        """``"p2: random"`` → ``"random's side"``."""
        side = raw.split(":", 1)[0].strip()
        return f"{self.names.get(side, side)}'s side" if side in ("p1", "p2", "p3", "p4") else raw

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
        if not isinstance(line, str) or not line.startswith("|"):
            return None
        parts = line.split("|")[1:]
        kind, args = parts[0], parts[1:]
        if kind in SKIPPED:
            return None
        plain = [a for a in args if not (a.startswith("[") and "]" in a)]
        tags = self._tags(args)
        source = effect_name(tags["from"]) if tags.get("from") else None
        side = pokemon_name(args[0])[0] if args else None

        if kind == "turn":
            return Sentence("turn", f"Turn {args[0]}")
        if kind == "start":
            return Sentence("info", "The battle started.")
        if kind in ("switch", "drag", "replace"):
            name = pokemon_name(args[0])[1]
            details = args[1].split(",") if len(args) > 1 else [name]
            species = details[0].strip()
            level = next((d.strip() for d in details[1:] if d.strip().startswith("L")), "")
            pct, _ = _hp_percent(args[2]) if len(args) > 2 else (None, None)
            self.hp[self._key(args[0])] = pct if pct is not None else self.hp.get(self._key(args[0]), 100.0)
            shown = name if species == name else f"{name} ({species})"
            extra = ", ".join(x for x in (level, _fmt(pct) + " HP" if pct is not None else "") if x)
            owner = self.names.get(side or "", side or "")
            if kind == "drag":
                return Sentence("switch", f"{owner}'s {shown} was dragged out ({extra}).", side)
            if kind == "replace":
                return Sentence("switch", f"The Illusion ended: it was {owner}'s {shown}.", side)
            return Sentence("switch", f"{owner} sent out {shown}" + (f" ({extra})." if extra else "."), side)
        if kind == "move":
            user = self.who(args[0])
            move = args[1] if len(args) > 1 else "a move"
            target = plain[2] if len(plain) > 2 and plain[2] else None
            text = f"{user} used {move}"
            if target and pokemon_name(target) != pokemon_name(args[0]) and pokemon_name(target)[0] is not None:
                text += f" on {self.who(target)}"
            if "miss" in tags:
                text += ", but it missed"
            if source and source.lower() not in ("lockedmove",):
                text += f" (via {source})"
            return Sentence("move", text + ".", side)
        if kind in ("-damage", "-heal", "-sethp"):
            who = self.who(args[0])
            pct, status = _hp_percent(args[1]) if len(args) > 1 else (None, None)
            before = self._set_hp(args[0], pct)
            via = f" from {source}" if source else ""
            if pct is None:
                return None
            if kind == "-sethp":
                return Sentence("heal", f"{who}'s HP is now {_fmt(pct)}{via}.", side)
            if before is None:
                verb = "is down to" if kind == "-damage" else "is up to"
                return Sentence("damage" if kind == "-damage" else "heal", f"{who} {verb} {_fmt(pct)} HP{via}.", side)
            change = abs(before - pct)
            if kind == "-damage":
                return Sentence("damage", f"{who} lost {_fmt(change)} of its HP{via} ({_fmt(pct)} left).", side)
            return Sentence("heal", f"{who} restored {_fmt(change)} HP{via} (now {_fmt(pct)}).", side)
        if kind == "faint":
            self._set_hp(args[0], 0.0)
            return Sentence("faint", f"{self.who(args[0])} fainted!", side)
        if kind == "-status":
            words = STATUS_WORDS.get(args[1], (f"got the {args[1]} status", args[1]))[0]
            return Sentence("status", f"{self.who(args[0])} {words}" + (f" by {source}" if source else "") + ".", side)
        if kind == "-curestatus":
            if args[1] == "slp":
                return Sentence("status", f"{self.who(args[0])} woke up.", side)
            if args[1] == "frz":
                return Sentence("status", f"{self.who(args[0])} thawed out.", side)
            noun = STATUS_WORDS.get(args[1], ("", args[1]))[1]
            return Sentence("status", f"{self.who(args[0])} was cured of its {noun}.", side)
        if kind == "-cureteam":
            return Sentence("status", f"{self.who(args[0])}'s team was cured of status problems.", side)
        if kind in ("-boost", "-unboost"):
            stat = STAT_NAMES.get(args[1], args[1])
            amount = int(args[2]) if len(args) > 2 and args[2].lstrip("-").isdigit() else 1
            if amount == 0:
                return Sentence("boost", f"{self.who(args[0])}'s {stat} won't go any "
                                         f"{'higher' if kind == '-boost' else 'lower'}.", side)
            how = {1: "", 2: " sharply", 3: " drastically"}.get(amount, " drastically")
            verb = "rose" if kind == "-boost" else "fell"
            sign = "+" if kind == "-boost" else "-"
            return Sentence("boost", f"{self.who(args[0])}'s {stat}{how} {verb} ({sign}{amount}).", side)
        if kind == "-setboost":
            stat = STAT_NAMES.get(args[1], args[1])
            return Sentence("boost", f"{self.who(args[0])}'s {stat} was set to {args[2]}.", side)
        if kind in ("-clearboost", "-clearallboost", "-clearnegativeboost", "-clearpositiveboost"):
            target = self.who(args[0]) + "'s" if args and kind != "-clearallboost" else "All"
            return Sentence("boost", f"{target} stat changes were removed.", side)
        if kind in ("-swapboost", "-copyboost", "-invertboost"):
            return Sentence("boost", f"{self.who(args[0])}'s stat changes were altered.", side)
        if kind == "-supereffective":
            return Sentence("info", "It's super effective!")
        if kind == "-resisted":
            return Sentence("info", "It's not very effective…")
        if kind == "-immune":
            return Sentence("info", f"It doesn't affect {self.who(args[0])}" + (f" ({source})" if source else "") + ".")
        if kind == "-crit":
            return Sentence("info", f"A critical hit on {self.who(args[0])}!")
        if kind == "-miss":
            return Sentence("info", f"{self.who(args[0])}'s attack missed.", side)
        if kind == "-fail":
            return Sentence("info", "But it failed!")
        if kind == "-notarget":
            return Sentence("info", "But there was no target.")
        if kind == "-ohko":
            return Sentence("info", "It's a one-hit KO!")
        if kind == "-hitcount":
            return Sentence("info", f"Hit {args[1]} time{'s' if args[1] != '1' else ''}!")
        if kind == "cant":
            reason = args[1] if len(args) > 1 else ""
            words = CANT_WORDS.get(reason) or CANT_WORDS.get(effect_name(reason)) or f"can't move ({effect_name(reason)})"
            return Sentence("status", f"{self.who(args[0])} {words}.", side)
        if kind == "-weather":
            weather = args[0]
            if weather == "none":
                return Sentence("field", "The weather cleared.")
            if "upkeep" in tags:
                return None
            name = WEATHER_NAMES.get(weather, f"The weather became {weather}")
            return Sentence("field", name + (f" ({source})" if source else "") + ".")
        if kind in ("-sidestart", "-sideend"):
            what = effect_name(args[1]) if len(args) > 1 else "an effect"
            if kind == "-sidestart":
                return Sentence("field", f"{what} was set up on {self.side_name(args[0])}.")
            return Sentence("field", f"{what} ended on {self.side_name(args[0])}.")
        if kind in ("-fieldstart", "-fieldend"):
            what = effect_name(args[0])
            return Sentence("field", f"{what} {'started' if kind == '-fieldstart' else 'ended'}.")
        if kind in ("-start", "-end"):
            what = effect_name(args[1]) if len(args) > 1 else "an effect"
            who = self.who(args[0])
            if kind == "-start":
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
        if kind == "-item":
            return Sentence("info", f"{self.who(args[0])} has {effect_name(args[1])}"
                                    + (f" (revealed by {source})" if source else "") + ".", side)
        if kind == "-enditem":
            item = effect_name(args[1])
            if "eat" in tags:
                return Sentence("info", f"{self.who(args[0])} ate its {item}.", side)
            return Sentence("info", f"{self.who(args[0])}'s {item} was used up or removed.", side)
        if kind == "-ability":
            return Sentence("info", f"{self.who(args[0])}'s ability: {effect_name(args[1])}.", side)
        if kind == "-endability":
            return Sentence("info", f"{self.who(args[0])}'s ability was suppressed.", side)
        if kind == "-activate":
            what = effect_name(args[1]) if len(args) > 1 else "an effect"
            return Sentence("info", f"{what} activated for {self.who(args[0])}." if pokemon_name(args[0])[0]
                            else f"{what} activated.", side)
        if kind == "-singleturn":
            what = effect_name(args[1])
            if what in ("Protect", "Detect", "King's Shield", "Spiky Shield", "Baneful Bunker", "Endure"):
                return Sentence("status", f"{self.who(args[0])} protected itself.", side)
            return Sentence("status", f"{self.who(args[0])}: {what}.", side)
        if kind == "-singlemove":
            return Sentence("status", f"{self.who(args[0])} used {effect_name(args[1])}.", side)
        if kind == "-prepare":
            return Sentence("move", f"{self.who(args[0])} is preparing {args[1]}.", side)
        if kind == "-terastallize":
            return Sentence("status", f"{self.who(args[0])} terastallized into the {args[1]} type!", side)
        if kind in ("-mega", "-primal", "-burst", "-zpower"):
            return Sentence("status", f"{self.who(args[0])} transformed with {kind[1:]} power!", side)
        if kind == "-transform":
            return Sentence("status", f"{self.who(args[0])} transformed into {self.who(args[1])}.", side)
        if kind in ("detailschange", "-formechange"):
            return Sentence("status", f"{self.who(args[0])} changed form to {args[1].split(',')[0]}.", side)
        if kind == "-mustrecharge":
            return Sentence("status", f"{self.who(args[0])} must recharge.", side)
        if kind == "-message":
            return Sentence("info", args[0] if args else "")
        if kind == "message":
            return Sentence("info", args[0] if args else "")
        if kind == "win":
            return Sentence("win", f"{args[0]} won the battle!")
        if kind == "tie":
            return Sentence("win", "The battle ended in a tie.")
        if kind == "swap":
            return Sentence("switch", f"{self.who(args[0])} moved position.", side)
        return None


def narrate(lines: Iterable[str], names: dict[str, str] | None = None) -> list[Sentence]:
    """Narrate a batch of lines with a fresh narrator (HP amounts are known only within the batch)."""
    return Narrator(names=dict(names or {})).feed(lines)
