"""Gathering decisions from many battles into one forward pass.

Each loaded base model has one ``Batcher``: a worker thread that owns every forward pass on that model. A policy's
``decide`` (running in the battle runner's worker thread, so the simulator never waits on it) submits its request
and waits for the answer. When more than one battle has asked recently, the worker waits up to ``window_ms`` for
the others (or until every active battle has asked) and runs them together: all scoring requests in one
prefill + one candidate pass, all sampling requests in one sampling loop, whatever adapters they use. A single
battle is never made to wait.
"""

from __future__ import annotations

import queue
import threading
import time
import weakref
from concurrent.futures import Future
from typing import Any

from wolfeclick.llm.generation import GenerateRequest, GenerateResult, sample_requests
from wolfeclick.llm.scoring import ScoreRequest, ScoreResult, score_requests
from wolfeclick.settings import settings

ACTIVE_SECONDS = 2.0
"""A client (one battle side) counts as active this long after its last request."""


def stop_ids(tokenizer: Any) -> set[int]:
    ids = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    for token in ("<|im_end|>", "<|endoftext|>"):
        token_id = tokenizer.convert_tokens_to_ids(token) if token in tokenizer.get_vocab() else None
        if token_id is not None:
            ids.add(int(token_id))
    return ids


def run_requests(entry: Any, requests: list[Any]) -> list[Any]:
    """Run a batch of score and generate requests on one base entry; results in request order."""
    results: list[Any] = [None] * len(requests)
    tokenizer = entry.tokenizer
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    with entry.lock:
        names = [entry.adapter_name(r.adapter) for r in requests]
        scores = [i for i, r in enumerate(requests) if isinstance(r, ScoreRequest)]
        gens = [i for i, r in enumerate(requests) if isinstance(r, GenerateRequest)]
        if scores:
            started = time.perf_counter()
            out = score_requests(entry.model, [requests[i] for i in scores], [names[i] for i in scores], pad_id)
            ms = (time.perf_counter() - started) * 1000.0
            for i, token_logprobs in zip(scores, out):
                results[i] = ScoreResult(token_logprobs, batch_size=len(scores), model_ms=ms)
        if gens:
            started = time.perf_counter()
            sampled = sample_requests(entry.model, [requests[i] for i in gens], [names[i] for i in gens], pad_id,
                                      stop_ids(tokenizer))
            ms = (time.perf_counter() - started) * 1000.0
            for i, token_ids in zip(gens, sampled):
                results[i] = GenerateResult(token_ids, batch_size=len(gens), model_ms=ms)
    return results


class Batcher:
    """One worker thread per base model; ``submit`` from any thread, get a ``Future``."""

    def __init__(self, entry: Any, window_ms: float | None = None, max_batch: int = 64) -> None:
        self._entry = weakref.ref(entry)  # the worker must not keep an evicted model alive
        self.window = (settings().llm_batch_ms if window_ms is None else window_ms) / 1000.0
        self.max_batch = max_batch
        self._queue: "queue.Queue[tuple[Any, Future, float]]" = queue.Queue()
        self._clients: dict[Any, float] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.batches = 0
        self.largest_batch = 0

    def active_clients(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        with self._lock:
            for key in [k for k, t in self._clients.items() if now - t > ACTIVE_SECONDS]:
                del self._clients[key]
            return len(self._clients)

    def submit(self, request: Any, client: Any = None) -> Future:
        now = time.monotonic()
        future: Future = Future()
        with self._lock:
            self._clients[client if client is not None else id(future)] = now
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="wolfeclick-llm-batcher", daemon=True)
                self._thread.start()
        self._queue.put((request, future, now))
        return future

    def run(self, request: Any, client: Any = None) -> Any:
        """Submit and wait; returns the result with ``extra['queue_ms']`` set."""
        return self.submit(request, client).result()

    def _gather(self, first: tuple[Any, Future, float]) -> list[tuple[Any, Future, float]]:
        batch = [first]
        expected = min(self.max_batch, self.active_clients())
        if expected > 1 and self.window > 0:
            deadline = time.monotonic() + self.window
            while len(batch) < expected:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    batch.append(self._queue.get(timeout=remaining))
                except queue.Empty:
                    break
        while len(batch) < self.max_batch:  # whatever else is already waiting comes along
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _loop(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=5.0)
            except queue.Empty:
                if self._entry() is None:
                    return
                continue
            batch = self._gather(first)
            entry = self._entry()
            if entry is None:
                for _, future, _ in batch:
                    future.set_exception(RuntimeError("the model was unloaded"))
                return
            started = time.monotonic()
            try:
                results = run_requests(entry, [request for request, _, _ in batch])
            except BaseException as exc:  # every waiter hears about it; the worker lives on
                for _, future, _ in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            finally:
                del entry
            self.batches += 1
            self.largest_batch = max(self.largest_batch, len(batch))
            for (_, future, submitted), result in zip(batch, results):
                result.extra["queue_ms"] = round((started - submitted) * 1000.0, 3)
                future.set_result(result)
