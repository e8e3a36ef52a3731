"""The Ray engine: a tournament's battles on simulator-worker actors, its checkpoints on model-server actors.

The driver (``run_tournament``, in this process) keeps every file; this module only turns ``SpecJob``s into
``FinishedBattle``s (a row's facts, and a kept recording as its bytes):

* **Simulator workers** (``SimWorker``): one per core but one on each node (at least one), each with its own
  simulator pool. Jobs are dealt to them in schedule order, ``ceil(concurrency / workers)`` in flight on each;
  a finished battle comes straight back and the worker gets the next job.
* **Model servers** (a checkpoint kind's ``serving.server``: ``llm/serving.py``): one per GPU in the cluster (one
  on CPU when there is none), created only when a checkpoint plays. Each base (with its adapters) lives on one
  server, and every worker's decisions for it are batched there by the existing ``Batcher``.
* **Faults**: a worker that dies (killed, out of memory, its node lost) loses only the battles it was playing;
  they are dealt again, to a fresh worker in its place (same seed, same battle), at most ``max_attempts`` times
  each. A model server is restarted by Ray and the calls it had not answered are retried (``max_task_retries``).
  Closing the stream early (stop, SPRT, Ctrl-C) cancels what is in flight and ends every actor it started.
* **Where**: ``address`` (``auto``, ``HOST:PORT``, ``ray://…``) joins a running cluster; without one, a Ray
  instance already started in this process is used as it is, else a local one sized to this machine is started
  (offline: no dashboard, no usage reporting) and shut down at the end.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
from collections import deque
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, RayTaskError

from wolfeclick.arena.engines.base import FinishedBattle, SpecJob
from wolfeclick.arena.engines.ray_actors import SimWorker
from wolfeclick.battle.schema import SourceInfo
from wolfeclick.battle.stream import Stream
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.policies.base import Policy

__all__ = ["RayEngine", "RayLineup", "EngineError", "default_workers", "local_instance_options"]

_LOST = (RayActorError, ActorDiedError, ActorUnavailableError)
_RUNS = itertools.count(1)
PREFETCH = 1
"""Jobs queued on each worker beyond the battles it plays at once, so it never waits for the driver's next deal."""


class EngineError(WolfeClickError, RuntimeError):
    """The cluster could not be reached, or kept losing the same battle; one line."""

    exit_code = 1


@dataclass(frozen=True)
class RayLineup:
    """What the actors need to build a tournament's policies: the specs, options, and each checkpoint's base."""

    specs: tuple[str, ...]
    llm_options: dict[str, Any]
    bases: dict[str, str] = field(default_factory=dict)
    """Checkpoint spec → its base's folder (checkpoints on one base share one model server)."""


def default_workers(nodes: Sequence[Mapping[str, Any]]) -> int:
    """One simulator worker per core but one on every live node, at least one per node (the rest: driver, OS)."""
    alive = [n for n in nodes if n.get("Alive", n.get("alive", True))]
    return max(1, sum(max(1, int(n.get("Resources", {}).get("CPU", 1)) - 1) for n in alive))


def _client_options() -> dict[str, Any]:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never phone home (CI has no internet)
    return {"log_to_driver": False, "logging_level": logging.WARNING, "configure_logging": False}


LOCAL_SYSTEM_CONFIG = {"event_stats": False, "enable_worker_prestart": False, "prestart_worker_first_driver": False,
                       "worker_niceness": 0}
"""Ray settings of a local instance: no per-event statistics in Ray's own processes (debugging output only), no
idle worker processes started ahead of need (the engine only starts actors, each in a process of its own; an idle
one costs about 1% of a core), and workers at the driver's priority: Ray's default nice 15 left the actors, which
do all of a tournament's work, about 4% of a core on a machine busy with other work. On a cluster,
``ray start --system-config`` sets the same."""


def local_instance_options(num_cpus: int | None = None) -> dict[str, Any]:
    """``ray.init`` arguments for the local instance the engine starts (``num_cpus``: this machine's by default);
    the benchmark starts its instance with the same ones."""
    return {"num_cpus": num_cpus or os.cpu_count() or 1, "include_dashboard": False,
            "_system_config": dict(LOCAL_SYSTEM_CONFIG), **_client_options()}


def _gpus(nodes: Sequence[Mapping[str, Any]]) -> int:
    return sum(int(n.get("Resources", {}).get("GPU", 0)) for n in nodes if n.get("Alive", True))


class RayEngine:
    """Battles on Ray actors (see the module docstring). All arguments but ``address`` are for tuning and tests.

    ``workers``: simulator workers (default ``default_workers``); ``worker_cpus``: CPUs each reserves;
    ``processes``: simulator processes per worker; ``model_servers``: servers for checkpoints (default one per
    GPU, else one); ``batch_window_ms``: how long a server's batch waits for the other active battles (None: the
    batcher's 4 ms; decisions that cross the network arrive less in step than local ones); ``init``: extra
    ``ray.init`` arguments for a local instance; ``pin_cores``: pin worker *i* (and its simulators) to core
    *i mod cores* of its node (a real CPU limit, for the scale-out benchmark).
    """

    name = "ray"

    def __init__(self, address: str | None = None, *, workers: int | None = None, worker_cpus: float = 1.0,
                 processes: int = 1, model_servers: int | None = None, max_attempts: int = 3,
                 batch_window_ms: float | None = None, pin_cores: bool = False,
                 init: Mapping[str, Any] | None = None) -> None:
        self.batch_window_ms = batch_window_ms
        self.pin_cores = pin_cores
        self.address = address
        self.workers_wanted = workers
        self.worker_cpus = worker_cpus
        self.processes = processes
        self.model_servers = model_servers
        self.max_attempts = max(1, max_attempts)
        self.init_options = dict(init or {})
        self.workers: list[Any] = []
        """The live simulator-worker actors of the tournament being played (tests kill one of them)."""
        self._starting: list[Any] = []
        """Every worker actor started for the tournament being played, ready or not (all ended by ``_cleanup``)."""
        self.servers: list[Any] = []
        """The model-server actors of the tournament being played (empty without checkpoints)."""
        self.replaced = 0
        """Workers replaced after dying, in this engine's lifetime."""
        self.server_stats: list[dict[str, Any]] = []
        """Each model server's ``stats()`` at the end of the last tournament (decisions, batches, sizes)."""
        self.worker_cpu = 0.0
        """CPU seconds of the last tournament's live workers and their simulators, read as they were closed."""
        self.startup_cpu = 0.0
        """Of which spent starting them (imports, simulators, policies), read when each was ready."""

    # ---------------------------------------------------------------------------------------------- preparing

    def prepare(self, specs: Sequence[str], policies: Mapping[str, Policy],
                llm_options: Mapping[str, Any]) -> RayLineup:
        """Check every spec here, loading nothing: baselines are built (cheap), checkpoints only resolved.

        Ready policies in ``policies`` cannot travel to the actors; they are rebuilt there from their specs.
        """
        from wolfeclick.battle.policy_specs import make_policy
        from wolfeclick.policies.registry import default_registry

        bases: dict[str, str] = {}
        for spec in specs:
            kind = default_registry().lookup(spec)
            if kind.server:
                raise InputError(f"{spec} plays on a Showdown server, challenged from this process: use --engine local")
            if kind.checkpoint:  # its weights are served by one model server, as its kind's serving says
                bases[spec] = kind.resolve_serving().base_of(spec)
            elif spec not in policies:
                make_policy(spec)  # an unknown spec: one line, before anything is written
        return RayLineup(tuple(specs), dict(llm_options), bases)

    # ---------------------------------------------------------------------------------------------- the cluster

    def _connect(self) -> bool:
        """Join or start Ray; True when this call started a local instance (to be shut down after)."""
        if ray.is_initialized():
            return False
        try:
            if self.address:
                ray.init(address=self.address, **_client_options(), **self.init_options)
                return False
            ray.init(**local_instance_options(), **self.init_options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = self.address or "a local Ray instance"
            raise EngineError(f"could not start or reach {where}: {str(exc).strip().splitlines()[0]}") from None
        return True

    def _new_worker(self, lineup: RayLineup, servers: Mapping[str, Any], per_worker: int, slot: int,
                    tag: str, keep: SourceInfo | None) -> Any:
        actor = ray.remote(SimWorker).options(num_cpus=self.worker_cpus, max_concurrency=per_worker + PREFETCH + 4,
                                              max_restarts=0, enable_task_events=False)
        return actor.remote(lineup.specs, lineup.llm_options, servers, self.processes, tag,
                            slot if self.pin_cores else None, keep, per_worker)

    def _new_servers(self, lineup: RayLineup) -> dict[str, Any]:
        """One server per GPU (or one); each base goes to one of them, in sorted order; spec → server."""
        if not lineup.bases:
            return {}
        gpus = _gpus(ray.nodes())  # type: ignore[no-untyped-call]
        count = self.model_servers or max(1, gpus)
        resources = {"num_gpus": 1} if gpus else {"num_cpus": 0}
        from wolfeclick.policies.registry import default_registry

        classes = {default_registry().lookup(spec).resolve_serving().server for spec in lineup.bases}
        if len(classes) > 1:
            raise InputError("these checkpoints need different model servers; play them in separate tournaments")
        (server_class,) = classes
        actor = ray.remote(server_class).options(max_restarts=-1, max_task_retries=-1, max_concurrency=256,
                                                **resources)
        self.servers = [actor.remote(self.batch_window_ms) for _ in range(count)]
        order = sorted(set(lineup.bases.values()))
        return {spec: self.servers[order.index(base) % count] for spec, base in lineup.bases.items()}

    # ---------------------------------------------------------------------------------------------- playing

    async def play(self, jobs: Sequence[SpecJob], lineup: RayLineup, *, concurrency: int,
                   keep: SourceInfo | None = None) -> AsyncGenerator[tuple[int, FinishedBattle], None]:
        """Deal ``jobs`` to the workers; yield ``(position, finished battle)`` as each ends (module docstring).

        The dealing runs in a task of its own, so a worker gets its next job the moment a battle ends, not when the
        driver has finished writing that battle's row.
        """
        own = self._connect()
        inflight: dict[asyncio.Future[Any], tuple[int, int, Any, Any]] = {}
        results: Stream[tuple[int, FinishedBattle]] = Stream()
        results.spawn(self._deal(jobs, lineup, concurrency, keep, inflight, results))
        try:
            async for item in results:
                yield item
        finally:
            await results.aclose()
            await self._cleanup(inflight, own)

    async def _deal(self, jobs: Sequence[SpecJob], lineup: RayLineup, concurrency: int, keep: SourceInfo | None,
                    inflight: dict[asyncio.Future[Any], tuple[int, int, Any, Any]],
                    results: Stream[tuple[int, FinishedBattle]]) -> None:
        """Start the workers, keep each one's battles going, and put every finished battle on ``results`` (which
        ends when this returns, or raises the exception that ended the tournament where it is read)."""
        run = next(_RUNS)
        servers = self._new_servers(lineup)
        count = self.workers_wanted or default_workers(ray.nodes())  # type: ignore[no-untyped-call]
        count = max(1, min(count, len(jobs)))
        per_worker = max(1, math.ceil(max(1, concurrency) / count))
        generation = itertools.count()
        self.startup_cpu = 0.0

        async def fresh(slot: int) -> Any:
            worker = self._new_worker(lineup, servers, per_worker, slot, f"run{run}-w{slot}-{next(generation)}",
                                      keep)
            self._starting.append(worker)  # ended by _cleanup even if this run stops before it is ready
            info = await _wait(worker.ready.remote())
            self.startup_cpu += float(info.get("cpu", 0.0))
            return worker

        self.workers = list(await asyncio.gather(*(fresh(slot) for slot in range(count))))
        queue = deque(range(len(jobs)))
        load = [0] * count
        lost = [0] * len(jobs)
        while queue or inflight:
            for slot, worker in enumerate(self.workers):
                while queue and load[slot] < per_worker + PREFETCH:
                    position = queue.popleft()
                    ref = worker.play.remote(jobs[position])
                    inflight[asyncio.wrap_future(ref.future())] = (position, slot, worker, ref)
                    load[slot] += 1
            done, _ = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: inflight[f][0]):
                position, slot, worker, _ = inflight.pop(future)
                load[slot] -= 1
                try:
                    results.put((position, future.result()))
                except _LOST as exc:
                    lost[position] += 1
                    if lost[position] >= self.max_attempts:
                        raise EngineError(f"battle {jobs[position].battle_id} lost its worker "
                                          f"{lost[position]} times: {_first_line(exc)}") from None
                    queue.appendleft(position)
                    if self.workers[slot] is worker:  # the first of its battles to report: replace it once
                        self.replaced += 1
                        self.workers[slot] = await fresh(slot)
                except RayTaskError as exc:  # raised inside a battle: the same error the local engine raises
                    raise _unwrap(exc) from None

    async def _cleanup(self, inflight: Mapping[asyncio.Future[Any], tuple[int, int, Any, Any]], own: bool) -> None:
        """Cancel what is in flight, close and end every actor, and shut a local instance down."""
        for future, (_, _, _, ref) in inflight.items():
            future.cancel()
            try:
                ray.cancel(ref)
            except Exception:  # noqa: BLE001 - already finished or its actor already gone
                pass
        cpu = [worker.cpu_seconds.remote() for worker in self.workers]
        self.worker_cpu = 0.0
        if cpu:
            done, _ = await asyncio.wait([asyncio.wrap_future(ref.future()) for ref in cpu], timeout=5)
            self.worker_cpu = sum(f.result() for f in done if not f.exception())
        closing = [worker.close.remote() for worker in self.workers]
        if closing:
            await asyncio.wait([asyncio.wrap_future(ref.future()) for ref in closing], timeout=5)
        stats = [server.stats.remote() for server in self.servers]
        self.server_stats = []
        if stats:
            done, _ = await asyncio.wait([asyncio.wrap_future(ref.future()) for ref in stats], timeout=5)
            self.server_stats = [f.result() for f in done if not f.exception()]
        for actor in [*self._starting, *self.workers, *self.servers]:
            try:
                ray.kill(actor)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.workers, self.servers, self._starting = [], [], []
        if own:
            ray.shutdown()


async def _wait(ref: Any) -> Any:
    """Await one Ray call; an exception raised in the actor comes back as itself (a WolfeClickError stays one)."""
    try:
        return await asyncio.wrap_future(ref.future())
    except RayTaskError as exc:
        raise _unwrap(exc) from None


def _unwrap(exc: BaseException) -> BaseException:
    """The exception an actor raised, out of Ray's wrappers (a server's error reaches us through a worker's)."""
    while isinstance(exc, RayTaskError) and isinstance(getattr(exc, "cause", None), BaseException):
        exc = exc.cause
    return exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__
