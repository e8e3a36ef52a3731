"""One side's view of a battle: a poke-env ``Battle`` fed only from that side's protocol lines."""

from __future__ import annotations

import logging
import re
from pathlib import PurePath
from typing import Any

from poke_env.battle import Battle

from wolfeclick.errors import InputError

_IGNORED = frozenset({"t:", "expire", "uhtmlchange", "tempnotify", "tempnotifyoff", "win", "tie", "split", "request"})
_KEPT_FOR_READERS = frozenset({"upkeep"})
"""Tags poke-env ignores that a reader of its event buffer still needs: the v1 prompt's history infers a wait
request from ``|upkeep`` (``wolfeclick.game.prompts``)."""
_SKIPPED = _IGNORED | (frozenset(Battle.MESSAGES_TO_IGNORE) - _KEPT_FOR_READERS)
"""Lines never handed to poke-env: our own skip list plus the tags poke-env itself ignores (the blank ``|`` lines
alone are a fifth of a battle's log; poke-env would only copy them into its replay buffer)."""
_log = logging.getLogger("wolfeclick.tracker")
_quiet = logging.getLogger("wolfeclick.poke_env")
_quiet.setLevel(logging.CRITICAL)


def _not_a_data_gap(record: logging.LogRecord) -> bool:
    """False for poke-env's own battle-data warnings (``Unexpected effect 'X' received…``), which its module-level
    ``poke-env`` logger prints on stderr whatever the battle's logger: a name its tables lack is a tracker gap, not
    the user's business (an import of a folder of real logs printed them by the dozen)."""
    parts = PurePath(record.pathname).parts
    return not ("poke_env" in parts and "battle" in parts)


logging.getLogger("poke-env").addFilter(_not_a_data_gap)


def generation(format_id: str) -> int:
    """``gen4randombattle`` → 4 (poke-env needs the generation for its data)."""
    match = re.match(r"gen([0-9]{1,3})(?![0-9])", format_id)
    if match is None:
        raise InputError(f"format {format_id[:60]!r} does not name a generation (expected e.g. gen9randombattle)")
    return int(match.group(1))


def split_lines(lines: list[str], cache: dict[str, list[str]] | None = None) -> list[list[str]]:
    """Protocol lines split on ``|``, dropping lines that are not protocol (no leading ``|``).

    With ``cache``, a line seen before (the same public line in both sides' views) is split only once.
    """
    split = []
    for line in lines:
        if not line.startswith("|"):
            continue
        if cache is None:
            split.append(line.split("|"))
            continue
        parts = cache.get(line)
        if parts is None:
            parts = cache[line] = line.split("|")
        split.append(parts)
    return split


class SideTracker:
    """Feeds protocol lines and requests into a poke-env ``Battle`` for one side."""

    def __init__(self, battle_key: str, side: str, name: str, format_id: str) -> None:
        self.side = side
        self.name = name
        self.battle = Battle(f"battle-{format_id}-{battle_key}", name, _quiet, gen=generation(format_id))
        self.request: dict[str, Any] | None = None
        self.warnings: list[str] = []

    def feed(self, lines: list[str]) -> None:
        self.feed_parts(split_lines(lines))

    def feed_parts(self, split: list[list[str]]) -> None:
        """Feed lines already split on ``|`` (``split_lines``); both sides can share one split of a public line,
        because poke-env copies what it is given before changing it."""
        parse = self.battle.parse_message
        for parts in split:
            if parts[1] in _SKIPPED:
                continue
            try:
                parse(parts)
            except Exception as exc:  # a tracker gap must not end a real battle; note it instead
                line = "|".join(parts)
                message = f"{self.side}: poke-env could not parse {line[:80]!r}: {exc.__class__.__name__}: {exc}"
                if len(self.warnings) < 20:
                    self.warnings.append(message)
                _log.debug(message)

    def feed_request(self, request: dict[str, Any]) -> None:
        self.request = request
        self.battle.parse_request(request)
