"""How a checkpoint kind's weights are served to battles on other processes (the Ray engine's model servers).

The arena asks the policy registry for "a model server for this spec" (``PolicyKind.serving``) and never sees a
tokenizer, a cache or a batcher: those stay here, beside the model stack they belong to.

* ``ModelServer`` — one per GPU (or one on CPU): holds bases and their adapters in its own ``ModelCache``
  and runs every decision it is sent through that base's ``Batcher``, so decisions from every battle in flight on
  every worker share forward passes. Its methods are plain (blocking) ones: Ray runs each call in a thread of its
  own (``max_concurrency``), which is exactly how the batcher expects to be called.
* ``ModelServerClient`` — a worker's stand-in for ``MODEL_CACHE``: ``make_llm_policy(spec, cache=client)`` gives
  an ordinary ``LLMPolicy`` (prompts and tokenising stay on the worker) whose forward passes run on the server.
* ``CheckpointServing`` — what the registry hands the engine: which base a spec's weights live on (specs on one
  base share a server), the server's class, and the worker's client for a server.

Only ``ModelServerClient`` and ``RemoteBatcher`` touch Ray (``ray.get`` on a server call), and only when used;
nothing here imports torch until a server loads its first checkpoint.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckpointServing", "ModelServer", "ModelServerClient", "RemoteBatcher", "RemoteEntry"]


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


class CheckpointServing:
    """The registry's answer to "a model server for this spec", for ``llm:`` and ``preset:`` (``PolicyKind.serving``).

    Stateless: the engine asks it where a spec's weights live (in this process, resolving without loading), which
    class to start as a server, and, on a worker, for the cache stand-in a policy of that spec is built with.
    """

    server = ModelServer

    def base_of(self, spec: str) -> str:
        """The base the spec's weights sit on (a folder or Hub id); specs on one base share a server."""
        from wolfeclick.llm.checkpoint_specs import parse_spec, resolve_checkpoint

        return str(resolve_checkpoint(parse_spec(spec)).base.path)

    def client(self, server: Any, tag: str) -> ModelServerClient:
        """What ``make_policy(spec, cache=…)`` gets on a worker: forward passes on ``server``, tokenising here."""
        return ModelServerClient(server, tag)


CHECKPOINT_SERVING = CheckpointServing()
"""The one (stateless) serving the built-in checkpoint kinds name."""
