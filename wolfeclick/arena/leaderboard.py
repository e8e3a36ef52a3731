"""The standing leaderboard: every battle in the history, rated together. Pure: entries in, tables out.

Ratings are a pure function of the whole match history (recomputed whenever it or the formula changes, never
updated in place): Bradley–Terry over the pooled battles with the honest intervals of `ratings.rating_intervals`
(resampled by pair — a tournament's pair number names one seed — and the profile likelihood under separation),
anchored on ``random`` = 1000 as tournament tables are; W-L-T with a Wilson interval; the illegal-action rate;
and a Glicko-2 rating with its deviation over rating periods (tournaments or days), for following a policy over
time. Policies with fewer than ``min_battles`` battles are rated with everyone (they inform the others' ratings)
but listed apart. Aborted battles are left out, as everywhere else.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

from wolfeclick.arena.glicko import GLICKO_ORDER_NOTE, glicko2_run
from wolfeclick.arena.history import BattleEntry, unratable
from wolfeclick.arena.intervals import open_high, open_low
from wolfeclick.arena.intervals import rating_text as interval_text
from wolfeclick.arena.ratings import rating_intervals
from wolfeclick.arena.standings import MIN_BATTLES, RATING_BASE, fixed_width, shift_intervals
from wolfeclick.arena.stats import GameResult, score_for, summarize_pairings, wilson_interval
from wolfeclick.errors import InputError

__all__ = [
    "MIN_BATTLES",
    "ANCHOR",
    "LeaderRow",
    "GlickoPoint",
    "glicko_history",
    "MatrixCell",
    "Leaderboard",
    "games_of",
    "leaderboard",
    "format_leaderboard",
    "rating_text",
    "BoardQuery",
    "parse_query",
    "SOURCES",
]

# MIN_BATTLES (from results): fewer battles than this and a policy is listed apart ("too few battles").
ANCHOR = "random"
"""The policy pinned at 1000 when it has played."""

Period = Literal["tournament", "day"]
SOURCES = ("played", "tournament", "training", "branch", "imported", "ladder")
"""The recordings' source kinds (``SourceInfo.kind``), the ``--source`` / Source filter's choices."""
_FORMAT_RE = re.compile(r"^[a-z0-9]{1,60}$")
_SINCE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}(:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?")
"""An ISO date or time, the whole text (``2025-01-01' OR 1=1 --`` was read as its first ten characters)."""


@dataclass(frozen=True)
class BoardQuery:
    """Which battles a table is over and how it is cut: what the CLI's options and the tab's filters read to."""

    format: str | None = None
    since: str | None = None
    sources: tuple[str, ...] | None = None
    min_battles: int = MIN_BATTLES
    period: Period = "tournament"


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else "" if value is None else str(value).strip()


def parse_query(format_id: Any = None, since: Any = None, sources: Any = None, min_battles: Any = MIN_BATTLES,
                period: Any = "tournament") -> BoardQuery:
    """Filters as typed (blank or ``all`` = no filter; sources a list or comma-separated text), checked: anything
    unusable is an `InputError` with one line saying what."""
    typed = _text(format_id).lower()
    fmt = None if typed in ("", "all") else typed
    if fmt is not None and not _FORMAT_RE.match(fmt):
        raise InputError(f"format must be a format id such as gen9randombattle, not {_text(format_id)[:40]!r}")
    day = _text(since) or None
    if day is not None:
        try:
            if not _SINCE_RE.fullmatch(day):
                raise ValueError(day)
            datetime.fromisoformat(day.replace("Z", "+00:00"))
        except ValueError:
            raise InputError(f"since takes an ISO date such as 2026-12-01, not {day[:40]!r}") from None
    if isinstance(sources, str):
        sources = sources.split(",")
    kinds = tuple(dict.fromkeys(_text(k).lower() for k in (sources or []) if _text(k)))
    unknown = [k for k in kinds if k not in SOURCES and k != "all"]
    if unknown:
        raise InputError(f"unknown source {unknown[0][:40]!r} (one of {', '.join(SOURCES)})")
    wanted = None if not kinds or "all" in kinds else kinds
    try:
        least = int(float(_text(min_battles) or MIN_BATTLES))
    except (TypeError, ValueError):
        raise InputError(f"minimum battles must be a whole number, not {_text(min_battles)[:40]!r}") from None
    if not 1 <= least <= 1_000_000:
        raise InputError("minimum battles must be between 1 and 1000000")
    chosen = _text(period) or "tournament"
    if chosen not in ("tournament", "day"):
        raise InputError(f"rating period must be tournament or day, not {chosen[:40]!r}")
    return BoardQuery(fmt, day, wanted, least, "day" if chosen == "day" else "tournament")


@dataclass(frozen=True)
class LeaderRow:
    """One policy's line. Rating fields as in a tournament's table (``rating_open``: a side the data leave open)."""

    policy: str
    battles: int
    wins: int
    losses: int
    ties: int
    win_rate: float
    ci_low: float
    ci_high: float
    decisions: int
    illegal: int
    illegal_rate: float
    rating: float
    rating_low: float
    rating_high: float
    rating_method: str
    rating_open: str | None
    glicko: float
    glicko_rd: float


@dataclass(frozen=True)
class MatrixCell:
    """One pairing's record from ``a``'s side (``a`` sorts first), with the Wilson interval of a's score."""

    a: str
    b: str
    games: int
    wins_a: int
    wins_b: int
    ties: int
    score_a: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Leaderboard:
    """The table (strongest first), the policies with too few battles, and the per-pair matrix."""

    battles: int
    anchor: str | None
    rows: list[LeaderRow]
    too_few: list[LeaderRow]
    matrix: list[MatrixCell]
    min_battles: int
    period: Period

    def to_dict(self) -> dict[str, Any]:
        def clean(row: LeaderRow) -> dict[str, Any]:
            d = asdict(row)
            for key in ("win_rate", "ci_low", "ci_high", "illegal_rate"):
                d[key] = round(d[key], 4)
            for key in ("rating", "rating_low", "rating_high", "glicko", "glicko_rd"):
                d[key] = round(d[key], 2)
            if open_low(row.rating_open):
                d["rating_low"] = None
            if open_high(row.rating_open):
                d["rating_high"] = None
            return d

        return {
            "battles": self.battles,
            "anchor": self.anchor,
            "min_battles": self.min_battles,
            "glicko_period": self.period,
            "rows": [clean(r) for r in self.rows],
            "too_few": [clean(r) for r in self.too_few],
            "matrix": [{**asdict(c), "score_a": round(c.score_a, 4), "ci_low": round(c.ci_low, 4),
                        "ci_high": round(c.ci_high, 4)} for c in self.matrix],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def table_csv(self) -> str:
        """Every policy (``too_few`` ones flagged), one CSV line each; open rating bounds are empty cells."""
        out = io.StringIO()
        names = [f for f in LeaderRow.__dataclass_fields__]
        writer = csv.DictWriter(out, fieldnames=[*names, "too_few"], lineterminator="\n")
        writer.writeheader()
        data = self.to_dict()
        for key, flag in (("rows", False), ("too_few", True)):
            for row in data[key]:
                writer.writerow({**{k: "" if row[k] is None else row[k] for k in names}, "too_few": flag})
        return out.getvalue()

    def matrix_csv(self) -> str:
        out = io.StringIO()
        names = [f for f in MatrixCell.__dataclass_fields__]
        writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        for cell in self.to_dict()["matrix"]:
            writer.writerow(cell)
        return out.getvalue()


def _unit(entry: BattleEntry) -> tuple[int, str, int]:
    """Sort key of a battle's resampling unit: (tournament, pair number) for a pair, else the battle alone."""
    if entry.pair is not None:
        tournament, _, pair = entry.pair.rpartition(":")
        return (0, tournament, int(pair))
    return (1, entry.battle, 0)


def _ratable(entries: Sequence[BattleEntry]) -> list[BattleEntry]:
    return [e for e in sorted(entries, key=lambda e: e.battle) if unratable(e) is None]


def games_of(entries: Sequence[BattleEntry]) -> list[GameResult]:
    """Finished battles as `GameResult`s; a pair key (tournament, pair) becomes one shared `pair_index`.

    Pair indices are numbered in (tournament, pair number) order, so one tournament's battles get exactly the
    pair numbers of its own summary (and the same bootstrap). A battle without a pair is a unit of its own.
    Entries that cannot be a game (`history.unratable`: a mirror match, a blank side, a winner who did not play)
    are left out here too — the scan has already said so — so no history can make the table fail as a whole.
    """
    finished = [e for e in _ratable(entries) if e.reason != "aborted"]
    index = {unit: k for k, unit in enumerate(sorted({_unit(e) for e in finished}))}
    return [GameResult(e.p1, e.p2, index[_unit(e)], e.winner) for e in finished]


def _period_of(entry: BattleEntry, period: Period) -> str:
    day = entry.created[:10] if entry.created else ""
    if period == "day":
        return day
    return f"tournament:{entry.detail}" if entry.source == "tournament" and entry.detail else f"day:{day}"


@dataclass(frozen=True)
class GlickoPoint:
    """A policy's Glicko-2 rating and deviation after one rating period (``battles``: its own in that period;
    0 for a period it sat out, when only its deviation grows)."""

    period: str
    time: str | None
    rating: float
    rd: float
    battles: int


def _periods(entries: Sequence[BattleEntry], period: Period) -> list[tuple[str, str | None, list[BattleEntry]]]:
    """(key, first battle's time, battles) per rating period, in the order of their first battle."""
    periods: dict[str, list[BattleEntry]] = defaultdict(list)
    for e in entries:
        if e.reason != "aborted":
            periods[_period_of(e, period)].append(e)

    def first(key: str) -> tuple[str, str]:
        times = [e.created for e in periods[key] if e.created]
        return (min(times) if times else "", key)

    out = []
    for key in sorted(periods, key=first):
        times = [e.created for e in periods[key] if e.created]
        out.append((key, min(times) if times else None, periods[key]))
    return out


def glicko_history(entries: Sequence[BattleEntry], period: Period = "tournament") -> dict[str, list[GlickoPoint]]:
    """Every policy's Glicko-2 rating after each period from its first one on: the rating over time. The last
    point of each is the table's Glicko-2 column (the same periods, applied one at a time)."""
    history: dict[str, list[GlickoPoint]] = defaultdict(list)
    ratings: dict[str, Any] = {}
    for key, time, battles in _periods(_ratable(entries), period):
        games = games_of(battles)
        ratings = glicko2_run([games], initial=ratings)
        played: dict[str, int] = defaultdict(int)
        for g in games:
            played[g.a] += 1
            played[g.b] += 1
        for policy in sorted(ratings):
            history[policy].append(GlickoPoint(key, time, ratings[policy].rating, ratings[policy].rd,
                                               played.get(policy, 0)))
    return dict(history)


def _glicko(entries: Sequence[BattleEntry], period: Period) -> dict[str, tuple[float, float]]:
    """Glicko-2 after one rating period per tournament (or day), periods ordered by their first battle's time."""
    ordered = [games_of(battles) for _, _, battles in _periods(entries, period)]
    return {p: (r.rating, r.rd) for p, r in glicko2_run(ordered).items()}


def leaderboard(entries: Sequence[BattleEntry], *, min_battles: int = MIN_BATTLES, period: Period = "tournament",
                rounds: int = 1000, seed: int = 0) -> Leaderboard:
    """The leaderboard of ``entries`` (any order; the result depends only on the set of battles; entries that
    cannot be rated, `history.unratable`, are left out)."""
    entries = _ratable(entries)
    games = games_of(entries)
    intervals = shift_intervals(rating_intervals(games, rounds=rounds, seed=seed, base=RATING_BASE, anchor=ANCHOR),
                                ANCHOR)
    glicko = _glicko(entries, period)
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for g in games:
        for player in (g.a, g.b):
            s = score_for(g, player)
            tally[player][0 if s == 1.0 else 1 if s == 0.0 else 2] += 1
    decisions: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in entries:
        if e.reason != "aborted":
            for spec, d, i in ((e.p1, e.decisions_p1, e.illegal_p1), (e.p2, e.decisions_p2, e.illegal_p2)):
                decisions[spec][0] += d
                decisions[spec][1] += i
    rows = []
    for policy, (w, losses, t) in tally.items():
        n = w + losses + t
        lo, hi = wilson_interval(w + 0.5 * t, n)
        r = intervals[policy]
        d, i = decisions[policy]
        rows.append(LeaderRow(policy, n, w, losses, t, (w + 0.5 * t) / n, lo, hi, d, i, i / d if d else 0.0,
                              r.rating, r.low, r.high, r.interval_method, r.open, *glicko[policy]))
    rows.sort(key=lambda r: (-round(r.rating, 6), r.policy))
    matrix = [MatrixCell(s.a, s.b, s.games, s.wins_a, s.wins_b, s.ties, s.win_rate_a, s.ci_low, s.ci_high)
              for s in summarize_pairings(games)]
    return Leaderboard(
        battles=len(games),
        anchor=ANCHOR if ANCHOR in intervals else None,
        rows=[r for r in rows if r.battles >= min_battles],
        too_few=[r for r in rows if r.battles < min_battles],
        matrix=matrix,
        min_battles=min_battles,
        period=period,
    )


def rating_text(row: LeaderRow) -> str:
    """``rating [low, high]``, an end the data leave open written "open" (`intervals.rating_text`)."""
    return interval_text(row.rating, row.rating_low, row.rating_high, row.rating_open)


def format_leaderboard(board: Leaderboard) -> str:
    """The leaderboard as fixed-width text: the table, then the policies with too few battles."""
    head = ("policy", "battles", "W-L-T", "win rate [95% CI]", "illegal", "rating [95% CI]", "Glicko-2 (RD)")

    def line(r: LeaderRow) -> tuple[str, ...]:
        return (r.policy, str(r.battles), f"{r.wins}-{r.losses}-{r.ties}",
                f"{r.win_rate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]", f"{100 * r.illegal_rate:.1f}%",
                rating_text(r), f"{r.glicko:.0f} ({r.glicko_rd:.0f})")

    lines = [f"{board.battles} battles; Bradley–Terry Elo, "
             + (f"{board.anchor} = {RATING_BASE:g}" if board.anchor else f"mean = {RATING_BASE:g}"), ""]
    lines += fixed_width(head, [line(r) for r in board.rows]) if board.rows else ["(no policy has enough battles)"]
    if board.too_few:
        lines += ["", f"too few battles (under {board.min_battles}):"]
        lines += fixed_width(head, [line(r) for r in board.too_few])
    lines += ["", f"note: {GLICKO_ORDER_NOTE}"]
    return "\n".join(lines)
