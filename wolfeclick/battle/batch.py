"""Many battles at once: a pool of simulator processes, a bounded number in flight, results as they finish.

Placement and timing never change a battle (see the runner), so concurrency only changes how long it takes, and a
battle played again on a fresh simulator (after its first one died) is the same battle.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import time
from dataclasses import dataclass
from typing import AsyncGenerator, Callable, Sequence

from wolfeclick.battle.remote import refuse_server_seats
from wolfeclick.battle.runner import DEFAULT_MAX_TURNS, BattleNotStarted, play_battle
from wolfeclick.battle.schema import Recording, TeamInfo
from wolfeclick.battle.stream import Stream
from wolfeclick.policies.base import Policy
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimPool, default_processes, processes_for

_GC_BATCH_THRESHOLD = (50_000, 50, 100)
_gc_depth = 0
_gc_saved = gc.get_threshold()
_gc_froze = False
_gc_lock = threading.Lock()
"""The app enters bulk play from worker threads (an analysis, a Compare run): the depth and the saved settings
change together."""


@contextlib.contextmanager
def relaxed_gc(freeze: bool = True):  # type: ignore[no-untyped-def]
    """Run Python's cyclic garbage collector less often while battles are being played in bulk.

    poke-env allocates many small objects per turn, so the default gen-0 threshold (700) collects constantly: on
    100 heuristic-vs-random battles this cut the Python side's CPU by ~15% and raised battles/s by ~12%.
    Reference counting still frees almost everything at once; settings are restored when the last batch ends.
    What is alive on entry (poke-env's data tables, imported modules) is frozen out of every collection meanwhile
    (``gc.freeze``), so the passes that do run walk only what the battles made: analysis rollouts, which copy two
    poke-env battles each, spent about a tenth of their Python CPU collecting without it (issue 31). When the last
    bulk run ends, one full collection takes what was frozen and died meanwhile (0.24 s of the app's 210k objects on
    a loaded machine; the CLI's heap is smaller).

    ``freeze=False`` keeps the thresholds and freezes nothing: for one battle at a time in a long-lived process (an
    env episode). What is alive when such a battle starts includes the last battle's players and trackers on their
    way out; frozen, they were never walked, and unfreezing put them in the oldest generation uncounted, so no full
    collection ever came for them (issue 60: ``serve-env`` kept every episode's cyclic garbage, ~16 kB each).
    """
    global _gc_depth, _gc_saved, _gc_froze
    with _gc_lock:
        _gc_depth += 1
        if _gc_depth == 1:
            _gc_saved = gc.get_threshold()
            gc.set_threshold(*_GC_BATCH_THRESHOLD)
            _gc_froze = freeze and gc.get_freeze_count() == 0  # someone else's freeze is theirs to undo
            if _gc_froze:
                gc.freeze()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0:
                gc.set_threshold(*_gc_saved)
                if _gc_froze:
                    gc.unfreeze()
                    # What was frozen and died meanwhile (a long-lived app's dropped sessions, the last job's
                    # results) goes back to the oldest generation uncounted: no full collection would ever come
                    # for it. One now, once per bulk run (issue 60).
                    gc.collect()


class PoolSizer:
    """Grows a batch's pool once, from the CPU this process and the simulators used over a window of the batch
    (``processes_for``).

    The window opens once the simulators have used ``WARM_CPU_S`` of CPU in their lives and ``max(8, 2 × in_flight)``
    battles have finished (so the battles in flight are a steady mix), and closes once the simulators have used
    ``WINDOW_CPU_S`` more. Not sooner and not shorter, for two reasons measured on this 2-core machine (issue 49):
    a fresh simulator's first hundred battles or so cost it up to twice the CPU per turn of later ones (V8 still
    compiling Showdown's code: Python read as 0.5 of the simulator over the first battles, 0.8 after 200), which makes
    it look like the bottleneck; and CPU is counted in clock ticks, so the four-battle window this used to be (about
    0.1 s of CPU at 16 in flight) read the ratio anywhere from 0.40 to 0.64. Both together grew the pool to two
    simulators in 2 of 6 fresh starts, and the batch ran 14% slower than with one. Only the ratio of this process's
    CPU to the simulators' matters to the rule, so no turns are counted. A batch too short to close the window (about
    150 battles of gen9 random battles) keeps one simulator.
    """

    WARM_CPU_S = 3.0
    """Simulator CPU, over its life, before the window opens."""
    WINDOW_CPU_S = 2.0
    """Simulator CPU the window spans: 200 clock ticks, so a tick either way moves the ratio by 1%."""

    def __init__(self, pool: SimPool, in_flight: int) -> None:
        self.pool, self.in_flight = pool, in_flight
        self.opens = max(8, 2 * in_flight)
        self.seen = 0
        self.start: tuple[float, float] | None = None

    def _now(self) -> tuple[float, float]:
        """This process's CPU seconds, and the pool's simulators' over their lives."""
        return time.process_time(), self.pool.cpu()

    async def finished(self) -> bool:
        """Note one finished battle; True once the pool has been sized (nothing more to do)."""
        self.seen += 1
        if self.seen < self.opens:
            return False
        now = self._now()
        if self.start is None:
            if now[1] >= self.WARM_CPU_S:
                self.start = now
            return False
        python, simulators = (later - then for later, then in zip(now, self.start))
        if simulators < self.WINDOW_CPU_S:
            return False
        size = processes_for(os.cpu_count() or 1, python, simulators / max(1, len(self.pool.processes)),
                             self.in_flight)
        if size > len(self.pool.processes):
            await self.pool.grow(size)
        return True


@dataclass(frozen=True)
class BattleJob:
    """One battle to play: who sits where, the format and the seed (and optionally a fixed id)."""

    p1: Policy
    p2: Policy
    format_id: str
    seed: int
    max_turns: int = DEFAULT_MAX_TURNS
    battle_id: str | None = None
    teams: dict[Side, TeamInfo] | None = None
    """Both sides' teams in a given-team format (``TeamDeal.infos(seed)``); None for random battles."""

    def __post_init__(self) -> None:
        refuse_server_seats(self.p1, self.p2)


async def run_jobs(
    jobs: Sequence[BattleJob],
    *,
    concurrency: int = 1,
    processes: int | None = None,
    pool: SimPool | None = None,
    on_done: Callable[[int, Recording], None] | None = None,
    stop: asyncio.Event | None = None,
    replays: int = 0,
    size_pool: bool | None = None,
) -> AsyncGenerator[tuple[int, Recording], None]:
    """Play ``jobs`` with at most ``concurrency`` in flight; yield ``(job index, recording)`` as each finishes.

    Battles run on ``pool`` if given (it stays open), else on a pool of ``processes`` started and closed here.
    A simulator that dies takes only the battles it was hosting (they end ``aborted``): the pool replaces it and the
    batch goes on. An ``aborted`` battle is played again up to ``replays`` times (same seed, same battle).
    Setting ``stop`` ends the battles in flight at their next decision point (yielded ``aborted``, with every turn
    played so far) and skips the jobs not yet started; only played battles are yielded.

    Close the generator (``contextlib.aclosing``) when leaving it early: its cleanup then runs while the simulator
    readers still answer, rather than at interpreter shutdown.

    With ``size_pool`` (the default when neither ``pool`` nor ``processes`` is given) the pool starts with one
    simulator and, once it is warm and a window of its CPU has been read (``PoolSizer``: about 150 gen9 battles at
    16 in flight), grows to what ``processes_for`` makes of the CPU this process and the simulators used over that
    window: a second simulator on a second core when Python leaves room for it.
    """
    concurrency = max(1, concurrency)
    own_pool = pool is None
    if size_pool is None:
        size_pool = pool is None and processes is None
    if pool is None:
        pool = SimPool(1 if size_pool else processes or min(concurrency, default_processes()))
        await pool.start()
    sizer = PoolSizer(pool, concurrency) if size_pool else None
    finished: Stream[tuple[int, Recording | None]] = Stream()
    slots = asyncio.Semaphore(concurrency)

    def stopped() -> bool:
        return stop is not None and stop.is_set()

    async def play(job: BattleJob) -> Recording:
        options = dict(format_id=job.format_id, seed=job.seed, max_turns=job.max_turns, battle_id=job.battle_id,
                       stop=stop, teams=job.teams)
        process = await pool.live()
        try:
            return await play_battle(job.p1, job.p2, process=process, **options)
        except BattleNotStarted:
            if process.alive:  # a real refusal (an unknown format, say), not a simulator that died just before
                raise
        return await play_battle(job.p1, job.p2, process=await pool.live(), **options)

    async def one(index: int, job: BattleJob) -> None:  # an error fails ``finished``: raised below, not hung on
        recording: Recording | None = None
        async with slots:
            for _ in range(1 + max(0, replays)):
                if stopped():
                    break
                recording = await play(job)
                if recording.result.reason != "aborted":
                    break
        finished.put((index, recording))

    for i, job in enumerate(jobs):
        finished.spawn(one(i, job))
    if not jobs:
        finished.end()
    with relaxed_gc():
        try:
            async for index, recording in finished:
                if recording is None:  # skipped: stopped before it started
                    continue
                if sizer is not None and await sizer.finished():
                    sizer = None
                if on_done is not None:
                    on_done(index, recording)
                yield index, recording
        finally:
            await finished.aclose()
            if own_pool:
                await pool.close()
