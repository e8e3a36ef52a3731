"""What the Ray engine's simulator workers do, as a plain class (``ray.remote`` is applied by the engine, not here).

``SimWorker`` — one per core on a simulator node: owns a ``SimPool``, builds its policies from specs once and
plays ``SpecJob``s with the local engine's own ``run_jobs`` (one replay of an aborted battle), many at once.
It sends back only a ``FinishedBattle``: the row's facts, and the recording's bytes when recordings are kept.

A checkpoint spec is built with the cache stand-in its kind's ``serving`` gives for its model server (the policy
registry's "a model server for this spec"): the worker never knows what a model, tokenizer or batcher is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, aclosing
from typing import Any

from wolfeclick.arena.engines.base import FinishedBattle, SpecJob, battle_job, finished_battle
from wolfeclick.battle.schema import SourceInfo

__all__ = ["SimWorker"]


class SimWorker:
    """A simulator pool and the policies of one tournament; plays ``SpecJob``s, many at once (an async actor).

    ``keep``: the ``SourceInfo`` kept recordings are marked with (they come back encoded), or None to send none.
    ``concurrency``: battles played at once; further ``play`` calls wait their turn here, so the driver can queue
    the next job before a battle ends. The garbage collector is relaxed for the worker's life, as ``run_jobs``
    relaxes it for a local batch.
    """

    def __init__(self, specs: Sequence[str], llm_options: Mapping[str, Any], servers: Mapping[str, Any],
                 processes: int = 1, tag: str = "worker", core: int | None = None,
                 keep: SourceInfo | None = None, concurrency: int = 1) -> None:
        if core is not None and hasattr(os, "sched_setaffinity"):  # a CPU limit for scale-out benchmarks:
            os.sched_setaffinity(0, {core % (os.cpu_count() or 1)})  # this process and its simulators, one core
        self.specs = list(specs)
        self.llm_options = dict(llm_options)
        self.servers = dict(servers)
        self.processes = processes
        self.tag = tag
        self.keep = keep
        self.concurrency = max(1, concurrency)
        self._slots: Any = None
        self._life = ExitStack()
        self.pool: Any = None
        self.policies: dict[str, Any] = {}

    def _build(self) -> dict[str, Any]:
        from wolfeclick.battle.policy_specs import make_policy
        from wolfeclick.policies.registry import default_registry

        built = {}
        for spec in self.specs:
            if spec in self.servers:
                serving = default_registry().lookup(spec).resolve_serving()
                client = serving.client(self.servers[spec], f"{self.tag}:{os.getpid()}")
                built[spec] = make_policy(spec, **self.llm_options, cache=client)
            else:
                built[spec] = make_policy(spec)
        return built

    async def ready(self) -> dict[str, Any]:
        """Start the simulators and build the policies (checkpoints: their tokenizers, models on the servers)."""
        import asyncio

        from wolfeclick.battle.batch import relaxed_gc
        from wolfeclick.sim.process import SimPool

        if self._slots is None:
            self._slots = asyncio.Semaphore(self.concurrency)
            self._life.enter_context(relaxed_gc())
        self.policies = await asyncio.to_thread(self._build)
        if self.pool is None:
            self.pool = SimPool(self.processes)
            await self.pool.start()
        return {"pid": os.getpid(), "showdown": self.pool.showdown_version, "cpu": self.cpu_seconds()}

    async def play(self, job: SpecJob) -> FinishedBattle:
        """Play one battle (an aborted one once more, as locally) and return what the driver needs of it."""
        from wolfeclick.battle.batch import run_jobs

        async with self._slots:
            stream = run_jobs([battle_job(job, self.policies)], pool=self.pool, replays=1)
            async with aclosing(stream):
                async for _, recording in stream:
                    return finished_battle(recording, self.keep, encode=True)
        raise RuntimeError(f"battle {job.battle_id} was not played")  # run_jobs always yields an unstopped job

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()
            self.pool = None
        self._life.close()

    def pid(self) -> int:
        return os.getpid()

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of this worker and its live simulator processes, for benchmarks."""
        import psutil

        me = psutil.Process()
        total = sum(me.cpu_times()[:2])
        for child in me.children(recursive=True):
            try:
                total += sum(child.cpu_times()[:2])
            except psutil.Error:
                pass
        return float(total)
