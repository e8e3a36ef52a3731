"""Many battles at once: a pool of simulator processes, a bounded number in flight, results in input order.

Placement and timing never change a battle (see the runner), so concurrency only changes how long it takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from dataclasses import dataclass
from typing import AsyncIterator, Callable, Sequence

from wolfeclick.battle.runner import DEFAULT_MAX_TURNS, play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.policies.base import Policy
from wolfeclick.sim.process import SimPool, default_processes

_GC_BATCH_THRESHOLD = (50_000, 50, 100)
_gc_depth = 0
_gc_saved = gc.get_threshold()


@contextlib.contextmanager
def relaxed_gc():  # type: ignore[no-untyped-def]
    """Run Python's cyclic garbage collector less often while battles are being played in bulk.

    poke-env allocates many small objects per turn, so the default gen-0 threshold (700) collects constantly: on
    100 heuristic-vs-random battles this cut the Python side's CPU by ~15% and raised battles/s by ~12%.
    Reference counting still frees almost everything at once; settings are restored when the last batch ends.
    """
    global _gc_depth, _gc_saved
    _gc_depth += 1
    if _gc_depth == 1:
        _gc_saved = gc.get_threshold()
        gc.set_threshold(*_GC_BATCH_THRESHOLD)
    try:
        yield
    finally:
        _gc_depth -= 1
        if _gc_depth == 0:
            gc.set_threshold(*_gc_saved)


@dataclass(frozen=True)
class BattleJob:
    """One battle to play: who sits where, the format and the seed (and optionally a fixed id)."""

    p1: Policy
    p2: Policy
    format_id: str
    seed: int
    max_turns: int = DEFAULT_MAX_TURNS
    battle_id: str | None = None


async def run_jobs(
    jobs: Sequence[BattleJob],
    *,
    concurrency: int = 1,
    processes: int | None = None,
    pool: SimPool | None = None,
    on_done: Callable[[int, Recording], None] | None = None,
) -> AsyncIterator[tuple[int, Recording]]:
    """Play ``jobs`` with at most ``concurrency`` in flight; yield ``(job index, recording)`` as each finishes.

    Battles run on ``pool`` if given (it stays open), else on a pool of ``processes`` started and closed here.
    """
    concurrency = max(1, concurrency)
    own_pool = pool is None
    if pool is None:
        pool = SimPool(processes or min(concurrency, default_processes()))
        await pool.start()
    queue: asyncio.Queue[tuple[int, Recording | BaseException]] = asyncio.Queue()
    slots = asyncio.Semaphore(concurrency)

    async def one(index: int, job: BattleJob) -> None:
        try:
            async with slots:
                recording = await play_battle(job.p1, job.p2, format_id=job.format_id, seed=job.seed,
                                              max_turns=job.max_turns, battle_id=job.battle_id, process=pool.pick())
        except BaseException as exc:  # surfaced to the consumer below instead of hanging it
            await queue.put((index, exc))
            raise
        await queue.put((index, recording))

    tasks = [asyncio.create_task(one(i, job)) for i, job in enumerate(jobs)]
    with relaxed_gc():
        try:
            for _ in jobs:
                index, recording = await queue.get()
                if isinstance(recording, BaseException):
                    raise recording
                if on_done is not None:
                    on_done(index, recording)
                yield index, recording
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if own_pool:
                await pool.close()
