"""Standings from tournament rows: per-policy and per-pairing summaries with intervals, ratings and verdicts, the
fixed-width table and the charts. Pure; no I/O.

Rows themselves (their type, reading, checking, ordering) are ``wolfeclick.arena.results``; this module only reads
them. Every interval has one coverage (``LEVEL``) and the bootstrap one fixed seed, so the same rows always give the
same standings.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from wolfeclick.arena.intervals import rating_text, shown_bounds
from wolfeclick.arena.ratings import ModelFit, RatingInterval, model_fit, rating_intervals
from wolfeclick.arena.results import ResultRow, canonical_rows, game_results, sprt_status
from wolfeclick.arena.schedule import TournamentConfig, build_schedule
from wolfeclick.arena.sprt import SPRT_METHOD, SprtResult
from wolfeclick.arena.stats import (
    WILSON,
    GameResult,
    PairedSummary,
    PairingSummary,
    pair_scores,
    paired_summary,
    score_for,
    summarize_pairings,
    wilson_interval,
)
from wolfeclick.arena.verdicts import EQUIVALENCE_ELO, REPEATED_LOOKS, Verdict, pairing_verdict, score_to_elo
from wolfeclick.sides import SIDES

__all__ = [
    "BOOTSTRAP_ROUNDS",
    "BOOTSTRAP_SEED",
    "LEVEL",
    "RATING_BASE",
    "PolicyRow",
    "PairingRow",
    "TournamentSummary",
    "summary_from_rows",
    "format_table",
    "charts_from_rows",
    "MIN_BATTLES",
    "established",
    "shift_to_anchor",
    "shift_intervals",
    "fixed_width",
]

BOOTSTRAP_ROUNDS = 1000
"""Bootstrap refits for the rating intervals (about 0.15 s for three policies; skipped under separation)."""
LEVEL = 0.95
"""Coverage of every interval in the table and ``summary.json``."""
BOOTSTRAP_SEED = 0
"""Fixed, so the same rows always give the same intervals."""
RATING_BASE = 1000.0
"""The anchor policy's rating (``random`` when it plays); otherwise the field's mean rating."""

@dataclass(frozen=True)
class PolicyRow:
    """One line of the final table. Win rate counts ties half; its interval is Wilson's over games.

    Ratings are Bradley–Terry on the Elo scale with a 95 % interval relative to the field, shifted so the anchor
    (``random``) is at 1000 (see ``summary_from_rows``). ``rating_method`` says how the interval was made
    (``ratings.BOOTSTRAP_PAIRS``, ``ratings.PROFILE_LIKELIHOOD``, or both joined by "+" when the two ends came from
    different ones); ``rating_open`` ("above", "below", "both" or None) names a side the data leave unbounded, where
    the number shown is the prior's alone.
    """

    policy: str
    battles: int
    wins: int
    losses: int
    ties: int
    win_rate: float
    ci_low: float
    ci_high: float
    rating: float
    rating_low: float
    rating_high: float
    illegal: int
    rating_method: str = ""
    rating_open: str | None = None


@dataclass(frozen=True)
class PairingRow:
    """One pairing, per game (Wilson) and per pair (pentanomial), from the first-sorted policy ``a``'s view,
    with its plain-words ``verdict`` (read from the paired interval)."""

    games: PairingSummary
    pairs: PairedSummary
    verdict: Verdict


@dataclass(frozen=True)
class TournamentSummary:
    """Everything the table, ``summary.json`` and the charts need.

    ``scheduled`` is the number of battles in the schedule (None without a config); ``complete`` is True once
    every scheduled battle has a row or the SPRT has stopped the tournament. ``table`` is sorted strongest first.
    """

    tournament: str | None
    scheduled: int | None
    battles: int
    aborted: int
    complete: bool
    table: list[PolicyRow]
    pairings: list[PairingRow]
    ratings: dict[str, tuple[float, float, float]]
    sprt: SprtResult | None
    sprt_policies: tuple[str, str] | None
    rating_anchor: str | None = None
    fit: ModelFit | None = None

    @property
    def notes(self) -> list[str]:
        """What the tables need said beside them: policies listed below the rest for too few battles, a
        Bradley–Terry fit that fails (a cycle), and that the verdicts are fixed-sample tests."""
        out = []
        late = [row.policy for row in self.table if not established(row, self.table)]
        if late:
            out.append(f"Fewer than {MIN_BATTLES} battles, listed below the rest whatever their rating: "
                       + ", ".join(late) + ".")
        if self.fit is not None and not self.fit.fits:
            out.append(self.fit.text())
        if self.pairings:
            out.append(REPEATED_LOOKS)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, floats rounded (4 places; ratings and Elo 2) so files stay readable and stable.

        Every interval also appears as an object ``{"low", "high", "level", "interval_method"}`` (``win_rate_
        interval``, ``rating_interval`` with ``open``, ``interval``, ``pair_interval``, ``elo_interval``); a bound
        the data leave open is ``null``. The flat ``ci_low``/``rating_low``/… fields are kept for older readers.
        """

        def r4(x: float) -> float:
            return round(float(x), 4)

        def r2(x: float | None) -> float | None:
            return None if x is None else round(float(x), 2)

        def interval(low: float | None, high: float | None, method: str, **extra: Any) -> dict[str, Any]:
            return {"low": low, "high": high, "level": LEVEL, "interval_method": method, **extra}

        def policy(row: PolicyRow) -> dict[str, Any]:
            low, high = shown_bounds(row.rating_low, row.rating_high, row.rating_open, 2)
            return {
                **asdict(row), "win_rate": r4(row.win_rate), "ci_low": r4(row.ci_low), "ci_high": r4(row.ci_high),
                "rating": round(row.rating, 2), "rating_low": low, "rating_high": high,
                "win_rate_interval": interval(r4(row.ci_low), r4(row.ci_high), WILSON),
                "rating_interval": interval(low, high, row.rating_method, open=row.rating_open),
            }

        def pairing(p: PairingRow) -> dict[str, Any]:
            return {
                "a": p.games.a, "b": p.games.b, "games": p.games.games, "wins_a": p.games.wins_a,
                "wins_b": p.games.wins_b, "ties": p.games.ties, "win_rate_a": r4(p.games.win_rate_a),
                "ci_low": r4(p.games.ci_low), "ci_high": r4(p.games.ci_high),
                "interval": interval(r4(p.games.ci_low), r4(p.games.ci_high), p.games.interval_method),
                "pairs": p.pairs.pairs, "pair_counts": list(p.pairs.counts), "pair_mean_a": r4(p.pairs.mean),
                "pair_ci_low": r4(p.pairs.ci_low), "pair_ci_high": r4(p.pairs.ci_high),
                "pair_interval": interval(r4(p.pairs.ci_low), r4(p.pairs.ci_high), p.pairs.interval_method),
                "elo_a": r2(score_to_elo(p.pairs.mean)),
                "elo_interval": interval(r2(score_to_elo(p.pairs.ci_low)), r2(score_to_elo(p.pairs.ci_high)),
                                         p.pairs.interval_method),
                "verdict": p.verdict.to_dict(),
            }

        return {
            "tournament": self.tournament,
            "scheduled": self.scheduled,
            "battles": self.battles,
            "aborted": self.aborted,
            "complete": self.complete,
            "rating_scale": (f"Bradley-Terry Elo, {self.rating_anchor} = {RATING_BASE:g}; intervals relative to "
                             "the field" if self.rating_anchor else f"Bradley-Terry Elo, mean = {RATING_BASE:g}"),
            "table": [policy(row) for row in self.table],
            "pairings": [pairing(p) for p in self.pairings],
            "model_fit": None if self.fit is None or self.fit.p_value is None else {
                "test": "pearson-chi2", "statistic": r4(self.fit.statistic), "df": self.fit.df,
                "p_value": r4(self.fit.p_value), "fits": self.fit.fits},
            "notes": self.notes,
            "sprt": None if self.sprt is None else {
                "a": self.sprt_policies[0] if self.sprt_policies else None,
                "b": self.sprt_policies[1] if self.sprt_policies else None,
                "decision": self.sprt.decision, "llr": r4(self.sprt.llr), "lower": r4(self.sprt.lower),
                "upper": r4(self.sprt.upper), "pairs": self.sprt.pairs, "message": self.sprt_message,
                "method": SPRT_METHOD,
            },
        }

    def to_json(self) -> str:
        """``summary.json`` text: sorted keys, two-space indent, trailing newline."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @property
    def sprt_message(self) -> str | None:
        """The SPRT's verdict with A and B named, e.g. ``"A = heuristic, B = random. Stopped after 9 pairs: …"``."""
        if self.sprt is None:
            return None
        a, b = self.sprt_policies or ("A", "B")
        return f"SPRT with A = {a}, B = {b}. {self.sprt.message}"


def _per_policy(games: Sequence[GameResult], rows: Sequence[ResultRow],
                ratings: Mapping[str, RatingInterval]) -> list[PolicyRow]:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for g in games:
        for player in (g.a, g.b):
            score = score_for(g, player)
            tally[player][0 if score == 1.0 else 1 if score == 0.0 else 2] += 1
    illegal: dict[str, int] = defaultdict(int)
    for row in rows:
        for side in SIDES:
            illegal[row[side]] += int(row["illegal"][side])
    out: list[PolicyRow] = []
    for policy, (wins, losses, ties) in tally.items():
        n = wins + losses + ties
        lo, hi = wilson_interval(wins + 0.5 * ties, n)
        r = ratings[policy]
        out.append(PolicyRow(policy, n, wins, losses, ties, (wins + 0.5 * ties) / n, lo, hi, r.rating, r.low, r.high,
                             illegal[policy], r.interval_method, r.open))
    return sorted(out, key=lambda r: (not established(r, out), -round(r.rating, 6), r.policy))


MIN_BATTLES = 10
"""A policy with fewer battles than this, while others have at least this many, is ranked below all of them."""


def established(row: PolicyRow, table: Sequence[PolicyRow]) -> bool:
    """Whether ``row`` ranks with the rest: it has `MIN_BATTLES` battles, or nobody in ``table`` has.

    A policy that won the one game it played rates above the field on its prior alone (``1188 [780, open]``); it is
    listed under the policies with enough battles to be placed, whatever its point rating.
    """
    return row.battles >= MIN_BATTLES or all(r.battles < MIN_BATTLES for r in table)


def shift_to_anchor(ratings: dict[str, tuple[float, float, float]],
                    anchor: str | None) -> dict[str, tuple[float, float, float]]:
    """Shift (rating, low, high) triples so ``anchor``'s rating is ``RATING_BASE``; unchanged if it did not play."""
    if anchor is None or anchor not in ratings:
        return ratings
    offset = RATING_BASE - ratings[anchor][0]
    return {name: (r + offset, low + offset, high + offset) for name, (r, low, high) in ratings.items()}


def shift_intervals(ratings: Mapping[str, RatingInterval], anchor: str | None) -> dict[str, RatingInterval]:
    """`shift_to_anchor` for `RatingInterval`s: the same offset on rating and both bounds, methods kept."""
    shifted = shift_to_anchor({name: (r.rating, r.low, r.high) for name, r in ratings.items()}, anchor)
    return {name: replace(ratings[name], rating=r, low=low, high=high) for name, (r, low, high) in shifted.items()}


def summary_from_rows(rows: Iterable[ResultRow], config: TournamentConfig | None = None,
                      *, anchor: str | None = "random", bootstrap_rounds: int = BOOTSTRAP_ROUNDS,
                      margin: float = EQUIVALENCE_ELO) -> TournamentSummary:
    """Summarise rows (in any order; duplicates by index collapse). With ``config``: the SPRT verdict, the
    scheduled count and the SPRT cut-off are applied, exactly as for ``results.jsonl``.

    Ratings: fitted centred on the field's mean, with intervals from ``ratings.rating_intervals`` (bootstrap by
    pair, or the profile likelihood under separation), then the whole scale is shifted so that the ``anchor``
    policy's point rating is 1000 when it played (``random`` by default; ``None`` keeps mean 1000). The intervals
    are the mean-centred ones, shifted alike: each says how well a policy is placed relative to the field.
    Pinning the anchor inside every bootstrap round instead would give it a zero-width interval and load every
    other interval with the whole uncertainty of its gap to ``random``, which almost never wins.
    Each pairing gets its verdict (``verdicts.pairing_verdict``) from the paired interval, ``margin`` being the
    equivalence test's δ in Elo. Under separation the intervals are placed against ``ratings.reference_field``
    (the anchor's connected group), so a newcomer nobody has beaten opens its own interval only.
    """
    ordered = canonical_rows(rows, config)
    games = game_results(ordered)
    intervals = shift_intervals(rating_intervals(games, rounds=bootstrap_rounds, seed=BOOTSTRAP_SEED,
                                                 base=RATING_BASE, level=LEVEL, anchor=anchor), anchor)
    ratings = {name: (r.rating, r.low, r.high) for name, r in intervals.items()}
    scores = pair_scores(games)
    pairing_rows = []
    for s in summarize_pairings(games):
        paired = paired_summary(scores.get((s.a, s.b), []), level=LEVEL)
        pairing_rows.append(PairingRow(s, paired, pairing_verdict(s.a, s.b, paired, level=LEVEL, margin=margin)))
    status = sprt_status(ordered, config) if config is not None else None
    scheduled = len(build_schedule(config)) if config is not None else None
    complete = scheduled is not None and (len(ordered) == scheduled or (status is not None and status[1] is not None))
    return TournamentSummary(
        tournament=config.id if config is not None else (ordered[0]["tournament"] if ordered else None),
        scheduled=scheduled,
        battles=len(ordered),
        aborted=sum(1 for row in ordered if row["reason"] == "aborted"),
        complete=complete,
        table=_per_policy(games, ordered, intervals),
        pairings=pairing_rows,
        ratings=dict(sorted(ratings.items())),
        rating_anchor=anchor if anchor is not None and anchor in ratings else None,
        sprt=status[0] if status is not None else None,
        sprt_policies=config.sprt_policies if config is not None else None,
        fit=model_fit(games),
    )


def _rating_cell(row: PolicyRow) -> str:
    """``1547 [1350, open]``: the side the data leave unbounded reads "open", not the prior's number."""
    return rating_text(row.rating, row.rating_low, row.rating_high, row.rating_open)


def fixed_width(head: Sequence[str], body: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """Rows as aligned text: the first ``left`` columns left-aligned, the rest right-aligned, a rule under the head."""
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = []
    for line in [head, *body]:
        cells = [cell.ljust(w) if k < left else cell.rjust(w) for k, (cell, w) in enumerate(zip(line, widths))]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def format_table(summary: TournamentSummary) -> str:
    """The final tables as fixed-width text.

    First per policy: battles, W-L-T, win rate [95 %], rating [95 %] ("open" where the data set no bound).
    Then per pairing: A's record, pairs, A's score per game with the paired interval, and the verdict.
    """
    lines = fixed_width(
        ("policy", "battles", "W-L-T", "win rate [95% CI]", "rating [95% CI]"),
        [(row.policy, str(row.battles), f"{row.wins}-{row.losses}-{row.ties}",
          f"{row.win_rate:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]", _rating_cell(row))
         for row in summary.table])
    if summary.pairings:
        lines.append("")
        lines += fixed_width(
            ("pairing (A vs B)", "A: W-L-T", "pairs", "A score/game [95% CI, by pair]", "verdict"),
            [(f"{p.games.a} vs {p.games.b}", f"{p.games.wins_a}-{p.games.wins_b}-{p.games.ties}",
              str(p.pairs.pairs), f"{p.pairs.mean:.3f} [{p.pairs.ci_low:.3f}, {p.pairs.ci_high:.3f}]",
              p.verdict.text)
             for p in summary.pairings], left=1)
    notes = summary.notes
    if notes:
        lines += ["", *(f"note: {note}" for note in notes)]
    return "\n".join(lines)


def charts_from_rows(rows: Iterable[ResultRow], summary: TournamentSummary | None = None,
                     config: TournamentConfig | None = None, *, anchor: str | None = None) -> dict[str, Any]:
    """Plotly figures for the Compare tab, keyed ``win_rate``, ``heatmap``, ``ratings``, ``length``, ``illegal``.

    Pass the ``summary`` already computed for these rows to skip a second bootstrap. Battle lengths and illegal
    counts are listed under both policies of a battle; titles give the true battle count.
    """
    from wolfeclick.arena.charts import (
        battle_length_chart,
        illegal_actions_chart,
        ratings_chart,
        win_heatmap,
        win_rate_chart,
    )

    ordered = [row for row in canonical_rows(rows, config) if row["reason"] != "aborted"]
    if summary is None:
        summary = summary_from_rows(ordered, config, anchor=anchor)
    n = len(ordered)
    lengths: dict[str, list[int]] = defaultdict(list)
    illegal: dict[str, list[int]] = defaultdict(list)
    for row in ordered:
        for side in SIDES:
            lengths[row[side]].append(int(row["turns"]))
            illegal[row[side]].append(int(row["illegal"][side]))
    games = [p.games for p in summary.pairings]
    players = [row.policy for row in summary.table]
    return {
        "win_rate": win_rate_chart(games, n, {(p.games.a, p.games.b): p.pairs for p in summary.pairings}),
        "heatmap": win_heatmap(games, players, n),
        "ratings": ratings_chart(summary.ratings, n, {row.policy: row.rating_open for row in summary.table}, players),
        "length": battle_length_chart(dict(lengths), n),
        "illegal": illegal_actions_chart(dict(illegal), n),
    }
