"""One side's view of a battle: a poke-env ``Battle`` fed only from that side's protocol lines."""

from __future__ import annotations

import json
import logging
from typing import Any

from poke_env.battle import Battle

from wolfeclick.errors import InputError

_IGNORED = {"t:", "expire", "uhtmlchange", "tempnotify", "tempnotifyoff", "win", "tie", "split", "request"}
_log = logging.getLogger("wolfeclick.tracker")
_quiet = logging.getLogger("wolfeclick.poke_env")
_quiet.setLevel(logging.CRITICAL)


def generation(format_id: str) -> int:
    """``gen4randombattle`` → 4 (poke-env needs the generation for its data)."""
    digits = ""
    for char in format_id[3:]:
        if not char.isdigit():
            break
        digits += char
    if not format_id.startswith("gen") or not digits:
        raise InputError(f"format {format_id!r} does not name a generation (expected e.g. gen9randombattle)")
    return int(digits)


class SideTracker:
    """Feeds protocol lines and requests into a poke-env ``Battle`` for one side."""

    def __init__(self, battle_key: str, side: str, name: str, format_id: str) -> None:
        self.side = side
        self.name = name
        self.battle = Battle(f"battle-{format_id}-{battle_key}", name, _quiet, gen=generation(format_id))
        self.request: dict[str, Any] | None = None
        self.warnings: list[str] = []

    def feed(self, lines: list[str]) -> None:
        for line in lines:
            if not line.startswith("|"):
                continue
            parts = line.split("|")
            if len(parts) < 2 or parts[1] in _IGNORED:
                continue
            try:
                self.battle.parse_message(parts)
            except Exception as exc:  # a tracker gap must not end a real battle; note it instead
                message = f"{self.side}: poke-env could not parse {line[:80]!r}: {exc.__class__.__name__}: {exc}"
                if len(self.warnings) < 20:
                    self.warnings.append(message)
                _log.debug(message)

    def feed_request(self, request: dict[str, Any]) -> None:
        self.request = request
        self.battle.parse_request(request)

    def feed_request_text(self, payload: str) -> None:
        self.feed_request(json.loads(payload))
