"""Analyse a recorded battle: win probability at every decision, option values, turning points and mistakes.

Every estimate is K rollouts (``wolfeclick.analysis.rollout``) from the true simulator state at a decision, each with
its own luck derived from the analysis seed, so the same recording, policy, K and seed give the same numbers at any
concurrency. The options of one decision share their K lucks, so they differ by their choices, not their dice.
The summaries (``turning_points``, ``mistakes``, ``summary_line``) are pure functions of the estimates.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from wolfeclick.analysis.rollout import Forks, Outcome, lean_rollout, prefix_lines, rollout
from wolfeclick.analysis.schema import (
    AnalysedDecision,
    Analysis,
    DecisionOptions,
    Estimate,
    Mistake,
    OptionValue,
    TurningPoint,
)
from wolfeclick.arena.stats import wilson_interval
from wolfeclick.battle.batch import relaxed_gc
from wolfeclick.battle.branch import BranchError, replayable
from wolfeclick.battle.remote import refuse_server_seats
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.policies.base import Policy
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.protocol import SIDES

DEFAULT_K = 64
DEFAULT_MARGIN = 0.15
"""A played option counts as a mistake only if it loses at least this much win probability against the best one
(and the two intervals do not overlap)."""
TURNING_POINTS = 3


class AnalysisStopped(WolfeClickError):
    """The analysis was asked to stop; nothing was written."""


def estimate(outcomes: Iterable[Outcome | str | None], side: str) -> Estimate:
    """Pure: ``side``'s score rate over some rollouts (winners, or outcomes), ties and turn limits counting half."""
    winners = [o.winner if isinstance(o, Outcome) else o for o in outcomes]
    wins = sum(w == side for w in winners)
    draws = sum(w is None for w in winners)
    n = len(winners)
    low, high = wilson_interval(wins + 0.5 * draws, n)
    value = (wins + 0.5 * draws) / n if n else 0.5
    return Estimate(side=side, rollouts=n, wins=wins, losses=n - wins - draws, draws=draws, value=round(value, 6),
                    low=round(low, 6), high=round(high, 6))


def option_table(side: str, values: list[tuple[ActionRecord, Estimate]], played: ActionRecord | None,
                 margin: float) -> DecisionOptions:
    """Pure: the options best first with ranks, the played option's rank and loss, and whether it was a mistake."""
    ordered = sorted(values, key=lambda item: -item[1].value)  # stable: equal values keep the legal order
    options = [OptionValue(action=action, estimate=est, rank=1 + sum(o.value > est.value for _, o in values))
               for action, est in ordered]
    if not options:
        return DecisionOptions(side=side, options=[], played=played, played_rank=None)
    best = options[0].estimate
    mine = next((o for o in options if o.action == played), None)
    if mine is None:
        return DecisionOptions(side=side, options=options, played=played, played_rank=None)
    loss = round(best.value - mine.estimate.value, 6)
    mistake = mine.estimate.high < best.low and loss >= margin
    return DecisionOptions(side=side, options=options, played=played, played_rank=mine.rank, loss=loss,
                           mistake=mistake)


def final_value(winner: str | None) -> float:
    return 1.0 if winner == "p1" else 0.0 if winner == "p2" else 0.5


def turning_points(decisions: list[AnalysedDecision], winner: str | None,
                   most: int = TURNING_POINTS) -> list[TurningPoint]:
    """Pure: the ``most`` largest moves in p1's win probability from one decision to the next (the last decision
    moves to the battle's result), largest first."""
    values = [d.win.value for d in decisions] + [final_value(winner)]
    moves = [TurningPoint(index=d.index, turn=d.turn, before=values[n], after=values[n + 1],
                          swing=round(values[n + 1] - values[n], 6)) for n, d in enumerate(decisions)]
    return sorted(moves, key=lambda m: (-abs(m.swing), m.index))[:most]


def mistakes(decisions: list[AnalysedDecision]) -> list[Mistake]:
    """Pure: every decision whose played option was marked a mistake, in battle order."""
    found = []
    for decision in decisions:
        for side in SIDES:
            table = decision.options.get(side)
            if table is not None and table.mistake:
                found.append(Mistake(index=decision.index, turn=decision.turn, side=side, played=table.played,
                                     best=table.options[0].action, loss=table.loss or 0.0))
    return found


def _played(choice: ActionRecord | None) -> str:
    return f"{choice.action} {choice.choice}" if choice is not None else "default"


def summary_line(analysis: Analysis, recording: Recording) -> str:
    """Pure: one line per battle — who won, where p1 stood at the start, the biggest swing, the mistakes."""
    winner = analysis.winner
    parts = [f"{recording.id}: " + (f"{winner} ({recording.players[winner].policy}) won" if winner else "no winner")]
    if analysis.decisions:
        start = analysis.decisions[0].win
        parts.append(f"p1 at the start {start.value:.2f} [{start.low:.2f}, {start.high:.2f}]")
    if analysis.turning_points:
        top = analysis.turning_points[0]
        parts.append(f"biggest swing at turn {top.turn} (decision {top.index + 1}): {top.before:.2f} → "
                     f"{top.after:.2f}")
    if any(d.options for d in analysis.decisions):
        listed = ", ".join(f"{m.side} turn {m.turn} {_played(m.played)} (−{m.loss:.2f}, best {_played(m.best)})"
                           for m in analysis.mistakes[:3])
        more = f" +{len(analysis.mistakes) - 3} more" if len(analysis.mistakes) > 3 else ""
        parts.append(f"{len(analysis.mistakes)} mistake{'s' if len(analysis.mistakes) != 1 else ''}"
                     + (f": {listed}{more}" if listed else ""))
    return "; ".join(parts)


@dataclass(frozen=True)
class _Task:
    """K rollouts from decision ``step``: the rollout policy's own choice, or ``side`` opening with ``action``."""

    step: int
    side: str | None = None
    action: ActionRecord | None = None

    def key(self) -> tuple[int, str | None, str | None, str | None]:
        return (self.step, self.side, self.action.action if self.action else None,
                self.action.choice if self.action else None)


def option_steps(recording: Recording, sides: Iterable[str], at: Iterable[int] | None = None) -> list[tuple[int, str]]:
    """The (decision, side) pairs whose options are valued: every decision of ``sides`` (or only those in ``at``)."""
    wanted = set(at) if at is not None else None
    return [(turn.index, side) for turn in recording.turns for side in SIDES
            if side in sides and side in turn.decisions and (wanted is None or turn.index in wanted)]


async def _local_outcomes(recording: Recording, policy: Policy, tasks: list[_Task], turns: list[Any], k: int,
                          seed: int, pool: SimPool, concurrency: int, counted: Callable[[int], None],
                          stop: asyncio.Event | None, fork: bool, lean: bool) -> list[Outcome]:
    """The K rollouts of every task on this machine's pool, ``concurrency`` at once, in task order."""
    policies = {side: policy for side in SIDES}
    prefixes = {turn.index: prefix_lines(recording, turn.index) for turn in turns}
    slots = asyncio.Semaphore(max(1, concurrency))
    forks = Forks() if fork else None
    play = lean_rollout if lean else rollout

    async def one(task: _Task, number: int) -> Outcome:
        async with slots:
            if stop is not None and stop.is_set():
                raise AnalysisStopped(f"{recording.id}: the analysis was stopped")
            first = {task.side: task.action} if task.side is not None and task.action is not None else None
            outcome = await play(recording, task.step, policies, process=pool.pick(), seed=seed, number=number,
                                 first=first, prefix=prefixes[task.step], forks=forks)
        counted(1)
        return outcome

    running = [asyncio.ensure_future(one(task, n)) for task in tasks for n in range(k)]
    try:
        with relaxed_gc():  # bulk play, as a batch of battles is
            return list(await asyncio.gather(*running))
    except BaseException:  # one rollout failed (or we were cancelled): the others stop before the pool goes
        for future in running:
            future.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    finally:
        if forks is not None:
            await forks.close()


async def analyse(recording: Recording, policy: Policy, *, pool: SimPool | None = None, k: int = DEFAULT_K,
                  seed: int = 0, options: Iterable[str] = (), at: Iterable[int] | None = None, margin: float = DEFAULT_MARGIN,
                  concurrency: int = 16, progress: Callable[[int, int], None] | None = None,
                  stop: asyncio.Event | None = None, steps: Iterable[int] | None = None,
                  fork: bool = True, lean: bool = True, engine: str = "local",
                  address: str | None = None) -> Analysis:
    """Analyse ``recording`` with ``policy`` playing both sides of every rollout.

    ``options`` names the sides whose options are valued at each of their decisions (``at`` narrows that to some
    decision indices); ``steps`` limits the whole analysis to some decisions; ``progress(done, total)`` is told
    after each rollout; a set ``stop`` cancels what is left. ``fork`` starts rollouts as copies of their decision
    (``rollout.Forks``); without it each replays its prefix. Both play the very same battles. ``lean`` plays
    rollouts for their winner only (``rollout.lean_rollout``); without it each is a full recorded battle, the
    same winner at several times the cost. ``engine="ray"`` plays the rollouts on Ray workers
    (``ray_rollouts``; ``address`` joins a cluster, else a local instance) instead of on ``pool``: the same numbers.
    """
    refuse_server_seats(policy)  # a bot on a Showdown server cannot be asked to play rollouts here
    replayable(recording)
    for name, wanted in (("--at", at), ("steps", steps)):
        outside = sorted(set(wanted or ()) - {turn.index for turn in recording.turns})
        if outside:
            raise BranchError(f"{name} {outside[0]} is not a decision of {recording.id} (it has "
                              f"{len(recording.turns)}: 0 to {len(recording.turns) - 1})")
    chosen = set(steps) if steps is not None else None
    turns = [turn for turn in recording.turns if chosen is None or turn.index in chosen]
    tasks = [_Task(turn.index) for turn in turns]
    for step, side in option_steps(recording, set(options), at):
        if chosen is None or step in chosen:
            tasks += [_Task(step, side, action) for action in recording.turns[step].decisions[side].legal_actions]
    total = len(tasks) * k
    done = 0

    def counted(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    if engine == "ray":
        from wolfeclick.analysis.ray_rollouts import ray_winners

        winners = await ray_winners(recording, policy.spec, [(t.step, t.side, t.action) for t in tasks], k, seed,
                                    fork=fork, lean=lean, address=address, done=counted,
                                    stopped=lambda: stop is not None and stop.is_set())
        by_task: dict[Any, list[Any]] = {task.key(): winners[i] for i, task in enumerate(tasks)}
    elif engine == "local":
        if pool is None:
            raise InputError("a local analysis needs a simulator pool")
        results = await _local_outcomes(recording, policy, tasks, turns, k, seed, pool, concurrency, counted, stop,
                                        fork, lean)
        by_task = {task.key(): results[i * k:(i + 1) * k] for i, task in enumerate(tasks)}
    else:
        raise InputError(f"engine must be local or ray, not {engine[:20]!r}")
    decisions = []
    for turn in turns:
        tables = {}
        for side in SIDES:
            values = [(t.action, estimate(by_task[t.key()], side)) for t in tasks
                      if t.step == turn.index and t.side == side and t.action is not None]
            if values:
                tables[side] = option_table(side, values, turn.decisions[side].action, margin)
        decisions.append(AnalysedDecision(index=turn.index, turn=turn.turn, deciding=list(turn.deciding),
                                          win=estimate(by_task[_Task(turn.index).key()], "p1"), options=tables))
    return Analysis(recording=recording.id, policy=policy.spec, k=k, seed=seed, margin=margin,
                    winner=recording.result.winner, decisions=decisions,
                    turning_points=turning_points(decisions, recording.result.winner), mistakes=mistakes(decisions))
