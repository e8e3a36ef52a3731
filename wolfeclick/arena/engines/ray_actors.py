"""What the Ray engine's actors do, as plain classes (``ray.remote`` is applied by the engine, not here).

* ``SimWorker`` — one per core on a simulator node: owns a ``SimPool``, builds its policies from specs once and
  plays ``SpecJob``s with the local engine's own ``run_jobs`` (one replay of an aborted battle), many at once.
  It sends back only a ``FinishedBattle``: the row's facts, and the recording's bytes when recordings are kept.
* ``ModelServer`` — one per GPU (or one on CPU): holds bases and their adapters in its own ``ModelCache``
  and runs every decision it is sent through that base's ``Batcher``, so decisions from every battle in flight on
  every worker share forward passes. Its methods are plain (blocking) ones: Ray runs each call in a thread of its
  own (``max_concurrency``), which is exactly how the batcher expects to be called.
* ``ModelServerClient`` — a worker's stand-in for ``MODEL_CACHE``: ``make_llm_policy(spec, cache=client)`` gives
  an ordinary ``LLMPolicy`` (prompts and tokenising stay on the worker) whose forward passes run on the server.

Only ``ModelServerClient`` and ``RemoteBatcher`` touch Ray (``ray.get`` on a server call), and only when used.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, aclosing
from dataclasses import dataclass, field
from typing import Any

from wolfeclick.arena.engines.base import FinishedBattle, SpecJob, battle_job, finished_battle
from wolfeclick.battle.schema import SourceInfo

__all__ = ["SimWorker", "ModelServer", "ModelServerClient", "RemoteBatcher", "RemoteEntry"]


class RemoteBatcher:
    """``Batcher.run`` over Ray: the request goes to the model server, which batches it with everyone else's.

    ``client`` (one battle side) is prefixed with the worker's tag: battle ids are only unique within a process.
    """

    def __init__(self, server: Any, checkpoint: Any, device: str | None, quant: str | None, tag: str) -> None:
        self.server, self.checkpoint, self.device, self.quant, self.tag = server, checkpoint, device, quant, tag

    def run(self, request: Any, client: Any = None) -> Any:
        import ray

        return ray.get(self.server.run.remote(self.checkpoint, self.device, self.quant, request, (self.tag, client)))


@dataclass
class RemoteEntry:
    """What an ``LLMPolicy`` reads from its base entry, for a base that lives on a model server."""

    tokenizer: Any
    quant: str
    device: str
    dtype: str
    notice: str | None
    remote: RemoteBatcher
    tokenizer_lock: threading.Lock = field(default_factory=threading.Lock)

    def batcher(self) -> RemoteBatcher:
        return self.remote


class ModelServerClient:
    """``MODEL_CACHE.get`` for a simulator worker: the model loads on the server, the tokenizer here."""

    def __init__(self, server: Any, tag: str) -> None:
        self.server = server
        self.tag = tag
        self._tokenizers: dict[str, Any] = {}

    def get(self, checkpoint: Any, *, device: str | None = None, quant: str | None = None) -> Any:
        import ray

        from wolfeclick.llm.loading import ModelHandle, load_tokenizer

        info = ray.get(self.server.describe.remote(checkpoint, device, quant))
        key = str(checkpoint.base.path)
        if key not in self._tokenizers:
            self._tokenizers[key] = load_tokenizer(checkpoint.base)
        entry = RemoteEntry(self._tokenizers[key], info["quant"], info["device"], info["dtype"], info["notice"],
                            RemoteBatcher(self.server, checkpoint, device, quant, self.tag))
        return ModelHandle(entry, info["adapter"], checkpoint)  # type: ignore[arg-type]


class ModelServer:
    """Bases and adapters in this server's own ``ModelCache`` (made at its first checkpoint, bounded by the
    settings of its process); every decision goes through the base's batcher.

    A restarted server (Ray restarts it) has an empty cache: the first call after a restart loads the base again,
    so a retried decision simply waits for that.
    """

    def __init__(self, window_ms: float | None = None) -> None:
        self.window_ms = window_ms
        """How long a batch waits for the other active battles (None: the batcher's default, 4 ms)."""
        self.cache: Any = None
        """The server's ``ModelCache`` (None until the first checkpoint: torch is imported only then)."""
        self._lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self.requests = 0
        self.sizes: dict[int, int] = {}
        """Decisions answered, by the size of the batch they were answered in."""
        self.mixed = 0
        """Batches that held decisions from more than one worker."""
        self._recent: OrderedDict[tuple[int, float], set[Any]] = OrderedDict()
        """The workers seen in each recent batch; a batch is known by (size, its measured model time), which every
        result of one forward pass shares and no two passes do."""

    def _handle(self, checkpoint: Any, device: str | None, quant: str | None) -> Any:
        with self._cache_lock:  # Ray calls this from several threads at once: one cache (one batcher per base) for all
            if self.cache is None:
                from wolfeclick.llm.loading import ModelCache

                self.cache = ModelCache()
        handle = self.cache.get(checkpoint, device=device, quant=quant)
        if self.window_ms is not None:
            handle.entry.batcher().window = self.window_ms / 1000.0
        return handle

    def describe(self, checkpoint: Any, device: str | None, quant: str | None) -> dict[str, Any]:
        """Load the checkpoint (if not yet) and say what a policy's metadata needs to know of it."""
        handle = self._handle(checkpoint, device, quant)
        entry = handle.entry
        return {"adapter": handle.adapter, "quant": entry.quant, "device": entry.device, "dtype": entry.dtype,
                "notice": entry.notice}

    def run(self, checkpoint: Any, device: str | None, quant: str | None, request: Any, client: Any) -> Any:
        """One decision's forward pass, batched with whatever else is in flight on the same base."""
        result = self._handle(checkpoint, device, quant).entry.batcher().run(request, client)
        worker = client[0] if isinstance(client, tuple) else None
        with self._lock:
            self.requests += 1
            self.sizes[result.batch_size] = self.sizes.get(result.batch_size, 0) + 1
            if result.batch_size > 1:
                seen = self._recent.setdefault((result.batch_size, result.model_ms), set())
                seen.add(worker)
                if len(seen) == 2:
                    self.mixed += 1
                while len(self._recent) > 1024:
                    self._recent.popitem(last=False)
        return result

    def stats(self) -> dict[str, Any]:
        """Decisions answered, forward batches run, decisions by batch size, and batches that mixed workers'
        decisions (since this process started)."""
        batches = sum(entry.batcher().batches for entry in (self.cache.entries() if self.cache else []))
        with self._lock:
            return {"pid": os.getpid(), "requests": self.requests, "batches": batches, "by_size": dict(self.sizes),
                    "mixed_batches": self.mixed}


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
        from wolfeclick.battle.specs import make_policy

        built = {}
        for spec in self.specs:
            if spec in self.servers:
                built[spec] = make_policy(spec, **self.llm_options,
                                          cache=ModelServerClient(self.servers[spec], f"{self.tag}:{os.getpid()}"))
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
