"""What the app says and how it reads what people type: pure functions, no Gradio, no I/O.

Every decision the UI used to make inline lives here, with unit tests (tests/test_ui_presentation.py): result and
status wording (one function each, so two places can never word the same state differently), input parsing and
clamping (seeds, paces, steps, turn jumps, share-link parameters), the error split (a ``WolfeClickError`` is the
user's one line; anything else is a bug), and the searchable, paged recordings list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import urlencode

from wolfeclick.digits import ascii_int
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.sides import Side, is_side

__all__ = [
    "InputError", "BUG_MESSAGE", "error_line", "result_text", "status_line", "clamp_pace", "parse_step",
    "int_param", "jump_to_turn", "plural", "side_name", "share_query", "Page", "search_rows", "page_of", "compare_label",
    "verdict_rows", "PACE_RANGE", "SOURCE_KINDS",
]

PACE_RANGE = (0.0, 5.0)
"""Seconds a live battle waits between decisions (the slider's range; anything else is clamped into it)."""
SOURCE_KINDS = ("played", "tournament", "training", "branch", "imported", "ladder")
BUG_MESSAGE = "⚠ This is a bug in WolfeClick Arena (the server logged the details); please report it."


def error_line(exc: BaseException) -> tuple[str, bool]:
    """(what the page shows, whether it is a bug). A WolfeClickError is the user's one line; anything else is a
    bug: a fixed line on the page, the traceback in the server log (the caller logs it)."""
    if isinstance(exc, WolfeClickError):
        return f"⚠ {exc}", False
    return BUG_MESSAGE, True


# --------------------------------------------------------------------------------------------------------------
# Wording
# --------------------------------------------------------------------------------------------------------------
def plural(count: int, noun: str, many: str | None = None) -> str:
    """"1 decision", "2 decisions" (``many`` for an irregular plural)."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def played_by(names: Mapping[Side, str], policies: Mapping[Side, str], branch: bool) -> dict[str, str]:
    """The name a page shows for each side: the recorded name, except where a branch's side was taken over.

    A branch keeps its parent's player names in the simulator (its first decisions replay the parent's exactly,
    log lines included), so the recorded name of a side taken over by another policy is the parent's. Such a side
    is shown as both parts, ``random → maxdamage`` (a person's seat: ``heuristic → human``), wherever a name is
    shown: the header, the cards, the narration, the legends, the Replays list."""
    from wolfeclick.battle.runner import player_names

    shown: dict[str, str] = {side: str(name) for side, name in names.items()}
    if not branch or "p1" not in policies or "p2" not in policies:
        return shown
    own = player_names(str(policies["p1"]), str(policies["p2"]))
    for side, name in names.items():
        if side not in own:
            continue
        mirror = player_names(str(policies[side]), str(policies[side]))[side]  # "heuristic (p1)" of a mirror parent
        if name not in (own[side], mirror):
            shown[side] = f"{name} → {policies[side]}"
    return shown


def side_name(names: Mapping[str, str], side: str) -> str:
    """"heuristic (p1)": a side's name with its seat, said once (a mirror match's names already carry it)."""
    name = str(names.get(side, side))
    return name if name == side or name.endswith(f"({side})") else f"{name} ({side})"


def result_text(result: Mapping[str, Any] | None, names: Mapping[str, str]) -> str:
    """How a battle ended, in the same words wherever it is shown (header, status line, lists).

    ``turns`` counts game turns started, so a battle stopped in turn 6 reads "stopped during turn 6" rather than
    "after 6 turns" (which contradicted a view showing turn 5's last decision).
    """
    if not result:
        return "in progress"
    winner, reason, turns = result.get("winner"), result.get("reason"), int(result.get("turns") or 0)
    if is_side(winner):
        text = f"{side_name(names, winner)} won in turn {turns}"
        if reason == "forfeit":
            text += " by forfeit"
    elif reason == "tie":
        text = f"tie in turn {turns}"
    elif reason == "turn_limit":
        text = f"stopped at the turn limit (turn {turns})"
    elif reason == "aborted":
        text = f"stopped during turn {turns}"
    else:
        text = f"{reason} in turn {turns}"
    error = result.get("error")
    if error:
        text += f" ({str(error)[:200]})"
    return text


STATUS_WORDS = {
    "idle": "Ready", "loading": "Loading", "live": "● Live", "stopping": "■ Stopping", "done": "Finished",
    "error": "⚠ Could not go on",
}


def status_line(phase: str, title: str = "", detail: str = "") -> str:
    """The one status line of a live battle or a comparison: a phase word, what is playing, one detail.

    The phase word is the only state word in the line (no "Stopped · … · Finished"): ``done`` reads "Finished"
    for a battle that ended and "Stopped" for one that was stopped; the detail never repeats a state word.
    """
    word = STATUS_WORDS.get(phase, phase)
    return " · ".join(part for part in (word, title, detail) if part)


def finished_phase(result: Mapping[str, Any] | None) -> str:
    """The status word of a battle that is over."""
    return "Stopped" if (result or {}).get("reason") == "aborted" else "Finished"


# --------------------------------------------------------------------------------------------------------------
# Reading inputs
# --------------------------------------------------------------------------------------------------------------
def clamp_pace(value: Any, default: float) -> float:
    """Seconds between live decisions, clamped into ``PACE_RANGE``; anything unreadable is the default."""
    try:
        pace = float(value if value is not None else default)
    except (TypeError, ValueError):
        pace = default
    if not math.isfinite(pace):
        pace = default
    return max(PACE_RANGE[0], min(PACE_RANGE[1], pace))


def parse_step(value: Any) -> int:
    """A decision index from an API call: a whole number ≥ 0 (a string of digits is fine); else one line."""
    if isinstance(value, bool):
        raise InputError("step must be a whole number of 0 or more")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and (parsed := ascii_int(value.strip(), 9)) is not None:
        number = parsed
    elif value is None:
        number = 0
    else:
        raise InputError(f"step must be a whole number of 0 or more, not {str(value)[:40]!r}")
    if number < 0:
        raise InputError("step must be a whole number of 0 or more")
    return number


def int_param(value: Any, limit: int = 10**6) -> int | None:
    """A share link's ``turn``/``step``: digits only (at most 7), else None (the link then falls back)."""
    number = ascii_int(str(value or "").strip(), 7)
    return None if number is None else min(number, limit)


def jump_to_turn(turns: Sequence[int], value: Any) -> tuple[int, str]:
    """(step index, message) for "jump to turn ``value``" in a battle whose steps have game turns ``turns``.

    A whole number inside the battle jumps to that turn's first decision with no message; anything else is
    clamped to the nearest turn with one line saying so (never an error badge on a component).
    """
    if not turns:
        return 0, "This battle has no decisions yet."
    first, last = turns[0], turns[-1]
    try:
        number = float(value)
        if not math.isfinite(number):
            raise ValueError
    except (TypeError, ValueError):
        return 0, f"“{str(value)[:20]}” is not a turn number: showing turn {first}."
    wanted = int(number)
    note = "" if number.is_integer() else f"Turn numbers are whole: {str(value)[:20]} → {wanted}. "
    if wanted < first or wanted > last:
        target = first if wanted < first else last
        return _first_step(turns, target), f"{note}Turn {wanted} is not in this battle (turns {first}–{last}): " \
                                           f"showing turn {target}."
    return _first_step(turns, wanted), note.strip()


def _first_step(turns: Sequence[int], turn: int) -> int:
    for i, t in enumerate(turns):
        if t >= turn:
            return i
    return max(0, len(turns) - 1)


def share_query(replay_id: str, turns: Sequence[int], index: int) -> str:
    """``?replay=ID&turn=N``, with ``&step=K`` when K is not the first decision of turn N."""
    if not turns:
        return "?" + urlencode({"replay": replay_id})
    index = max(0, min(index, len(turns) - 1))
    params: dict[str, Any] = {"replay": replay_id, "turn": turns[index]}
    if _first_step(turns, turns[index]) != index:
        params["step"] = index
    return "?" + urlencode(params)


# --------------------------------------------------------------------------------------------------------------
# Lists
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Page:
    rows: list[Any]
    page: int
    pages: int
    total: int

    def caption(self, noun: str = "recordings") -> str:
        if not self.total:
            return f"No {noun} match."
        return f"Page {self.page} of {self.pages} · {plural(self.total, noun.removesuffix('s'), noun)}"


def search_rows(rows: Iterable[Mapping[str, Any]], query: str | None,
                fields: Sequence[str] = ("id", "p1", "p2", "policies", "format", "winner", "source")) -> list[dict]:
    """Rows whose fields contain every word of ``query`` (case-insensitive); ``field:word`` limits a word to one
    field (``source:tournament``, ``winner:p1``, ``format:gen9``)."""
    words = (query or "").lower().split()[:12]
    out = []
    for row in rows:
        haystack = {f: str(row.get(f, "")).lower() for f in fields}
        everything = " ".join(haystack.values())
        ok = True
        for word in words:
            name, sep, wanted = word.partition(":")
            if sep and name in haystack:
                ok = wanted in haystack[name]
            else:
                ok = word in everything
            if not ok:
                break
        if ok:
            out.append(dict(row))
    return out


def page_of(rows: Sequence[Any], page: Any, size: int) -> Page:
    """Page ``page`` (1-based, clamped) of ``rows``."""
    pages = max(1, math.ceil(len(rows) / size))
    try:
        number = int(float(page))
    except (TypeError, ValueError):
        number = 1
    number = max(1, min(pages, number))
    return Page(list(rows[(number - 1) * size:number * size]), number, pages, len(rows))


def compare_label(tournament_id: str, players: Sequence[str], format_id: str, date: str, battles: int,
                  scheduled: int) -> str:
    """An earlier comparison as a person tells them apart: date, players, battle count (the id last)."""
    done = plural(battles, "battle") if battles >= scheduled else f"{battles} of {plural(scheduled, 'battle')}"
    return f"{date} · {' vs '.join(players)} · {format_id} · {done} · {tournament_id}"


VERDICT_WORDS = {"stronger": "stronger", "not_separable": "not separable yet", "no_difference": "no detectable difference"}


def verdict_rows(summary: Mapping[str, Any] | None) -> list[list[str]]:
    """The Compare verdict table from a tournament summary, read defensively: per pairing ``verdict`` =
    {kind, text, more_pairs, favoured} when the tournament layer provides it; nothing otherwise."""
    rows: list[list[str]] = []
    pairings = (summary or {}).get("pairings") if isinstance(summary, Mapping) else None
    if not isinstance(pairings, list):
        return rows
    for pairing in pairings:
        if not isinstance(pairing, Mapping):
            continue
        verdict = pairing.get("verdict")
        if not isinstance(verdict, Mapping):
            continue
        a, b = str(pairing.get("a", pairing.get("p1", ""))), str(pairing.get("b", pairing.get("p2", "")))
        more = verdict.get("more_pairs")
        rows.append([f"{a} vs {b}", VERDICT_WORDS.get(str(verdict.get("kind")), str(verdict.get("kind", ""))),
                     str(verdict.get("favoured") or "–"), str(verdict.get("text") or ""),
                     "" if more in (None, 0) else str(more)])
    return rows
