"""The app's warm-up waits for its first answer (``wolfeclick.ui.first_answer``): started at launch, it held the GIL
while the first request was answered and cost a tenth of the cold start."""

from __future__ import annotations

import asyncio
import threading

from wolfeclick.ui.first_answer import AfterFirstAnswer


def _app_sending(*messages: dict) -> object:
    async def app(scope, receive, send) -> None:
        for message in messages:
            await send(message)
    return app


def test_the_task_starts_once_after_the_first_whole_response() -> None:
    ran = threading.Event()
    calls: list[int] = []

    def task() -> None:
        calls.append(1)
        ran.set()

    seen_before_end: list[bool] = []

    async def send(message: dict) -> None:
        if message["type"] == "http.response.body":
            seen_before_end.append(middleware.started)

    middleware = AfterFirstAnswer(_app_sending(  # type: ignore[arg-type]
        {"type": "http.response.start", "status": 200},
        {"type": "http.response.body", "body": b"a", "more_body": True},
        {"type": "http.response.body", "body": b"b"}), task)

    async def receive() -> dict:
        return {"type": "http.request"}

    asyncio.run(middleware({"type": "lifespan"}, receive, send))
    assert not middleware.started  # lifespan and websockets are not answers
    seen_before_end.clear()
    asyncio.run(middleware({"type": "http"}, receive, send))
    assert seen_before_end == [False, False]  # nothing started while the response was still being sent
    assert ran.wait(30)
    asyncio.run(middleware({"type": "http"}, receive, send))
    assert calls == [1]
