"""Pure helpers over Showdown protocol text (see PROTOCOL.md): splitting chunks into per-viewer lines, seeds."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import orjson

from wolfeclick.errors import WolfeClickError
from wolfeclick.sides import SIDES, Side, is_side


@dataclass
class Chunk:
    """One simulator message, classified. ``kind`` is ``update``, ``request``, ``error`` or ``end``."""

    kind: str
    side: Side | None = None
    lines: list[str] = field(default_factory=list)
    request: dict[str, Any] | None = None
    text: str = ""


def split_update(lines: list[str]) -> dict[str, list[str]]:
    """Per-viewer lines of an ``update`` chunk: ``p1``, ``p2`` (each sees its own exact HP) and ``spectator``.

    A ``|split|pN`` line is followed by the secret line (for side N) and the public line (for everyone else).
    Without any, all three views are the very same list (most chunks): treat the views as read-only.
    """
    for line in lines:
        if line.startswith("|split|"):
            break
    else:
        return {"p1": lines, "p2": lines, "spectator": lines}
    views: dict[str, list[str]] = {"p1": [], "p2": [], "spectator": []}
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("|split|") and index + 2 < len(lines):
            owner = line.split("|")[2]
            secret, public = lines[index + 1], lines[index + 2]
            for viewer in views:
                views[viewer].append(secret if viewer == owner else public)
            index += 3
            continue
        for viewer in views:
            views[viewer].append(line)
        index += 1
    return views


def parse_chunk(raw: str) -> Chunk:
    """Classify one ``BattleStream`` output chunk."""
    head, _, body = raw.partition("\n")
    if head == "update":
        return Chunk("update", lines=body.split("\n"))
    if head == "sideupdate":
        named, _, line = body.partition("\n")
        side = named if is_side(named) else None
        if line.startswith("|request|"):
            payload = line[len("|request|"):]
            return Chunk("request", side=side, request=orjson.loads(payload) if payload else None, text=line)
        if line.startswith("|error|"):
            return Chunk("error", side=side, text=line[len("|error|"):])
        return Chunk("private", side=side, lines=[line], text=line)
    if head == "end":
        return Chunk("end", text=body)
    return Chunk("unknown", text=raw)


def is_random_format(format_id: str) -> bool:
    """True for the random-battle formats (teams generated from the player seeds); the others play given teams.

    A label for readers (the simulator's own ``format`` op is the authority on what can be played)."""
    return "random" in format_id


def is_timestamp(line: str) -> bool:
    """``|t:|`` lines carry wall-clock time: kept out of recordings so equal battles give equal bytes."""
    return line.startswith("|t:|")


def derive_seed(seed: int, label: str) -> list[int]:
    """Four 16-bit words for Showdown's PRNG, derived from one integer seed and a label (``battle``, ``p1``…)."""
    digest = hashlib.sha256(f"wolfeclick:{seed}:{label}".encode()).digest()
    return [int.from_bytes(digest[i:i + 2], "big") for i in range(0, 8, 2)]


def derive_int(seed: int, label: str) -> int:
    """A 64-bit integer derived from a seed and a label (for per-side policy generators, schedules…)."""
    return int.from_bytes(hashlib.sha256(f"wolfeclick:{seed}:{label}".encode()).digest()[:8], "big")


def start_lines(format_id: str, seed: int, names: dict[Side, str], teams: dict[Side, str] | None = None) -> list[str]:
    """The input lines that begin a seeded battle: the battle seed and both player seeds derive from ``seed``.

    ``teams`` (packed, per side) is for formats that play given teams; random-battle lines stay exactly as they were.
    """
    lines = [">start " + json.dumps({"formatid": format_id, "seed": derive_seed(seed, "battle")})]
    for side in SIDES:
        options: dict[str, Any] = {"name": names[side], "seed": derive_seed(seed, side)}
        if teams:
            options["team"] = teams[side]
        lines.append(f">player {side} " + json.dumps(options))
    return lines


# --- the simulator's door ------------------------------------------------------------------------------------------
# Showdown's BattleStream obeys more than battles need: ``>eval`` runs JavaScript, ``>requestexport`` leaks seeds,
# ``>chat`` writes into the log. Every line that reaches a simulator (start, write, resim) must be one of these;
# ``bridge_host.js`` applies the same rules on its side. Kept in step with ``checkLine`` there and with PROTOCOL.md.
# Lengths are counted in code points on both sides (JavaScript's ``[...text].length``), so one text is judged the
# same by ``validate`` and by the simulator. To admit another command, add its rule to ``_ADMISSIONS`` (a line
# pattern) or ``_OPTION_RULES`` (a ``>command {json}`` with a rule per field), and the same in bridge_host.js.

MAX_INPUT_LINE = 4096
"""A ``>player`` line with a long name is about 100 characters; nothing a battle needs comes near this."""
MAX_CHOICE = 300
MAX_NAME = 100
"""Code points in a player's name on a ``>player`` line (the recording's own limit is 200; names are cut to this)."""
MAX_RATED = 100
_BREAK_CHARS = "\x00-\x1f\x7f\x85\u2028\u2029\ud800-\udfff"
"""Control characters, Unicode line separators and lone surrogates: never inside a line or a decoded field."""
_BREAKS = re.compile(f"[{_BREAK_CHARS}]")
_SIDE_CHOICE = re.compile(f">(p1|p2) [^ {_BREAK_CHARS}][^{_BREAK_CHARS}]{{0,{MAX_CHOICE - 1}}}")
_ENDING = re.compile(r">(forcewin|forcelose) (p1|p2)|>forcetie")
_ADMISSIONS = (_SIDE_CHOICE, _ENDING)
"""Lines admitted as they are (no JSON inside): a side's choice and the runner's endings."""
_JSON_COMMAND = re.compile(r">(start|player p1|player p2) (\{.*\})")
_NAME = re.compile(f"[^ |{_BREAK_CHARS}][^|{_BREAK_CHARS}]{{0,{MAX_NAME - 1}}}")
_RATED = re.compile(f"[^|{_BREAK_CHARS}]{{0,{MAX_RATED}}}")
_TEAM = re.compile(f"[^{_BREAK_CHARS}]{{0,{MAX_INPUT_LINE}}}")
"""Packed text; empty in a random format's input log as a server writes it (``"team":""``: the simulator generates
one), which a given-team format then refuses as having no team."""
_FORMAT_ID = re.compile(r"[a-z0-9]{1,60}")
_SEED_TEXT = re.compile(r"[0-9]{1,5}(,[0-9]{1,5}){3}|sodium,[0-9a-f]{1,64}|gen5,[0-9a-f]{16}")
ALLOWED_INPUT = ">start {json}, >player p1|p2 {json}, >p1/>p2 choices, >forcewin/>forcelose p1|p2, >forcetie"


class UnsafeInput(WolfeClickError, ValueError):
    """A line for the simulator that is not one of the few a battle needs (``>eval``, an embedded newline…)."""


def _cut(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _whole(value: Any, low: int, high: int) -> bool:
    """A JSON integer in range; an integral float (``1.0``) too, since JavaScript cannot tell them apart."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return (not isinstance(value, float) or value.is_integer()) and low <= value <= high


def _text_rule(pattern: re.Pattern[str], what: str) -> Any:
    def check(value: Any) -> str | None:
        if isinstance(value, str) and pattern.fullmatch(value):
            return None
        return what
    return check


def _seed(value: Any) -> str | None:
    if isinstance(value, list) and len(value) == 4 and all(_whole(v, 0, 0xFFFF) for v in value):
        return None
    if isinstance(value, str) and _SEED_TEXT.fullmatch(value):
        return None
    return "a seed is four integers 0-65535 (or Showdown's seed text)"


def _rated(value: Any) -> str | None:
    if isinstance(value, bool) or (isinstance(value, str) and _RATED.fullmatch(value)):
        return None
    return f"rated is true, false or a text of at most {MAX_RATED} characters without '|' or line breaks"


_OPTION_RULES: dict[str, dict[str, Any]] = {
    "start": {
        "formatid": _text_rule(_FORMAT_ID, "a format id is 1-60 lower-case letters and digits"),
        "seed": _seed,
        "rated": _rated,
    },
    "player": {
        "name": _text_rule(_NAME, f"a name is 1-{MAX_NAME} characters without '|' or line breaks, not starting "
                                  "with a space"),
        "seed": _seed,
        "team": _text_rule(_TEAM, "a team is packed text without line breaks (empty: generated)"),
    },
}
"""Each ``>command {json}``: the fields it may carry and the rule for each (None when the value is fine)."""


def check_input_line(line: Any) -> None:
    """Raise ``UnsafeInput`` unless ``line`` is one whitelisted simulator input line (see ``ALLOWED_INPUT``)."""
    if isinstance(line, str) and _SIDE_CHOICE.fullmatch(line):  # most lines: one match, no breaks by construction
        return
    if not isinstance(line, str):
        raise UnsafeInput(f"not a text line: {_cut(str(line))}")
    if len(line) > MAX_INPUT_LINE:
        raise UnsafeInput(f"line of {len(line)} characters is longer than {MAX_INPUT_LINE}")
    if _BREAKS.search(line):
        raise UnsafeInput(f"line break or control character inside {_cut(line)}")
    if any(admitted.fullmatch(line) for admitted in _ADMISSIONS):
        return
    if is_reseed_line(line):  # the analysis' fresh luck, in one exact form
        return
    match = _JSON_COMMAND.fullmatch(line)
    if match is None:
        raise UnsafeInput(f"command not allowed: {_cut(line)}")
    try:
        options = json.loads(match.group(2), parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise UnsafeInput(f"options are not JSON: {_cut(line)}") from None
    rules = _OPTION_RULES[match.group(1).split(" ")[0]]
    if not isinstance(options, dict) or not set(options) <= set(rules):
        raise UnsafeInput(f"options not allowed (only {', '.join(sorted(rules))}): {_cut(line)}")
    for key, value in options.items():
        wrong = rules[key](value)
        if wrong is not None:
            raise UnsafeInput(f"option {key} refused ({wrong}): {_cut(line)}")


# --- the analysis' reseed ------------------------------------------------------------------------------------------
# Fresh luck after a replayed prefix (``wolfeclick.analysis``): ``>reseed`` with four 16-bit words, the form
# ``reseed_line`` writes and Showdown's Gen 5 generator takes. No other spelling of ``>reseed`` passes.
_RESEED = re.compile(r">reseed (0|[1-9][0-9]{0,4}),(0|[1-9][0-9]{0,4}),(0|[1-9][0-9]{0,4}),(0|[1-9][0-9]{0,4})")


def is_reseed_line(line: str) -> bool:
    """True for ``>reseed a,b,c,d`` with each word a plain decimal in 0..65535 (no sign, no leading zeros)."""
    match = _RESEED.fullmatch(line)
    return match is not None and all(int(word) <= 0xFFFF for word in match.groups())


def reseed_line(seed: int, label: str) -> str:
    """The ``>reseed`` line for a seed derived from ``seed`` and ``label`` (the door admits exactly this form)."""
    return ">reseed " + ",".join(map(str, derive_seed(seed, label)))


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity: JavaScript's JSON.parse refuses them too


def check_input_lines(lines: Any) -> None:
    """Check every entry of an input log; the error names the first bad one (its index and text, cut short)."""
    if not isinstance(lines, list):
        raise UnsafeInput("input lines must be a list of strings")
    for index, line in enumerate(lines):
        try:
            check_input_line(line)
        except UnsafeInput as exc:
            raise UnsafeInput(f"input entry {index} refused: {exc} (allowed: {ALLOWED_INPUT})") from None


def forced_ending(lines: Sequence[str]) -> str | None:
    """The first ``>forcewin``/``>forcelose``/``>forcetie`` line of an input log, or None: a result the simulator
    was told rather than one the sides played out (a forfeit, or a forgery). Only played results are rated."""
    return next((line for line in lines if isinstance(line, str) and _ENDING.fullmatch(line)), None)


def check_ending_last(lines: Sequence[str]) -> None:
    """Raise ``UnsafeInput`` when a forced ending is not the input log's last line: the battle ends there, so a
    log that goes on after it was not written by a simulator (a forged ending inserted into a real battle)."""
    for index, line in enumerate(lines[:-1]):
        if isinstance(line, str) and _ENDING.fullmatch(line):
            raise UnsafeInput(f"input entry {index} refused: {line} ends the battle, so it can only be the last line")


def door_name(text: str, fallback: str) -> str:
    """``text`` as the door admits a name: line breaks, control characters and ``|`` dropped, leading spaces
    stripped, cut to ``MAX_NAME`` code points; ``fallback`` when nothing is left. Names the door already admits
    are returned unchanged (so recordings made here replay byte for byte)."""
    kept = _BREAKS.sub("", str(text)).replace("|", "").lstrip(" ")[:MAX_NAME]
    return kept if _NAME.fullmatch(kept) else fallback


def door_names(names: Mapping[Side, str]) -> dict[Side, str]:
    """Both sides' names made safe for ``>player`` lines (``door_name``) and distinct, as the runner needs them
    to tell the winner: equal names (ignoring case) become ``NAME (p1)`` and ``NAME (p2)``."""
    safe = {side: door_name(names.get(side, ""), side) for side in SIDES}
    if safe["p1"].lower() == safe["p2"].lower():
        safe = {side: door_name(f"{name[:MAX_NAME - 5]} ({side})", side) for side, name in safe.items()}
    return safe
