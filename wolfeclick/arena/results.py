"""Tournament results: one JSON row per finished battle, its type, and reading, checking and ordering rows. Pure; no
I/O. What is derived from rows (standings, tables, charts) is ``wolfeclick.arena.standings``.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TypeVar, cast

from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from wolfeclick.arena.schedule import ScheduledBattle, TournamentConfig, build_schedule
from wolfeclick.arena.sprt import SprtResult, sprt
from wolfeclick.arena.stats import (
    GameResult,
    score_for,
)
from wolfeclick.battle.schema import Recording
from wolfeclick.errors import InputError
from wolfeclick.sides import SIDES, Side, other

__all__ = [
    "Rewards",
    "SideRewards",
    "SideCounts",
    "ResultRow",
    "ROW_KEYS",
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
