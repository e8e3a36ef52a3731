"""What every importer shares: the foreign-file error, cleaning a human room's log, and replaying a public log.

A foreign source rarely holds what a recording wants (the agent's view, legal actions, the Arena's reward), but a
protocol log holds the public events. ``replay_public`` feeds them into one poke-env ``Battle`` per side — exactly
what a spectator of that side could know — and reads the snapshots and reward views at chosen points of the log.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import platform
import re
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

from pydantic import ValidationError

import wolfeclick
from wolfeclick.battle.schema import PokemonSnapshot, Recording, Versions, is_valid_id
from wolfeclick.battle.store import RecordingError, _first_error
from wolfeclick.battle.tracker import SideTracker, generation, split_lines
from wolfeclick.digits import ascii_int
from wolfeclick.game.reward import RewardView, reward_view
from wolfeclick.game.snapshot import SnapshotEntries, side_snapshot_read
from wolfeclick.sides import SIDES, Side, is_side, other

ROOM_ONLY = frozenset({
    "c", "c:", "chat", "j", "J", "join", "l", "L", "leave", "n", "N", "name", "b", "B", "battle", "raw", "html",
    "uhtml", "uhtmlchange", "inactive", "inactiveoff", "t:", "timer", "title", "badge", "seed", "debug", "error",
    "bigerror", "notify", "tempnotify", "tempnotifyoff", "expire", "init", "deinit", "noinit", "popup", "hidelines",
    "unlink", "controlshtml", "fieldhtml", "selectorhtml", "request", "sentchoice", "choice", "askreg", "userstats",
    "queryresponse", "challstr", "updateuser", "updatesearch", "updatechallenges", "customgroups", "formats",
    "rated", "player-inactive", "split", "spectator", "spectatorleave", ":",
})
"""Lines a human battle room has that are not battle events (chat, markup, timers, joins): dropped on import, so
nothing from a chat line or an ``|html|`` block ever reaches a page."""


class ImportFormatError(RecordingError):
    """A file that is no battle log we can read (or a truncated one); the message is one line.

    A ``RecordingError`` (so a ``WolfeClickError``): everywhere a bad recording is refused, a bad import is too."""


def clean_log(lines: list[str]) -> tuple[list[str], int]:
    """(battle protocol lines, how many room-only or non-protocol lines were dropped)."""
    kept: list[str] = []
    dropped = 0
    for raw in lines:
        line = raw.rstrip("\r")
        if not line:
            continue
        if not line.startswith("|"):
            dropped += 1
            continue
        tag = line.split("|", 2)[1]
        if tag in ROOM_ONLY:
            dropped += 1
            continue
        kept.append(line)
    return kept, dropped


MAX_TURN_DIGITS = 6
"""Showdown ends every battle by turn 1000; a longer turn number is no battle log."""
_HP = re.compile(r"^(-?[0-9]+)/(-?[0-9]+)")
_HP_FIELD = {"switch": 4, "drag": 4, "replace": 4, "-damage": 3, "-heal": 3, "-sethp": 3}
"""Where a line carries an ``HP/MAX`` field (``|switch|p1a: X|X, L80|245/245``, ``|-damage|p1a: X|120/245``)."""


def turn_number(parts: list[str]) -> int | None:
    """The battle turn of a split ``|turn|N`` line (None for any other line); a turn that is not a plain number is a
    one-line ImportFormatError."""
    if parts[1:2] != ["turn"]:
        return None
    value = ascii_int(parts[2], MAX_TURN_DIGITS) if len(parts) > 2 else None
    if value is None:
        shown = parts[2][:20] if len(parts) > 2 else ""
        raise ImportFormatError(f"a '|turn|' line has no plain turn number ({shown!r})")
    return value


def check_protocol(log: list[str]) -> None:
    """Refuse, in one line, battle lines no simulator writes that would break the trackers: a turn number that is
    not ASCII digits, an HP field like ``5/0`` or ``-5/100``."""
    for number, line in enumerate(log, start=1):
        parts = line.split("|")
        turn_number(parts)
        field = _HP_FIELD.get(parts[1]) if len(parts) > 1 else None
        if field is None or len(parts) <= field:
            continue
        match = _HP.match(parts[field])
        if match and (int(match.group(1)) < 0 or int(match.group(2)) <= 0):
            raise ImportFormatError(f"line {number}: HP {parts[field][:20]!r} is not a valid HP "
                                    "(current/maximum, the maximum above 0)")


_MULTI_FORMAT = re.compile(r"doubles|triples|freeforall|vgc|2v2|multibattle|multirandom")
_MULTI_SLOT = re.compile(r"^p[1-4][b-c]: |^p[34][a-c]?: ")


def check_singles(log: list[str], fmt: str | None, what: str, hints: tuple[Any, ...] = (),
                  scan: tuple[str | None, bool] | None = None) -> None:
    """Refuse in one line a doubles, triples, multi or free-for-all battle: every importer and view here has one
    active Pokémon per side, and reading such a log as singles would lose the other slots' actions and state.

    Seen in ``|gametype|``, in a second active slot (``p1b: …``) or third player, in the format id, or in
    ``hints``: whatever else names the format (a file's ``format`` field, a replay id, a page's title, a server's
    ``>start`` line), so a file is called what it is before any other check can refuse it for something else.
    ``scan``: ``scan_slots(log)`` when already made (an importer checks once with the file's names, then again
    with the format it chose: the log is read once).
    """
    kind, singles = scan if scan is not None else scan_slots(log)
    if kind is None:  # a log that says singles is believed over names (a replay id, a room) that look otherwise
        texts = [fmt, *(hint for hint in hints if isinstance(hint, str) and not singles)]
        match = next((found for text in texts if text
                      for found in [_MULTI_FORMAT.search(re.sub(r"[^a-z0-9]", "", text.lower()))] if found), None)
        if match:
            kind = {"vgc": "doubles", "2v2": "doubles", "multibattle": "multi", "multirandom": "multi"}.get(
                match.group(0), match.group(0))
    if kind is not None:
        raise ImportFormatError(f"{what}: {kind} battles are not supported yet (only singles: one active Pokémon "
                                "per side)")


def scan_slots(log: list[str]) -> tuple[str | None, bool]:
    """(the kind of battle the log's own lines show when not singles, else None; whether ``|gametype|singles``
    was read): ``check_singles``'s reading of the log."""
    kind = None
    singles = False
    for line in log:
        parts = line.split("|")
        if parts[1:2] == ["gametype"] and len(parts) > 2:
            singles = parts[2] == "singles"
            if not singles:
                kind = parts[2][:20] or "unknown"
                break
            continue
        if parts[1:2] == ["player"] and parts[2:3] in (["p3"], ["p4"]):
            kind = "multi"
            break
        if len(parts) > 2 and _MULTI_SLOT.match(parts[2]):
            kind = "doubles" if parts[2][2] in "bc" else "multi"
            break
    return kind, singles


def generation_format(log: list[str]) -> str | None:
    """``gen9`` from a log's ``|gen|9`` line: the generation is what the trackers need when no ``|tier|`` names
    the format (a custom game, a log cut by some tool)."""
    for line in log:
        parts = line.split("|")
        if parts[1:2] == ["gen"] and len(parts) > 2:
            number = ascii_int(parts[2], 2)
            return f"gen{number}" if number else None
    return None


OLD_LOG_NOTE = "no |gen| line: read as generation 5 (Showdown's logs before generation 6, late 2013, had none)"


def old_log_format(lines: list[str], tier: str | None) -> str | None:
    """``gen5ou`` for an old log: no ``|gen|`` line and a ``|tier|`` that names no generation (``|tier|OU``);
    Showdown wrote ``|gen|`` from generation 6 on, so such a log is a generation 5 battle."""
    ident = re.sub(r"[^a-z0-9]", "", tier.lower()) if tier else ""
    if not ident or ident.startswith("gen") or any(line.startswith("|gen|") for line in lines):
        return None
    return f"gen5{ident}"[:60]


def format_id(text: str | None) -> str | None:
    """``[Gen 9] Random Battle`` or ``gen9randombattle`` → ``gen9randombattle`` (None when no generation shows)."""
    if not text:
        return None
    value = re.sub(r"[^a-z0-9]", "", str(text).lower())
    return value if re.match(r"^gen\d", value) else None


def checked_format(value: str | None, what: str) -> str:
    """A format id poke-env can track, or a one-line ImportFormatError."""
    if not value:
        raise ImportFormatError(f"{what}: the battle format is missing (expected e.g. gen9randombattle)")
    try:
        generation(value)
    except ValueError:
        raise ImportFormatError(f"{what}: format {value[:40]!r} does not name a generation") from None
    return value


def imported_id(prefix: str, data: bytes, hint: str | None = None) -> str:
    """A safe, deterministic id: ``prefix-<hint>`` when the source names its battle, else ``prefix-<sha256[:16]>``."""
    if hint:
        cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(hint)).strip("-.")[:100]
        candidate = f"{prefix}-{cleaned}"
        if cleaned and is_valid_id(candidate):
            return candidate
    return f"{prefix}-{hashlib.sha256(data).hexdigest()[:16]}"


@functools.cache
def imported_versions() -> Versions:
    """The importer's own versions; the source's simulator version is unknown (read once: a package's metadata is
    a file lookup, a tenth of a public log's import)."""
    return Versions(wolfeclick=wolfeclick.__version__, pokemon_showdown="unknown", poke_env=version("poke-env"),
                    python=platform.python_version())


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def player_names(log: list[str]) -> dict[Side, str]:
    """Names from ``|player|p1|NAME|…`` lines (the last non-empty one wins)."""
    names: dict[Side, str] = {}
    for line in log:
        parts = line.split("|")
        if len(parts) > 3 and parts[1] == "player" and is_side(parts[2]) and parts[3]:
            names[parts[2]] = parts[3]
    return names


def winner_of(log: list[str], names: dict[Side, str]) -> tuple[Side | None, bool]:
    """(winning side or None, whether the log shows the battle ended: ``|win|`` or ``|tie``)."""
    for line in reversed(log):
        parts = line.split("|")
        if parts[1:2] == ["win"]:
            name = parts[2] if len(parts) > 2 else ""
            exact = next((side for side in SIDES if names.get(side) == name), None)
            alike = [side for side in SIDES if _user_id(name) and _user_id(names.get(side, "")) == _user_id(name)]
            return exact or (alike[0] if len(alike) == 1 else None), True  # a tool may respell the name
        if parts[1:2] == ["tie"]:
            return None, True
    return None, False


_LOSS_MESSAGE = re.compile(r"^\|-?message\|(.+) (forfeited|lost due to inactivity)(?: [^|]*)?[.!]?$")
"""What a room writes when a player forfeits or runs out of time (``|-message|Ash Ketchum forfeited.``); a saved
log may end there, without the ``|win|`` line that followed (poke-env saves its logs before it)."""


def loss_message(log: list[str], names: dict[Side, str]) -> tuple[Side, str] | None:
    """(losing side, ``forfeited``/``lost due to inactivity``) from the last such message naming a player of the
    battle (names compared as Showdown's user ids: case, spaces and symbols ignored), or None."""
    ids = {side: _user_id(names.get(side, "")) for side in SIDES}
    for line in reversed(log):
        match = _LOSS_MESSAGE.match(line)
        if match is None:
            continue
        sides = [side for side in SIDES if ids[side] and ids[side] == _user_id(match.group(1))]
        if len(sides) == 1:
            return sides[0], match.group(2)
    return None


def _user_id(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def last_turn(log: list[str]) -> int:
    turn = 0
    for line in log:
        number = turn_number(line.split("|"))
        if number is not None:
            turn = number
    return turn


def turn_cuts(log: list[str]) -> dict[int, int]:
    """Battle turn → the log position just after its ``|turn|N`` line (where that turn's decisions are made)."""
    cuts: dict[int, int] = {}
    for position, line in enumerate(log):
        number = turn_number(line.split("|"))
        if number is not None:
            cuts.setdefault(number, position + 1)
    return cuts


@dataclass(frozen=True)
class PublicPoint:
    """Both sides' public state at one position of the log."""

    position: int
    snapshot: dict[Side, dict[str, Any]]
    views: dict[Side, RewardView]


def replay_public(log: list[str], format_id_: str, names: dict[Side, str], positions: list[int],
                  viewed: list[tuple[Side, ...]] | None = None) -> list[PublicPoint]:
    """Feed ``log`` to one tracker per side and read both sides at each of ``positions`` (non-decreasing): their
    snapshots, and the reward views of the sides ``viewed`` names for that position (default: both)."""
    check_protocol(log)
    trackers = {side: SideTracker("import", side, names.get(side) or side, format_id_) for side in SIDES}
    seats = [f"|player|{side}|{names.get(side) or side}|" for side in SIDES]
    for tracker in trackers.values():  # tell each view its seat even when the log lost its |player| lines
        tracker.feed(seats)
    hints = lead_hints(log)
    caches: dict[Side, SnapshotEntries] = {side: {} for side in SIDES}  # a Pokémon read as before: its entry again
    models: dict[int, PokemonSnapshot] = {}
    """Each entry's model, made once (by the entry's identity: the caches keep every entry alive): the recording's
    validation takes a model as it is, so a Pokémon unchanged over many decisions is validated once."""

    def side(snapshot: dict[str, Any]) -> dict[str, Any]:
        team = []
        for entry in snapshot["team"]:
            model = models.get(id(entry))
            if model is None:
                try:
                    model = models[id(entry)] = PokemonSnapshot.model_validate(entry)
                except ValidationError:  # left as read: the recording's validation says what is wrong, in one line
                    team.append(entry)
                    continue
            team.append(model)
        return {**snapshot, "team": team}

    points: list[PublicPoint] = []
    fed = 0
    for k, position in enumerate(positions):
        position = max(fed, min(position, len(log)))
        lines = [hinted for at in range(fed, position) for hinted in (*hints.get(at, ()), log[at])]
        split = split_lines(lines)  # once for both sides: poke-env copies what it is given before changing it
        for tracker in trackers.values():
            tracker.feed_parts(split)
        fed = position
        snapshot: dict[Side, dict[str, Any]] = {}
        views: dict[Side, RewardView] = {}
        for seat in SIDES:  # each team read once for its snapshot and its reward view
            battle = trackers[seat].battle
            read, own = side_snapshot_read(battle, trackers[other(seat)].battle, caches[seat])
            snapshot[seat] = side(read)
            if viewed is None or seat in viewed[k]:
                views[seat] = reward_view(battle, own)
        points.append(PublicPoint(position, snapshot, views))
    return points


def lead_hints(log: list[str]) -> dict[int, list[str]]:
    """Tracker-only switch-ins for leads a log never shows switching in (the reference kept no pre-turn-1 lines).

    A side's first Pokémon mentioned before any ``|switch|`` of that side is its lead, and a lead starts at full HP;
    telling the trackers so lets the snapshots show it. The recording's log itself is left as the source had it.
    """
    hints: dict[int, list[str]] = {}
    settled: set[str] = set()
    for position, line in enumerate(log):
        parts = line.split("|")
        if len(parts) < 3 or not re.match(r"^p[12]a: ", parts[2]):
            continue
        side = parts[2][:2]
        if side in settled:
            continue
        settled.add(side)
        if parts[1] not in ("switch", "drag", "replace"):
            name = parts[2][5:]
            hints.setdefault(position, []).append(f"|switch|{side}a: {name}|{name}|100/100")
    return hints


def validated(data: dict[str, Any], what: str) -> Recording:
    """The built recording, validated; a failure here means the source held values we cannot represent."""
    try:
        return Recording.model_validate(data)
    except ValidationError as exc:
        raise ImportFormatError(f"{what}: {_first_error(exc)}") from None
