"""Pure helpers over Showdown protocol text (see PROTOCOL.md): splitting chunks into per-viewer lines, seeds."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import orjson

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


def start_lines(format_id: str, seed: int, names: dict[str, str]) -> list[str]:
    """The input lines that begin a seeded battle: the battle seed and both player seeds derive from ``seed``."""
    lines = [">start " + json.dumps({"formatid": format_id, "seed": derive_seed(seed, "battle")})]
    for side in SIDES:
        lines.append(f">player {side} " + json.dumps({"name": names[side], "seed": derive_seed(seed, side)}))
    return lines
