"""Tournament results: one JSON row per finished battle, and everything derived from rows. Pure; no I/O.

A *row* is a `ResultRow` (one line of ``progress.jsonl`` / ``results.jsonl``), a typed dict::

    {"tournament": id, "index": 7, "pairing": 1, "pair": 2, "game": 1, "seed": 123, "p1": "heuristic",
     "p2": "random", "winner": "heuristic" | null, "winner_side": "p1" | null, "reason": "win", "turns": 31,
     "rewards": {"p1": {"shaped", "outcome", "total"}, "p2": {…}}, "decisions": {"p1": 40, "p2": 38},
     "illegal": {"p1": 0, "p2": 0}, "recording": recording id, "error": null}

A TypedDict rather than a model: a row stays the dict that is written, so writing costs nothing and the bytes
cannot drift, while mypy checks every key a reader takes; ``parse_rows`` checks each line read against the same
type (pydantic, strict), so a hand-edited file is refused at the door in one line, not deep inside a chart.

Rows hold no timestamps or latencies, and are written with sorted keys, so the same battle always gives the same
bytes. Aborted battles (simulator trouble) are kept as rows but left out of every statistic; a battle stopped at the
turn cap, or a tie, counts half a win to each side.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, TypeVar, cast

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from wolfeclick.arena.intervals import rating_text, shown_bounds
from wolfeclick.arena.ratings import ModelFit, RatingInterval, model_fit, rating_intervals
from wolfeclick.arena.schedule import ScheduledBattle, TournamentConfig, build_schedule
from wolfeclick.arena.sprt import SPRT_METHOD, SprtResult, sprt
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
from wolfeclick.battle.schema import Recording
from wolfeclick.errors import InputError
from wolfeclick.sides import SIDES, Side, other

__all__ = [
    "Rewards",
    "SideRewards",
    "SideCounts",
    "ResultRow",
    "ROW_KEYS",
    "BOOTSTRAP_ROUNDS",
    "BOOTSTRAP_SEED",
    "BattleFacts",
    "battle_facts",
    "swap_seats",
    "result_row",
    "row_line",
    "parse_rows",
    "check_rows",
    "canonical_rows",
    "game_results",
    "sprt_status",
    "PolicyRow",
    "PairingRow",
    "TournamentSummary",
    "summary_from_rows",
    "format_table",
    "charts_from_rows",
]

_V = TypeVar("_V")

_STRICT = ConfigDict(extra="forbid", strict=True)
"""Rows as written: every key, no other, no coercion (a bool is not a count, "31" is not a number)."""


@with_config(_STRICT)
class Rewards(TypedDict):
    """One side's reward totals over the battle (``Recording.reward_totals``)."""

    shaped: float
    outcome: float
    total: float


@with_config(_STRICT)
class SideRewards(TypedDict):
    p1: Rewards
    p2: Rewards


@with_config(_STRICT)
class SideCounts(TypedDict):
    p1: int
    p2: int


@with_config(_STRICT)
class ResultRow(TypedDict):
    """One finished battle of a tournament: its place in the schedule and its result (see the module docstring)."""

    tournament: str
    index: int
    pairing: int
    pair: int
    game: int
    seed: int
    p1: str
    p2: str
    winner: str | None
    winner_side: Side | None
    reason: str
    turns: int
    rewards: SideRewards
    decisions: SideCounts
    """Decisions each side made."""
    illegal: SideCounts
    """Of which illegal."""
    recording: str
    error: str | None


ROW_KEYS = frozenset(ResultRow.__required_keys__)
_ROW = TypeAdapter(ResultRow)

BOOTSTRAP_ROUNDS = 1000
"""Bootstrap refits for the rating intervals (about 0.15 s for three policies; skipped under separation)."""
LEVEL = 0.95
"""Coverage of every interval in the table and ``summary.json``."""
BOOTSTRAP_SEED = 0
"""Fixed, so the same rows always give the same intervals."""
RATING_BASE = 1000.0
"""The anchor policy's rating (``random`` when it plays); otherwise the field's mean rating."""

@dataclass(frozen=True)
class BattleFacts:
    """What a result row needs of a finished battle: a few numbers instead of its recording (``battle_facts``).

    Small and picklable, so an engine playing in another process sends these, not the recording.
    """

    recording: str
    """The recording's id (the row's ``recording`` until the file is saved, maybe under a free id)."""
    winner_side: Side | None
    reason: str
    turns: int
    error: str | None
    rewards: dict[Side, dict[str, float]]
    decisions: dict[Side, int]
    """Decisions each side made."""
    illegal: dict[Side, int]
    """Of which illegal (replaced by a legal default)."""


def battle_facts(recording: Recording) -> BattleFacts:
    """The row's facts of ``recording``: its result, reward totals and each side's decision and illegal counts."""
    decisions = dict.fromkeys(SIDES, 0)
    illegal = dict.fromkeys(SIDES, 0)
    for turn in recording.turns:
        for side, decision in turn.decisions.items():
            if side in decisions:
                decisions[side] += 1
                illegal[side] += bool(decision.illegal)
    result = recording.result
    return BattleFacts(recording.id, result.winner, result.reason, result.turns, result.error,
                       recording.reward_totals(), decisions, illegal)


def swap_seats(facts: BattleFacts) -> BattleFacts:
    """``facts`` with p1 and p2 exchanged: a battle whose server seated the players the other way round from the
    schedule (Showdown seats the challenger as p1), told in the schedule's seats."""

    def swap(per_side: dict[Side, _V]) -> dict[Side, _V]:
        return {other(side): value for side, value in per_side.items()}

    winner = other(facts.winner_side) if facts.winner_side else None
    return replace(facts, winner_side=winner, rewards=swap(facts.rewards), decisions=swap(facts.decisions),
                   illegal=swap(facts.illegal))


def _side_rewards(rewards: Mapping[Side, Mapping[str, float]]) -> SideRewards:
    def one(side: Side) -> Rewards:
        totals = rewards[side]
        return {"shaped": totals["shaped"], "outcome": totals["outcome"], "total": totals["total"]}

    return {"p1": one("p1"), "p2": one("p2")}


def result_row(tournament_id: str, battle: ScheduledBattle, facts: BattleFacts) -> ResultRow:
    """The row of a finished battle, from its ``battle_facts``."""
    side = facts.winner_side
    return {
        "tournament": tournament_id,
        "index": battle.index,
        "pairing": battle.pairing,
        "pair": battle.pair,
        "game": battle.game,
        "seed": battle.seed,
        "p1": battle.p1,
        "p2": battle.p2,
        "winner": {"p1": battle.p1, "p2": battle.p2}[side] if side else None,
        "winner_side": side,
        "reason": facts.reason,
        "turns": facts.turns,
        "rewards": _side_rewards(facts.rewards),
        "decisions": {"p1": facts.decisions["p1"], "p2": facts.decisions["p2"]},
        "illegal": {"p1": facts.illegal["p1"], "p2": facts.illegal["p2"]},
        "recording": facts.recording,
        "error": facts.error,
    }


def row_line(row: ResultRow) -> str:
    """A row as one canonical JSON line (sorted keys, no spaces), newline included."""
    return json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def _row_problem(error: ValidationError) -> str:
    """The first thing wrong with a row, as ``key 'decisions.p1': input should be a valid integer``."""
    problems = error.errors(include_url=False)
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"key {where!r}: {first['msg'][:1].lower()}{first['msg'][1:]}{more}"


def parse_rows(text: str, name: str = "result rows") -> tuple[list[ResultRow], bool]:
    """Rows of a JSON-lines file, and whether a torn last line (a crash mid-write) was dropped.

    Only the last line may be torn (not JSON: a line cut short never is); any other bad line, or any line that is
    not a `ResultRow` (a key missing or extra, a value of the wrong type), raises InputError, one line naming
    ``name`` (the file), the line and the key. Each row is returned as read, not as validated: the check converts
    nothing (an ``outcome`` of ``0`` stays ``0``), so rows written back give the same bytes.
    """
    lines = text.split("\n")
    rows: list[ResultRow] = []
    torn = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            if number == len(lines) and not text.endswith("\n"):
                torn = True
                break
            raise InputError(f"{name} line {number} is not a result row: {str(exc).splitlines()[0]}") from None
        if not isinstance(row, dict):
            raise InputError(f"{name} line {number} is not a result row: not a JSON object")
        try:
            _ROW.validate_python(row)
        except ValidationError as exc:
            raise InputError(f"{name} line {number} is not a result row: {_row_problem(exc)}") from None
        rows.append(cast(ResultRow, row))
    return rows, torn


def check_rows(rows: Iterable[ResultRow], config: TournamentConfig) -> None:
    """Raise InputError unless every row is a battle of ``config``'s schedule (same id, index, seed and seats)."""
    schedule = build_schedule(config)
    for row in rows:
        index = row["index"]
        if row["tournament"] != config.id:
            raise InputError(f"a result row belongs to tournament {row['tournament']!r}, not {config.id!r}")
        if not 0 <= index < len(schedule):
            raise InputError(f"result row index {index!r} is outside this tournament's {len(schedule)} battles")
        battle = schedule[index]
        if (row["seed"], row["p1"], row["p2"], row["pair"], row["game"]) != (
                battle.seed, battle.p1, battle.p2, battle.pair, battle.game):
            raise InputError(f"result row {index} does not match the schedule (seed or seats differ)")


def game_results(rows: Iterable[ResultRow]) -> list[GameResult]:
    """Rows → `GameResult`s for the statistics (aborted battles left out; `pair_index` is the pair number)."""
    return [
        GameResult(a=row["p1"], b=row["p2"], pair_index=row["pair"], winner=row["winner"])
        for row in rows
        if row["reason"] != "aborted"
    ]


def _scored_pairs(rows: Iterable[ResultRow], a: str, b: str) -> list[tuple[int, float]]:
    """(pair number, A's pair score) for the leading run of pairs whose two games both finished.

    A pair with an aborted game is skipped but does not end the run; the first pair with a game still
    missing does, because a live test must take pairs in order.
    """
    games: dict[int, dict[int, ResultRow]] = defaultdict(dict)
    for row in rows:
        if {row["p1"], row["p2"]} == {a, b}:
            games[row["pair"]][row["game"]] = row
    out: list[tuple[int, float]] = []
    k = 0
    while len(games.get(k, {})) == 2:
        pair = games[k]
        if all(g["reason"] != "aborted" for g in pair.values()):
            out.append((k, sum(score_for(GameResult(g["p1"], g["p2"], k, g["winner"]), a)
                               for g in pair.values())))
        k += 1
    return out


def sprt_status(rows: Iterable[ResultRow], config: TournamentConfig) -> tuple[SprtResult, int | None] | None:
    """The SPRT over the pairs played so far, and the pair number it stopped at (None while undecided).

    None when the config has no SPRT. Pairs are taken in pair-number order, so the stopping point does not
    depend on which battles happened to finish first.
    """
    if config.sprt is None or config.sprt_policies is None:
        return None
    a, b = config.sprt_policies
    scored = _scored_pairs(rows, a, b)
    result = sprt([score for _, score in scored], *config.sprt)
    stop = scored[result.pairs - 1][0] if result.decision is not None else None
    return result, stop


def canonical_rows(rows: Iterable[ResultRow], config: TournamentConfig | None = None) -> list[ResultRow]:
    """Rows sorted by battle index, one per index; after an SPRT stop, only the pairs up to the stopping one.

    This is what ``results.jsonl`` holds: a function of the schedule alone, never of completion order.
    """
    by_index = {row["index"]: row.copy() for row in rows}
    ordered = [by_index[i] for i in sorted(by_index)]
    if config is not None:
        status = sprt_status(ordered, config)
        if status is not None and status[1] is not None:
            ordered = [row for row in ordered if row["pair"] <= status[1]]
    return ordered


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
