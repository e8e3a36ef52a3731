"""One bridge from producers that push (callbacks, tasks, other threads) to one consumer that reads them in order.

A live battle with a person (the battle and the seat's prompts), the Compare tab (a tournament's result callbacks),
a batch (battles finishing in any order), the Ray engine (a dealer task) and an env episode (a battle on the
service's loop, read by the training thread) all hand items across the same way, so it is written once: what is put
is read in order, an error a producer raises is raised where the consumer reads, the end arrives once, and a
consumer that leaves (the end, an error, ``aclose``, cancellation) cancels and awaits every producer task it owns, so
none outlives the reading.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import deque
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Coroutine, Generic, TypeVar

__all__ = ["Stream", "StreamEnded"]

T = TypeVar("T")
_END = object()


class StreamEnded(Exception):
    """``Stream.get``: the stream has ended (``async for`` simply stops)."""


@dataclass(frozen=True)
class _Failure:
    error: BaseException


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Stream(Generic[T]):
    """Items put by producers, read once and in order by one consumer: ``async for`` on a loop, or ``get`` in a thread.

    ``put`` may be called from any thread (a callback, a blocking policy's worker thread); ``fail`` makes the
    consumer raise the error where it reads; ``end`` (or the last feeding producer task returning) ends the reading.
    Whatever comes after the end or a failure is dropped. Use it as ``async with Stream() as stream`` (or call
    ``aclose``) so the producer tasks started with ``spawn`` end with the consumer.
    """

    def __init__(self) -> None:
        self._items: deque[object] = deque()
        self._ready = threading.Condition()
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self._over = False
        self._tasks: list[asyncio.Task[None]] = []
        self._feeding = 0

    # -------------------------------------------------------------------------------------------- producers
    def put(self, item: T) -> None:
        self._push(item)

    def fail(self, error: BaseException) -> None:
        """The consumer raises ``error`` once it has read everything put before it; then the stream is over."""
        self._push(_Failure(error), last=True)

    def end(self) -> None:
        self._push(_END, last=True)

    def spawn(self, producer: Coroutine[Any, Any, None], *, feeds: bool = True) -> asyncio.Task[None]:
        """Run ``producer`` as a task of this stream: an error it raises fails the stream, and once every feeding
        producer has returned the stream ends. ``feeds=False``: a helper (a watcher) whose return ends nothing.
        Every one is cancelled when the stream is closed."""
        if feeds:
            self._feeding += 1
        task = asyncio.ensure_future(producer)  # the producer's own task: cancelled before it starts, it is closed
        task.add_done_callback(functools.partial(self._finished, feeds=feeds))
        self._tasks.append(task)
        return task

    def _finished(self, task: asyncio.Task[None], *, feeds: bool) -> None:
        """A producer task ended: its error (or cancellation) is handed to the consumer; the last feeder ends it.
        Ctrl-C and exit still leave the loop as asyncio raises them; the consumer is told of them too."""
        if task.cancelled():
            self.fail(asyncio.CancelledError())
            return
        error = task.exception()
        if error is not None:
            self.fail(error)
        elif feeds:
            self._feeding -= 1
            if not self._feeding:
                self.end()

    def _push(self, item: object, last: bool = False) -> None:
        with self._ready:
            if self._over:
                return
            self._over = last
            self._items.append(item)
            self._ready.notify_all()
            waiter, self._waiter = self._waiter, None
        self._wake(waiter)

    @staticmethod
    def _wake(waiter: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None) -> None:
        """Wake a consumer waiting on its loop, from that loop or any other thread."""
        if waiter is None:
            return
        loop, future = waiter
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            _wake(future)
            return
        try:
            loop.call_soon_threadsafe(_wake, future)
        except RuntimeError:  # the consumer's loop is closed: nobody waits any more
            pass

    # -------------------------------------------------------------------------------------------- the consumer
    def _take(self) -> object:
        """The next item (under the lock); the end stays, so every later read ends too; a failure is raised once."""
        item = self._items[0]
        if item is _END:
            return item
        if isinstance(item, _Failure):
            self._items[0] = _END
            return item
        return self._items.popleft()

    def __aiter__(self) -> Stream[T]:
        return self

    async def __anext__(self) -> T:
        loop = asyncio.get_running_loop()
        while True:
            with self._ready:
                if self._items:
                    item = self._take()
                    break
                future: asyncio.Future[None] = loop.create_future()
                self._waiter = (loop, future)
            await future
        if item is _END:
            raise StopAsyncIteration
        if isinstance(item, _Failure):
            raise item.error
        return item  # type: ignore[return-value]

    def get(self, timeout: float | None = None) -> T:
        """For a consumer in another thread: the next item. Raises what a producer failed with, ``StreamEnded`` at
        the end, and ``TimeoutError`` when nothing came within ``timeout`` seconds."""
        with self._ready:
            if not self._ready.wait_for(lambda: bool(self._items), timeout):
                raise TimeoutError("nothing arrived in time")
            item = self._take()
        if item is _END:
            raise StreamEnded
        if isinstance(item, _Failure):
            raise item.error
        return item  # type: ignore[return-value]

    async def aclose(self) -> None:
        """Leave: nothing more is read (what was not read is dropped), and every producer task is cancelled and
        awaited."""
        with self._ready:
            self._over = True
            self._items.clear()
            self._items.append(_END)
            self._ready.notify_all()
            waiter, self._waiter = self._waiter, None
        self._wake(waiter)
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def __aenter__(self) -> Stream[T]:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.aclose()
