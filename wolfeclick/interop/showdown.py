"""Showdown's own replays: the replay site's ``.json`` (``{id, format, log, players, uploadtime, …}``) or a bare
protocol ``.log``.

Only public information exists in a spectator log: no request, so no legal actions and no state an agent saw. What
the importer can say it says from the public events alone — each side's snapshot, the action each side was seen to
take (its first ``|move|`` or ``|switch|`` after a decision point), and the Arena's shaped reward computed from two
spectator-fed poke-env ``Battle`` views — and it marks every decision so (``policy_info.public_only``).
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import Any

from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import MAX_RECORDING_BYTES
from wolfeclick.game.reward import RewardBudget, outcome_reward, shaped_reward, total
from wolfeclick.interop.public import (
    OLD_LOG_NOTE,
    SIDES,
    ImportFormatError,
    check_singles,
    checked_format,
    clean_log,
    format_id,
    generation_format,
    imported_id,
    imported_versions,
    last_turn,
    loss_message,
    now,
    old_log_format,
    player_names,
    replay_public,
    scan_slots,
    turn_number,
    validated,
    winner_of,
)
from wolfeclick.sides import Side, is_side, other

REPLAY_FORMAT = "showdown replay"
LOG_FORMAT = "showdown protocol log"
PUBLIC_NOTE = "public log only: no legal actions or agent state; actions and shaped reward read from public events"
MIN_POINT_BYTES = 1800
"""The fewest bytes one decision point takes in a recording (measured: an empty battle's snapshot, decisions and
rewards are 1,873 bytes a point), so a log whose recording cannot fit is refused before it is built."""


def looks_like_replay(raw: Any) -> bool:
    return isinstance(raw, dict) and isinstance(raw.get("log"), str) and ("players" in raw or "id" in raw) \
        and "schema" not in raw


def looks_like_log(text: str) -> bool:
    """A protocol log: several ``|tag|`` lines, among them the ones every battle has."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    tags = {line.split("|", 2)[1] for line in lines}
    return len(lines) >= 3 and bool(tags & {"player", "switch", "turn", "start", "gametype"})


def decision_points(log: list[str]) -> list[tuple[int, int, list[Side]]]:
    """(log position, battle turn, deciding sides) for each choice a side must have made, read from public lines.

    Every ``|turn|N`` asks both sides. A side switching in after it already acted or fainted this turn (a
    replacement after a faint, a U-turn or Baton Pass, an Eject Button) was asked again: that is a decision point
    too, shared by the sides that switch in before the next move or turn.
    """
    points: list[tuple[int, int, list[Side]]] = []
    turn = 0
    busy: set[Side] = set()
    fainted = ""
    open_block = False
    for position, line in enumerate(log):
        parts = line.split("|")
        tag = parts[1] if len(parts) > 1 else ""
        side = parts[2][:2] if len(parts) > 2 else ""
        number = turn_number(parts)
        if number is not None:
            turn = number
            points.append((position + 1, turn, list(SIDES)))
            busy, open_block = set(), False
        elif turn == 0:
            continue
        elif tag == "-hint" and len(parts) > 2 and parts[2].startswith("Previously chosen switches continue"):
            busy = {s for s in busy if s != fainted}  # gen 2-4 Pursuit: the switch chosen before goes on
        elif tag == "switch" and is_side(side):
            if side in busy:
                if not open_block or side in points[-1][2]:
                    points.append((position, turn, []))
                    open_block = True
                points[-1][2].append(side)
            busy.add(side)
        elif tag in ("move", "cant", "faint") and is_side(side):
            busy.add(side)
            fainted = side if tag == "faint" else fainted
            if tag != "faint":
                open_block = False
    return [(position, turn, sorted(deciding)) for position, turn, deciding in points]


def seen_action(segment: list[str], side: str) -> dict[str, str] | None:
    """The first move or switch ``side`` showed in ``segment`` (None when it could not act or fell first)."""
    for line in segment:
        parts = line.split("|")
        if len(parts) < 3 or not parts[2].startswith(side):
            continue
        if parts[1] == "move" and len(parts) > 3:
            return {"action": "move", "choice": parts[3]}
        if parts[1] == "switch" and len(parts) > 3:
            return {"action": "switch", "choice": parts[3].split(",")[0].strip()}
        if parts[1] in ("cant", "faint"):
            return None
    return None


def from_public_log(log: list[str], *, fmt: str, recording_id: str, detail: str,
                    names: dict[Side, str] | None = None, dropped: int = 0, note: str = "",
                    scan: tuple[str | None, bool] | None = None) -> Recording:
    """A recording of a battle known only from its spectator log ``log`` (already cleaned); ``scan``: the log's
    ``scan_slots`` when the caller made it."""
    check_singles(log, fmt, detail, scan=scan)
    names = {**(names or {}), **player_names(log)}
    for side in SIDES:
        names.setdefault(side, side)
    points = decision_points(log)
    check_fits(log, len(points), detail)
    public = replay_public(log, fmt, names, [p for p, _, _ in points] + [len(log)],
                           [tuple(deciding) for _, _, deciding in points] + [tuple(SIDES)])  # the views rewards read
    winner, ended = winner_of(log, names)
    lost = loss_message(log, names)
    if lost is not None and not ended:
        winner, ended = other(lost[0]), True  # a forfeit or a lost timer ends the battle, |win| line or not
    if lost is not None and winner != other(lost[0]):
        lost = None
    budgets = {side: RewardBudget() for side in SIDES}
    last_point = {side: max((k for k, (_, _, deciding) in enumerate(points) if side in deciding), default=-1)
                  for side in SIDES}
    turns = []
    previous = 0
    for k, (position, turn, deciding) in enumerate(points):
        decisions: dict[Side, Any] = {}
        for side in deciding:
            later = next((j for j in range(k + 1, len(points)) if side in points[j][2]), len(points))
            end = public[later].position
            window = log[position:end]
            components, budgets[side] = shaped_reward(public[k].views[side], public[later].views[side], window, side,
                                                      False, budgets[side])
            outcome = outcome_reward(winner, side) if ended and k == last_point[side] else 0.0
            decisions[side] = {
                "state": "", "legal_actions": [], "action": seen_action(window, side), "command": "",
                "raw_output": None, "latency_ms": None,
                "reward": {"total": total(components), "components": components, "outcome": outcome},
                "policy_info": {"public_only": True, "note": PUBLIC_NOTE},
            }
        turns.append({"index": k, "turn": turn, "deciding": deciding, "decisions": decisions,
                      "events": log[previous:position], "snapshot": public[k].snapshot})
        previous = position
    note = "; ".join(filter(None, (PUBLIC_NOTE, f"{dropped} chat/markup/timer lines dropped" if dropped else "",
                                   note)))
    reason = ("forfeit" if lost else "win") if ended and winner else ("tie" if ended else "aborted")
    error = f"{lost[0]} {lost[1]}" if lost and winner else None if ended else "the log ends before the battle does"
    return validated({
        "schema": "wolfeclick.recording/1", "id": recording_id, "created": now(), "format": fmt, "seed": None,
        "players": {side: {"name": names[side], "policy": "", "metadata": {"import": {"format": detail, "notes": note}}}
                    for side in SIDES},
        "result": {"winner": winner, "reason": reason, "turns": last_turn(log), "error": error},
        "versions": imported_versions().model_dump(), "log": log, "inputlog": [], "turns": turns,
        "source": {"kind": "imported", "detail": detail},
    }, detail)


def check_fits(log: list[str], points: int, what: str) -> None:
    """Refuse, before anything is built, a log whose recording would pass the recording limit: the log is kept
    twice (``log`` and each turn's ``events``) and every decision point takes at least ``MIN_POINT_BYTES``."""
    estimate = 2 * sum(len(line) + 3 for line in log) + points * MIN_POINT_BYTES
    if estimate > MAX_RECORDING_BYTES:
        raise ImportFormatError(f"{what}: {points} decision points and {len(log)} lines would make a recording of "
                                f"over {estimate / 1e6:.0f} MB; recordings are limited to "
                                f"{MAX_RECORDING_BYTES // (1024 * 1024)} MB")


def read_showdown_replay(raw: dict[str, Any], data: bytes) -> Recording:
    """A replay-site JSON object → recording."""
    lines, dropped = clean_log(str(raw["log"]).split("\n"))
    hints = (raw.get("formatid"), raw.get("format"), raw.get("id"), tier_text(lines))
    scan = scan_slots(lines)
    check_singles(lines, None, REPLAY_FORMAT, hints, scan)
    if not lines:
        raise ImportFormatError(f"{REPLAY_FORMAT}: its 'log' holds no battle protocol lines")
    fmt = format_id(raw.get("formatid")) or format_id(str(raw.get("id", "")).split("-")[0]) \
        or format_id(raw.get("format")) or format_id(tier_text(lines)) or generation_format(lines)
    old = None if fmt else old_log_format(lines, tier_text(lines))  # the log's own |tier|, as old logs had
    fmt = checked_format(fmt or old, REPLAY_FORMAT)
    players = raw.get("players")
    names = {side: str(name) for side, name in zip(SIDES, players)} if isinstance(players, list) else {}
    hint = raw.get("id") if isinstance(raw.get("id"), str) else None
    return from_public_log(lines, fmt=fmt, recording_id=imported_id("showdown", data, hint), detail=REPLAY_FORMAT,
                           names=names, dropped=dropped, note=OLD_LOG_NOTE if old else "", scan=scan)


def read_showdown_log(text: str, data: bytes, *, detail: str = LOG_FORMAT, prefix: str = "showdownlog",
                      formats: tuple[str | None, ...] = ()) -> Recording:
    """A bare protocol log (``.log``, or one taken out of a page: ``detail``) → recording. The format is the
    ``|tier|``, else the first of ``formats`` (what else names it: a page's title) naming a generation, else the
    generation alone (``gen9``) from ``|gen|``."""
    lines, dropped = clean_log(text.split("\n"))
    tier = tier_text(lines)
    scan = scan_slots(lines)
    check_singles(lines, None, detail, (tier, *formats), scan)
    fmt = format_id(tier) or next((found for found in map(format_id, formats) if found), None) \
        or generation_format(lines)
    old = None if fmt else old_log_format(lines, tier)  # the log's own tier: a page's title may be anything
    fmt = checked_format(fmt or old, detail)
    return from_public_log(lines, fmt=fmt, recording_id=imported_id(prefix, data), detail=detail,
                           dropped=dropped, note=OLD_LOG_NOTE if old else "", scan=scan)


def tier_text(lines: list[str]) -> str | None:
    """The format as the log names it (``|tier|[Gen 9] Random Battle``; old logs: ``|tier|OU``)."""
    for line in lines:
        parts = line.split("|")
        if parts[1:2] == ["tier"] and len(parts) > 2:
            return parts[2]
    return None


PAGE_FORMAT = "showdown replay page"
_PAGE_LOG = re.compile(r'<script\b[^>]*\bclass=["\']?(?:battle-log-data|log)(?=["\'\s>])[^>]*>(.*?)</script>',
                       re.S | re.I)
"""The log block: ``class="battle-log-data"`` (today's pages and "Download replay"), ``class="log"`` (old pages)."""
_PAGE_ID = re.compile(r'<input\b[^>]*\bname="replayid"[^>]*\bvalue="([^"]{1,120})"', re.I)
_PAGE_TITLE = re.compile(r"<title>([^<]{1,200}?) replay: ", re.I)
"""``<title>[Gen 9] VGC 2024 Reg G replay: A vs. B</title>``: the format, before the players' names (a title of
another shape is not read: it may be anything, a player's name included)."""


_PAGE_TAG = re.compile(r"<title>\s*battle-([A-Za-z0-9]{1,80})-\d{1,20}\s*</title>", re.I)
"""poke-env's saved pages: ``<title>battle-gen9ou-12</title>``, the battle's tag (its format, and a number a local
server counts from 1 again at each start: not an id)."""
UNREGISTERED = "unregisteredserver"
"""The replay-id prefix of a server that is not registered with Showdown's login server: its battle numbers start
again with every server, so they name no battle. poke-env's page template writes one such id,
``unregisteredserver-gen8randombattle-320064``, into every page it saves, whatever battle the page holds."""


PAGE_MARK = 'class="battle-log-data"'
"""Showdown's replay pages (and its client's "Download replay") carry the log in a
``<script type="text/plain" class="battle-log-data">`` block."""


def read_showdown_page(text: str, data: bytes) -> Recording:
    """A saved replay page → recording, from the protocol log inside it (the page's slashes are escaped ``\\/``;
    a page some tool HTML-escaped is unescaped). What the page's title and replay id say of the format is read
    first, so a doubles page is called one whatever else it lacks."""
    page_id = _PAGE_ID.search(text)
    title = _PAGE_TITLE.search(text)
    tag = _PAGE_TAG.search(text)
    named = html.unescape(page_id.group(1)) if page_id else None
    formats = (html.unescape(title.group(1)) if title else None, tag.group(1) if tag else None,
               named.split("-")[0] if named else None)
    match = _PAGE_LOG.search(text)
    if match is None:
        check_singles([], None, PAGE_FORMAT, formats)
        raise ImportFormatError(f"{PAGE_FORMAT}: an HTML page without a battle log (no <script "
                                "class=\"battle-log-data\"> block)")
    body = match.group(1).replace("\\/", "/")
    if "<" not in body and re.search(r"&(lt|gt|amp|quot|#[0-9]+);", body):
        body = html.unescape(body)
    recording = read_showdown_log(body, data, detail=PAGE_FORMAT, prefix="showdown", formats=formats)
    if named and names_battle(named, recording.format):
        return recording.model_copy(update={"id": imported_id("showdown", data, named)})
    return recording.model_copy(update={"id": content_id(recording)})


def names_battle(replay_id: str, fmt: str) -> bool:
    """Pure: whether a page's replay id names its battle: one of its parts is the battle's format
    (``gen9ou-2000000005``, ``smogtours-gen9ou-812``) and it is not an unregistered server's (poke-env's template
    id is one, in every page poke-env saves)."""
    parts = replay_id.lower().split("-")
    return fmt in parts and parts[0] != UNREGISTERED


def content_id(recording: Recording) -> str:
    """Pure: ``showdown-<format>-<sha256[:16]>`` of the battle's protocol log as imported (chat, timer and markup
    lines dropped): the same battle gets the same id whatever file it came in, whenever and in whatever order it is
    imported; two battles, two ids."""
    digest = hashlib.sha256("\n".join(recording.log).encode("utf-8")).hexdigest()[:16]
    return f"showdown-{recording.format}-{digest}"
