"""An analysis' rollouts on Ray (``analyse(..., engine="ray")``, ``wolfeclick analyse --engine ray``).

Each rollout worker is an actor with a simulator pool of its own, the recording and the rollout policy (rebuilt
from its spec there); the driver deals it whole estimates — the K rollouts of one decision, or of one option at it
— and gets back only their winners. A rollout's luck and policy draws come from the analysis seed, the decision
and the rollout number alone, so the numbers are those of a local analysis wherever each rollout ran (tested).
Joining a cluster or starting a local Ray instance is the tournament engine's (``arena.engines.ray_engine``).

Which policies can play there is the policy registry's answer (``check_ray_rollouts``): any kind a CPU worker can
build from its spec — the baselines, ``py:`` factories and installed agents (importable on every node) — but not
one that needs a GPU (a model on every worker), a person, or a bot on a Showdown server.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.errors import InputError
from wolfeclick.extras import require
from wolfeclick.policies.registry import PolicyRegistry, default_registry
from wolfeclick.sides import Side

Job = tuple[int, "Side | None", "ActionRecord | None"]
"""One estimate: (decision, the side whose option opens, that option) — (decision, None, None) for the policy's own."""
IN_FLIGHT = 2
"""Estimates queued on each worker at once (one playing, one waiting), so it never waits for the driver's deal."""


def check_ray_rollouts(spec: str, registry: PolicyRegistry | None = None) -> None:
    """Raise a one-line ``InputError`` unless a Ray rollout worker (a CPU actor) can build ``spec`` and play it:
    the registry says what its kind is, nothing is built or imported."""
    kind = (registry or default_registry()).lookup(spec)
    if not kind.buildable:
        raise InputError(kind.refusal or f"policy {kind.name!r} cannot be built from a spec")
    if kind.server:
        raise InputError(f"{spec.strip()} plays on a Showdown server, not the embedded simulator: rollouts cannot "
                         "play it")
    if kind.gpu or kind.checkpoint:
        raise InputError(f"{kind.name!r} policies need a GPU and Ray rollout workers are CPU actors that would each "
                         "load the model: analyse with --engine local")


class RolloutWorker:
    """K rollouts at a time from one recording (``ray.remote`` is applied by ``ray_winners``, not here)."""

    def __init__(self, recording_json: str, spec: str, processes: int = 1, concurrency: int = 16) -> None:
        self.recording = Recording.model_validate_json(recording_json)
        self.spec = spec
        self.processes = processes
        self.concurrency = concurrency
        self.pool: Any = None
        self.forks: Any = None
        self.policy: Any = None

    async def ready(self) -> int:
        from wolfeclick.analysis.rollout import Forks
        from wolfeclick.battle.policy_specs import make_policy
        from wolfeclick.sim.process import SimPool

        self.policy = make_policy(self.spec)
        self.pool = SimPool(self.processes)
        await self.pool.start()
        self.forks = Forks()
        return os.getpid()

    async def winners(self, step: int, side: Side | None, action: dict[str, str] | None, numbers: Sequence[int],
                      seed: int, fork: bool, lean: bool) -> list[str | None]:
        from wolfeclick.analysis.rollout import lean_rollout, prefix_lines, rollout
        from wolfeclick.battle.batch import relaxed_gc

        play = lean_rollout if lean else rollout
        first = {side: ActionRecord.model_validate(action)} if side is not None and action is not None else None
        prefix = prefix_lines(self.recording, step)
        slots = asyncio.Semaphore(self.concurrency)

        async def one(number: int) -> str | None:
            async with slots:
                outcome = await play(self.recording, step, {"p1": self.policy, "p2": self.policy},
                                     process=self.pool.pick(), seed=seed, number=number, first=first, prefix=prefix,
                                     forks=self.forks if fork else None)
            return outcome.winner

        with relaxed_gc():  # bulk play, as on the local pool (core._local_outcomes)
            return list(await asyncio.gather(*(one(n) for n in numbers)))

    async def close(self) -> None:
        if self.forks is not None:
            await self.forks.close()
        if self.pool is not None:
            await self.pool.close()


async def ray_winners(recording: Recording, spec: str, jobs: Sequence[Job], k: int, seed: int, *, fork: bool,
                      lean: bool, address: str | None = None, workers: int | None = None,
                      done: Callable[[int], None] | None = None,
                      stopped: Callable[[], bool] | None = None) -> list[list[str | None]]:
    """The winners of the K rollouts of each job, in job order, played on Ray workers. ``done(n)`` is told as each
    job's ``n`` rollouts come back; once ``stopped()`` is true no further job is dealt and ``AnalysisStopped`` is
    raised when those in flight are back."""
    check_ray_rollouts(spec)
    require("ray", "analysis rollouts on Ray")
    import ray

    from wolfeclick.arena.engines.ray_engine import RayEngine, _wait, default_workers

    own = RayEngine(address)._connect()
    actors: list[Any] = []
    try:
        count = max(1, workers or default_workers(ray.nodes()))
        remote = ray.remote(RolloutWorker).options(num_cpus=1, max_concurrency=IN_FLIGHT + 2)
        text = recording.to_json()
        actors = [remote.remote(text, spec) for _ in range(count)]
        await asyncio.gather(*(_wait(actor.ready.remote()) for actor in actors))
        results: list[list[str | None]] = [[] for _ in jobs]
        queue = list(enumerate(jobs))

        async def deal(actor: Any) -> None:
            while queue and not (stopped and stopped()):
                position, (step, side, action) = queue.pop(0)
                plain = action.model_dump() if action is not None else None
                results[position] = await _wait(actor.winners.remote(step, side, plain, list(range(k)), seed,
                                                                     fork, lean))
                if done is not None:
                    done(k)

        await asyncio.gather(*(deal(actor) for actor in actors for _ in range(IN_FLIGHT)))
        if stopped and stopped() and any(len(r) < k for r in results):
            from wolfeclick.analysis.rollout import AnalysisStopped

            raise AnalysisStopped(f"{recording.id}: the analysis was stopped")
        return results
    finally:
        for actor in actors:
            try:
                await _wait(actor.close.remote())
            except Exception:  # noqa: BLE001 - a worker that is gone has nothing left to close
                pass
            ray.kill(actor)
        if own:
            ray.shutdown()
