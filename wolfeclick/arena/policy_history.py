"""One policy's page of the standing leaderboard: its record against every opponent, its rating over time, its
recent battles and what its checkpoint resolved to. Pure: history entries and a `Leaderboard` in, plain data out.

The record is tallied from the same finished battles the table is fitted on (Wilson intervals on the policy's
score, ties counting half), so a page never disagrees with the table it was opened from. What a checkpoint is
comes from the recordings' player metadata as the index kept it (`history.CHECKPOINT_KEYS`): a spec can resolve
to different snapshots over time (a moving ``@main``), so every distinct resolution is listed with its count.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from wolfeclick.arena.history import BattleEntry
from wolfeclick.arena.leaderboard import GlickoPoint, Leaderboard, LeaderRow, Period, glicko_history
from wolfeclick.arena.stats import wilson_interval

__all__ = ["OpponentRecord", "RecentBattle", "CheckpointSeen", "PolicyPage", "policy_page", "RECENT"]

RECENT = 25
"""How many of a policy's battles its page lists, newest first."""


@dataclass(frozen=True)
class OpponentRecord:
    """The policy's record against one opponent, from the policy's side."""

    opponent: str
    games: int
    wins: int
    losses: int
    ties: int
    score: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class RecentBattle:
    """One battle from the policy's side (``result``: win, loss, tie or how an unfinished battle ended)."""

    battle: str
    created: str | None
    format: str
    source: str
    side: str
    opponent: str
    result: str
    reason: str
    turns: int


@dataclass(frozen=True)
class CheckpointSeen:
    """One resolution of the policy's spec as recorded (``details``: the recorded checkpoint keys)."""

    details: dict[str, Any]
    battles: int


@dataclass(frozen=True)
class PolicyPage:
    policy: str
    row: LeaderRow | None
    ranked: bool
    """False when the policy is listed apart (too few battles) or not in the table at all."""
    record: list[OpponentRecord]
    history: list[GlickoPoint]
    recent: list[RecentBattle]
    battles: int
    checkpoints: list[CheckpointSeen]

    def to_dict(self) -> dict[str, Any]:
        def rounded(d: dict[str, Any], keys: Sequence[str], digits: int) -> dict[str, Any]:
            return {**d, **{k: round(d[k], digits) for k in keys}}

        return {
            "policy": self.policy,
            "ranked": self.ranked,
            "row": None if self.row is None else rounded(asdict(self.row), (
                "win_rate", "ci_low", "ci_high", "illegal_rate", "rating", "rating_low", "rating_high", "glicko",
                "glicko_rd"), 4),
            "battles": self.battles,
            "record": [rounded(asdict(r), ("score", "ci_low", "ci_high"), 4) for r in self.record],
            "history": [rounded(asdict(p), ("rating", "rd"), 2) for p in self.history],
            "recent": [asdict(b) for b in self.recent],
            "checkpoints": [asdict(c) for c in self.checkpoints],
        }


def _result(entry: BattleEntry, policy: str) -> str:
    if entry.reason == "aborted":
        return "aborted"
    if entry.winner is None:
        return "tie"
    return "win" if entry.winner == policy else "loss"


def policy_page(entries: Sequence[BattleEntry], board: Leaderboard, policy: str, *, period: Period | None = None,
                recent: int = RECENT) -> PolicyPage:
    """The page of ``policy`` over ``entries`` (the battles ``board`` was computed from)."""
    mine = sorted((e for e in entries if policy in (e.p1, e.p2)), key=lambda e: e.battle)
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    checkpoints: Counter[str] = Counter()
    for e in mine:
        side = "p1" if e.p1 == policy else "p2"
        checkpoints[e.p1_checkpoint if side == "p1" else e.p2_checkpoint] += 1
        if e.reason == "aborted" or e.p1 == e.p2:
            continue
        opponent = e.p2 if side == "p1" else e.p1
        tally[opponent][("win", "loss", "tie").index(_result(e, policy))] += 1
    record = []
    for opponent in sorted(tally):
        w, losses, t = tally[opponent]
        n = w + losses + t
        low, high = wilson_interval(w + 0.5 * t, n)
        record.append(OpponentRecord(opponent, n, w, losses, t, (w + 0.5 * t) / n, low, high))
    newest = sorted(mine, key=lambda e: (e.created or "", e.battle), reverse=True)[:max(0, recent)]
    shown = [RecentBattle(e.battle, e.created, e.format, e.source, "p1" if e.p1 == policy else "p2",
                          e.p2 if e.p1 == policy else e.p1, _result(e, policy), e.reason, e.turns) for e in newest]
    ranked = next((r for r in board.rows if r.policy == policy), None)
    row = ranked or next((r for r in board.too_few if r.policy == policy), None)
    seen = [CheckpointSeen(json.loads(text), n) for text, n in sorted(checkpoints.items(), key=lambda kv: (-kv[1], kv[0]))]
    return PolicyPage(policy=policy, row=row, ranked=ranked is not None, record=record,
                      history=glicko_history(entries, period or board.period).get(policy, []), recent=shown,
                      battles=len(mine), checkpoints=seen)
