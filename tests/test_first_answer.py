"""The app's warm-up waits for its first answer (``wolfeclick.ui.first_answer``): started at launch, it held the GIL
while the first request was answered and cost a tenth of the cold start."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

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


def test_the_apps_warm_up_runs_after_the_first_request_not_at_launch(tmp_path: Path) -> None:
    probe = """
import sys, threading, urllib.request, socket
import wolfeclick.ui.app as app
from wolfeclick.ui.view import sprite_url
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
demo = app.launch(prevent_thread_lock=True, server_port=port)
before = sprite_url.cache_info().currsize, [t.name for t in threading.enumerate() if t.name == "wolfeclick-warm-up"]
urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=60).read()
import time
deadline = time.monotonic() + 300  # waits for the warm-up to have run; a generous cap, not a timing
while sprite_url.cache_info().currsize == 0 and time.monotonic() < deadline:
    time.sleep(0.05)
print("result", before, sprite_url.cache_info().currsize > 0)
demo.close()
"""
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, WOLFECLICK_RECORDINGS=str(tmp_path), WOLFECLICK_RESULTS=str(tmp_path)))
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line for line in done.stdout.splitlines() if line.startswith("result")] == ["result (0, []) True"]
