"""Pure helpers over Showdown protocol text (see PROTOCOL.md): splitting chunks into per-viewer lines, seeds."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from wolfeclick.errors import WolfeClickError

SIDES = ("p1", "p2")


@dataclass
class Chunk:
    """One simulator message, classified. ``kind`` is ``update``, ``request``, ``error`` or ``end``."""

    kind: str
    side: str | None = None
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
        side, _, line = body.partition("\n")
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


def start_lines(format_id: str, seed: int, names: dict[str, str], teams: dict[str, str] | None = None) -> list[str]:
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
# ``bridge.js`` applies the same rules on its side. Kept in step with ``checkLine`` there and with PROTOCOL.md.

MAX_INPUT_LINE = 4096
"""A ``>player`` line with a long name is about 100 characters; nothing a battle needs comes near this."""
_SIDE_CHOICE = re.compile(r">(p1|p2) [^ \x00-\x1f\x7f\u2028\u2029\x85][^\x00-\x1f\x7f\u2028\u2029\x85]{0,299}")
_ENDING = re.compile(r">(forcewin|forcelose) (p1|p2)|>forcetie")
_JSON_COMMAND = re.compile(r">(start|player p1|player p2) (\{.*\})")
_BREAKS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")
_OPTION_KEYS = {"start": frozenset({"formatid", "seed", "rated"}), "player": frozenset({"name", "seed", "team"})}
ALLOWED_INPUT = ">start {json}, >player p1|p2 {json}, >p1/>p2 choices, >forcewin/>forcelose p1|p2, >forcetie"


class UnsafeInput(WolfeClickError, ValueError):
    """A line for the simulator that is not one of the few a battle needs (``>eval``, an embedded newline…)."""


def _cut(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _plain_value(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(item, int) and not isinstance(item, bool) for item in value)
    return isinstance(value, (str, int, bool))


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
    if _ENDING.fullmatch(line):
        return
    if is_reseed_line(line):  # the analysis' fresh luck, in one exact form
        return
    match = _JSON_COMMAND.fullmatch(line)
    if match is None:
        raise UnsafeInput(f"command not allowed: {_cut(line)}")
    try:
        options = json.loads(match.group(2), parse_constant=_refuse_constant)
    except ValueError:
        raise UnsafeInput(f"options are not JSON: {_cut(line)}") from None
    allowed = _OPTION_KEYS[match.group(1).split(" ")[0]]
    if not isinstance(options, dict) or not set(options) <= allowed or not all(map(_plain_value, options.values())):
        raise UnsafeInput(f"options not allowed (only {', '.join(sorted(allowed))}): {_cut(line)}")


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
