"""The one stream bridge (``wolfeclick.battle.stream``): producers that push, one consumer that reads in order.

Pure asyncio (and one thread each way): no simulator. Live battles with a person, Compare, batches and env episodes
all hand their items across through it, so its promises are tested here once: values in order, an error raised where
the consumer reads, the end arriving once, and a consumer that leaves early stopping every producer.
"""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from wolfeclick.battle.stream import Stream, StreamEnded

ROOT = Path(__file__).resolve().parents[1]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def others() -> set[asyncio.Task[Any]]:
    return {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}


def test_values_come_in_order_and_the_end_arrives_once() -> None:
    async def main() -> tuple[list[int], list[int]]:
        async with Stream[int]() as stream:
            async def produce() -> None:
                for n in range(5):
                    stream.put(n)
                    await asyncio.sleep(0)

            stream.spawn(produce())
            first = [n async for n in stream]
            again = [n async for n in stream]  # ended: reading again ends at once, it does not wait
        return first, again

    assert run(main()) == ([0, 1, 2, 3, 4], [])


def test_callbacks_put_and_end_without_a_task_and_nothing_after_the_end_is_read() -> None:
    async def main() -> list[str]:
        stream: Stream[str] = Stream()
        stream.put("a")
        stream.put("b")
        stream.end()
        stream.put("late")
        stream.end()
        return [item async for item in stream]

    assert run(main()) == ["a", "b"]


def test_an_error_in_a_producer_is_raised_where_the_consumer_reads() -> None:
    class Boom(Exception):
        pass

    async def main() -> tuple[list[int], list[int]]:
        async with Stream[int]() as stream:
            async def produce() -> None:
                stream.put(1)
                raise Boom("the simulator died")

            stream.spawn(produce())
            seen = []
            with pytest.raises(Boom, match="the simulator died"):
                async for n in stream:
                    seen.append(n)
            after = [n async for n in stream]  # raised once; then the stream is over
        return seen, after

    assert run(main()) == ([1], [])


def test_fail_hands_an_error_to_the_consumer() -> None:
    async def main() -> None:
        stream: Stream[int] = Stream()
        stream.put(7)
        stream.fail(KeyError("gone"))
        assert await anext(stream) == 7
        with pytest.raises(KeyError):
            await anext(stream)

    run(main())


def test_the_stream_ends_when_every_feeding_producer_returned_and_helpers_are_cancelled() -> None:
    async def main() -> tuple[list[int], bool, set[Any]]:
        cancelled = asyncio.Event()
        stream: Stream[int] = Stream()

        async def one(n: int) -> None:
            await asyncio.sleep(0)
            stream.put(n)

        async def helper() -> None:  # a watcher: it neither feeds nor ends the stream
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        stream.spawn(helper(), feeds=False)
        for n in range(3):
            stream.spawn(one(n))
        try:
            got = sorted([n async for n in stream])
        finally:
            await stream.aclose()
        return got, cancelled.is_set(), others()

    assert run(main()) == ([0, 1, 2], True, set())


def test_a_consumer_that_stops_early_stops_the_producer_and_leaves_no_task() -> None:
    async def main() -> tuple[list[int], bool, set[Any]]:
        stopped = asyncio.Event()

        async def battle() -> Any:  # an endless producer, as a battle waiting on a person is
            try:
                n = 0
                while True:
                    yield n
                    n += 1
                    await asyncio.sleep(0)
            finally:
                stopped.set()

        async def consume() -> Any:
            async with Stream[int]() as stream:
                async def pump() -> None:
                    async for n in battle():
                        stream.put(n)

                stream.spawn(pump())
                async for n in stream:
                    yield n

        reader = consume()
        got = [await anext(reader) for _ in range(3)]
        await reader.aclose()  # the page went away
        return got, stopped.is_set(), others()

    assert run(main()) == ([0, 1, 2], True, set())


def test_cancelling_a_waiting_consumer_cancels_the_producers() -> None:
    async def main() -> tuple[bool, set[Any]]:
        started, stopped = asyncio.Event(), asyncio.Event()

        async def producer() -> None:
            started.set()
            try:
                await asyncio.Event().wait()
            finally:
                stopped.set()

        async def consumer() -> None:
            async with Stream[int]() as stream:
                stream.spawn(producer())
                async for _ in stream:
                    pass

        task = asyncio.ensure_future(consumer())
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return stopped.is_set(), others()

    assert run(main()) == (True, set())


def test_closing_drops_what_was_not_read_and_ignores_later_puts() -> None:
    async def main() -> list[int]:
        stream: Stream[int] = Stream()
        stream.put(1)
        await stream.aclose()
        stream.put(2)
        return [n async for n in stream]

    assert run(main()) == []


def test_a_thread_may_put_while_the_loop_reads() -> None:
    async def main() -> list[int]:
        stream: Stream[int] = Stream()

        def worker() -> None:  # a blocking policy's thread, say
            for n in range(100):
                stream.put(n)
            stream.end()

        thread = threading.Thread(target=worker)
        thread.start()
        got = [n async for n in stream]
        thread.join()
        return got

    assert run(main()) == list(range(100))


def test_a_thread_reads_what_a_loop_puts_with_get() -> None:
    stream: Stream[int] = Stream()
    with pytest.raises(TimeoutError):
        stream.get(timeout=0)  # nothing yet

    async def produce() -> None:
        for n in range(3):
            stream.put(n)
            await asyncio.sleep(0)
        stream.fail(ValueError("refused"))

    got: list[Any] = []

    def reader() -> None:
        while True:
            try:
                got.append(stream.get(timeout=60))
            except ValueError as exc:
                got.append(str(exc))
            except StreamEnded:
                got.append("end")
                return

    thread = threading.Thread(target=reader)
    thread.start()
    run(produce())
    thread.join()
    assert got == [0, 1, 2, "refused", "end"]


ALLOWED_QUEUES = {
    "wolfeclick/ladder/client.py",  # the server's popups, read with a timeout by the protocol client
    "wolfeclick/ladder/play.py",  # a server battle's message inbox and the battles it started
    "wolfeclick/llm/batcher.py",  # the model's work queue, drained in batches by its own thread
}


def test_there_is_one_bridge() -> None:
    """The hand-written callback-queue bridges are gone: outside the protocol inboxes and the model's work queue,
    nothing in the package makes an asyncio or thread queue to hand items to a consumer."""
    found = []
    for path in (ROOT / "wolfeclick").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "Queue" and isinstance(node.value, ast.Name) \
                    and node.value.id in {"asyncio", "queue"}:
                found.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(found) - ALLOWED_QUEUES) == []


def test_a_producer_closed_before_it_started_is_not_left_unawaited() -> None:
    import gc
    import warnings

    async def producer() -> None:
        pass

    async def main() -> None:
        stream: Stream[int] = Stream()
        stream.spawn(producer())
        await stream.aclose()  # before the task's first step

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(main())
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []
