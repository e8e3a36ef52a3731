"""Analyse a recorded battle: win probability at every decision, option values, turning points and mistakes.

Every estimate is K rollouts (``wolfeclick.analysis.rollout``) from the true simulator state at a decision, each with
its own luck derived from the analysis seed, so the same recording, policy, K and seed give the same numbers at any
concurrency. The options of one decision share their K lucks, so they differ by their choices, not their dice.
The summaries (``turning_points``, ``mistakes``, ``summary_line``) are pure functions of the estimates.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import Any, Awaitable, Callable, Iterable

from wolfeclick.analysis.racing import DEFAULT_BATCH, Tally, next_round, settled, still_racing, uniform_width
from wolfeclick.analysis.rollout import (
    AnalysisStopped,
    Forks,
    Outcome,
    Worlds,
    lean_rollout,
    prefix_lines,
    rollout,
)
from wolfeclick.analysis.schema import (
    AnalysedDecision,
    Analysis,
    DecisionOptions,
    Estimate,
    Mistake,
    OptionValue,
    TurningPoint,
)
from wolfeclick.analysis.sim_rollout import SimPolicy, sim_rollout
from wolfeclick.arena.stats import Z95, wilson_interval
from wolfeclick.battle.batch import relaxed_gc
from wolfeclick.battle.branch import BranchError, replayable
from wolfeclick.battle.remote import refuse_server_seats
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.errors import InputError
from wolfeclick.policies.base import Policy
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.protocol import SIDES

DEFAULT_K = 64
DEFAULT_MARGIN = 0.15
"""A played option counts as a mistake only if it loses at least this much win probability against the best one
(and the two intervals do not overlap)."""
TURNING_POINTS = 3
SAMPLINGS = ("uniform", "racing")


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
                 margin: float, stopped: Iterable[ActionRecord] = ()) -> DecisionOptions:
    """Pure: the options best first with ranks, the played option's rank and loss, and whether it was a mistake;
    ``stopped`` names the options racing stopped early."""
    early = list(stopped)
    ordered = sorted(values, key=lambda item: -item[1].value)  # stable: equal values keep the legal order
    options = [OptionValue(action=action, estimate=est, rank=1 + sum(o.value > est.value for _, o in values),
                           stopped_early=action in early)
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
    side: Side | None = None
    action: ActionRecord | None = None

    def key(self) -> tuple[int, str | None, str | None, str | None]:
        return (self.step, self.side, self.action.action if self.action else None,
                self.action.choice if self.action else None)


def option_steps(recording: Recording, sides: Iterable[str], at: Iterable[int] | None = None) -> list[tuple[int, Side]]:
    """The (decision, side) pairs whose options are valued: every decision of ``sides`` (or only those in ``at``)."""
    wanted = set(at) if at is not None else None
    return [(turn.index, side) for turn in recording.turns for side in SIDES
            if side in sides and side in turn.decisions and (wanted is None or turn.index in wanted)]


class _Player:
    """Plays rollouts of tasks on this machine's pool, ``concurrency`` at once; rollout *n* of a task is the same
    battle whenever and wherever it is played, so any schedule of them gives the same outcomes."""

    def __init__(self, recording: Recording, policy: Policy, turns: list[Any], seed: int, pool: SimPool,
                 concurrency: int, counted: Callable[[int], None], stop: asyncio.Event | None, fork: bool,
                 lean: bool, worlds: Worlds | None = None) -> None:
        self.recording = recording
        self.policies = {side: policy for side in SIDES}
        self.prefixes = {turn.index: [] if worlds is not None else prefix_lines(recording, turn.index)
                         for turn in turns}
        self.slots = asyncio.Semaphore(max(1, concurrency))
        self.sim = policy if isinstance(policy, SimPolicy) else None
        # a sim: rollout always starts as a copy; so does one from a built world (there is no prefix to replay)
        self.forks = Forks(worlds) if fork or self.sim is not None or worlds is not None else None
        self.play = lean_rollout if lean else rollout
        self.seed = seed
        self.pool = pool
        self.counted = counted
        self.stop = stop

    async def one(self, task: _Task, number: int) -> Outcome:
        """Rollout ``number`` of ``task``, in a slot that ``many`` took for it."""
        if self.stop is not None and self.stop.is_set():
            raise AnalysisStopped(f"{self.recording.id}: the analysis was stopped")
        first = {task.side: task.action} if task.side is not None and task.action is not None else None
        if self.sim is not None and self.forks is not None:  # one request: the simulator plays it out
            outcome = await sim_rollout(self.recording, task.step, self.sim, process=self.pool.pick(),
                                        seed=self.seed, number=number, forks=self.forks,
                                        prefix=self.prefixes[task.step], first=first)
        else:
            outcome = await self.play(self.recording, task.step, self.policies, process=self.pool.pick(),
                                      seed=self.seed, number=number, first=first,
                                      prefix=self.prefixes[task.step], forks=self.forks)
        self.counted(1)
        return outcome

    async def many(self, task: _Task, numbers: range) -> list[Outcome]:
        """Rollouts ``numbers`` of ``task``; each is made only once a slot is free. Made all at once, a whole
        analysis's rollouts waited as tasks (K = 64 with both sides' options: ~30k tasks, their coroutines and
        contexts, ~100 MB in the app; issue 60), where only ``concurrency`` of them can play at a time."""
        running: list[asyncio.Future[Outcome]] = []
        failed: list[bool] = []

        def done(future: asyncio.Future[Outcome]) -> None:  # also for a task cancelled before it ran
            self.slots.release()
            if not future.cancelled() and future.exception() is not None:
                failed.append(True)

        try:
            for number in numbers:
                await self.slots.acquire()
                if failed:  # a rollout failed (or the analysis was stopped): awaiting them below raises it
                    self.slots.release()
                    break
                running.append(asyncio.ensure_future(self.one(task, number)))
                running[-1].add_done_callback(done)
        except BaseException:  # cancelled while waiting for a slot
            await _cancel_all(running)
            raise
        return await _await_all(running)

    async def close(self) -> None:
        if self.forks is not None:
            await self.forks.close()


async def _together(coroutines: list[Any]) -> list[Any]:
    """Await all, in order; if one fails (or we are cancelled), the others stop before the error goes on."""
    return await _await_all([asyncio.ensure_future(c) for c in coroutines])


async def _await_all(running: list[asyncio.Future[Any]]) -> list[Any]:
    """``running``'s results in order; if one fails (or we are cancelled), the others stop before the error goes on."""
    try:
        return list(await asyncio.gather(*running))
    except BaseException:
        await _cancel_all(running)
        raise


async def _cancel_all(running: list[asyncio.Future[Any]]) -> None:
    for future in running:
        future.cancel()
    await asyncio.gather(*running, return_exceptions=True)


def _tally(outcomes: list[Outcome], side: str) -> Tally:
    winners = [o.winner for o in outcomes]
    return Tally(sum(w == side for w in winners) + 0.5 * sum(w is None for w in winners), len(winners))


async def race(fetch: Callable[[int, range], Awaitable[list[Outcome]]], count: int, side: str, k: int,
               batch: int, spread: float = 0.0, z: float = Z95) -> tuple[list[list[Outcome]], list[bool]]:
    """Race ``count`` options of one decision for ``side``: ``fetch(i, numbers)`` plays option ``i``'s rollouts
    ``numbers``; ``spread`` ends the race early (``racing.next_round``); ``z`` sets the intervals that stop options
    (the analysis uses 95%; other values are for measuring). Returns each option's outcomes and which
    options were still racing at the end."""
    outcomes: list[list[Outcome]] = [[] for _ in range(count)]
    live = [True] * count
    while True:
        plan = next_round([_tally(o, side) for o in outcomes], live, k, batch, spread)
        if not any(plan):
            return outcomes, live
        more = await _together([fetch(i, range(len(outcomes[i]), len(outcomes[i]) + plan[i]))
                                for i in range(count) if plan[i]])
        for i, new in zip([i for i in range(count) if plan[i]], more):
            outcomes[i] += new
        live = still_racing([_tally(o, side) for o in outcomes], live, z)


async def settle(fetch: Callable[[range], Awaitable[list[Outcome]]], k: int, batch: int,
                 width: float) -> list[Outcome]:
    """A decision's win probability in rounds of ``batch`` until its interval is ``width`` wide or it has ``k``."""
    outcomes: list[Outcome] = []
    while not settled(_tally(outcomes, "p1"), width, k):
        outcomes += await fetch(range(len(outcomes), min(k, len(outcomes) + batch)))
    return outcomes


async def _local_outcomes(player: _Player, tasks: list[_Task], k: int, sampling: str, batch: int,
                          width: float, spread: float) -> tuple[dict[Any, list[Outcome]], set[Any]]:
    """Every task's rollouts on this machine's pool (K each, or raced) and the keys of options stopped early."""
    stopped: set[Any] = set()
    try:
        with relaxed_gc():  # bulk play, as a batch of battles is
            if sampling == "uniform":
                results = await _together([player.many(task, range(k)) for task in tasks])
                return {task.key(): results[i] for i, task in enumerate(tasks)}, stopped
            groups: dict[tuple[int, Side], list[_Task]] = {}
            for task in tasks:
                if task.side is not None:
                    groups.setdefault((task.step, task.side), []).append(task)
            wins = [task for task in tasks if task.side is None]

            def options_of(group: list[_Task]) -> Callable[[int, range], Awaitable[list[Outcome]]]:
                return lambda i, numbers: player.many(group[i], numbers)

            jobs: list[Awaitable[Any]] = [settle(partial(player.many, task), k, batch, width) for task in wins]
            jobs += [race(options_of(group), len(group), side, k, batch, spread) for (_, side), group in groups.items()]
            done = await _together(jobs)
            by_task = {task.key(): done[i] for i, task in enumerate(wins)}
            for group, (outcomes, live) in zip(groups.values(), done[len(wins):]):
                for task, found, alive in zip(group, outcomes, live):
                    by_task[task.key()] = found
                    if not alive and len(found) < k:
                        stopped.add(task.key())
            return by_task, stopped
    finally:
        await player.close()


async def analyse(recording: Recording, policy: Policy, *, pool: SimPool | None = None, k: int = DEFAULT_K,
                  seed: int = 0, options: Iterable[str] = (), at: Iterable[int] | None = None, margin: float = DEFAULT_MARGIN,
                  concurrency: int = 16, progress: Callable[[int, int], None] | None = None,
                  stop: asyncio.Event | None = None, steps: Iterable[int] | None = None,
                  fork: bool = True, lean: bool = True, engine: str = "local",
                  address: str | None = None, sampling: str = "uniform", batch: int = DEFAULT_BATCH,
                  width: float | None = None, worlds: Worlds | None = None) -> Analysis:
    """Analyse ``recording`` with ``policy`` playing both sides of every rollout.

    ``options`` names the sides whose options are valued at each of their decisions (``at`` narrows that to some
    decision indices); ``steps`` limits the whole analysis to some decisions; ``progress(done, total)`` is told
    after each rollout; a set ``stop`` cancels what is left. ``fork`` starts rollouts as copies of their decision
    (``rollout.Forks``); without it each replays its prefix. Both play the very same battles. ``lean`` plays
    rollouts for their winner only (``rollout.lean_rollout``); without it each is a full recorded battle, the
    same winner at several times the cost. ``engine="ray"`` plays the rollouts on Ray workers
    (``ray_rollouts``; ``address`` joins a cluster, else a local instance) instead of on ``pool``: the same numbers.
    ``sampling="racing"`` (``racing``) plays rounds of ``batch`` rollouts: a decision's options race, each up to
    ``k``, and one whose interval falls wholly below the leader's stops; the race ends when one option is left or
    every live interval fits in a band ``margin`` wide; a win probability stops once its interval is at most
    ``width`` wide (default: the widest uniform K gives). ``"uniform"`` gives everything ``k``. ``worlds`` builds
    each decision in the simulator instead of replaying the recording's input log (a public replay, which has none:
    an inferred state, ``interop.takeover.InferredWorlds``); the analysis then ``sees`` its label.
    """
    if isinstance(policy, SimPolicy) and engine != "local":
        raise InputError(f"{policy.spec} plays inside this machine's simulators only: use --engine local")
    if sampling not in SAMPLINGS:
        raise InputError(f"sampling must be uniform or racing, not {sampling[:20]!r}")
    if sampling == "racing" and engine != "local":
        raise InputError("racing plays on the local engine only; use uniform sampling with --engine ray")
    if batch < 1:
        raise InputError(f"the racing batch must be at least 1, got {batch}")
    target = uniform_width(k) if width is None else width
    refuse_server_seats(policy)  # a bot on a Showdown server cannot be asked to play rollouts here
    if worlds is None:
        replayable(recording)
    elif engine != "local":
        raise InputError("an analysis from an inferred state (a public replay) plays on the local engine only")
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
        stopped: set[Any] = set()
    elif engine == "local":
        if pool is None:
            raise InputError("a local analysis needs a simulator pool")
        player = _Player(recording, policy, turns, seed, pool, concurrency, counted, stop, fork, lean, worlds)
        by_task, stopped = await _local_outcomes(player, tasks, k, sampling, batch, target, margin)
    else:
        raise InputError(f"engine must be local or ray, not {engine[:20]!r}")
    decisions = []
    for turn in turns:
        tables = {}
        for side in SIDES:
            values = [(t.action, estimate(by_task[t.key()], side)) for t in tasks
                      if t.step == turn.index and t.side == side and t.action is not None]
            if values:
                early = [t.action for t in tasks if t.step == turn.index and t.side == side and t.key() in stopped
                         and t.action is not None]
                tables[side] = option_table(side, values, turn.decisions[side].action, margin, early)
        decisions.append(AnalysedDecision(index=turn.index, turn=turn.turn, deciding=list(turn.deciding),
                                          win=estimate(by_task[_Task(turn.index).key()], "p1"), options=tables))
    if progress is not None and sampling == "racing":
        progress(done, done)  # racing finished under its budget
    raced = {"sampling": "racing", "batch": batch, "width": round(target, 6)} if sampling == "racing" else {}
    sees = {"sees": worlds.label} if worlds is not None else {}
    return Analysis(recording=recording.id, policy=policy.spec, k=k, seed=seed, margin=margin, **raced, **sees,
                    winner=recording.result.winner, decisions=decisions,
                    turning_points=turning_points(decisions, recording.result.winner), mistakes=mistakes(decisions))
