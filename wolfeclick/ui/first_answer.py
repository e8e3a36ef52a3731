"""Start-up work that waits for the app's first answer.

The app warms what the first replay needs (the Pokédex, ~0.4 s of Python) in a background thread. Started at
launch, that thread held the GIL while the first request was being answered and made it 5-10x slower (0.05 s → 0.35-
0.6 s for ``GET /config``), which was a tenth of the cold start. Started once the first response is sent, it runs
while the browser is fetching the page's assets instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from wolfeclick.ui.asgi import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AfterFirstAnswer"]


SELF_CALLS = ("/startup-events",)
"""Paths Gradio's own ``launch()`` asks of its server before returning: not a visitor's request."""


class AfterFirstAnswer:
    """ASGI middleware: runs ``task`` once, in a daemon thread, after the first HTTP response to a visitor (not to
    Gradio's own launch-time call) has been sent whole."""

    def __init__(self, app: ASGIApp, task: Callable[[], None], name: str = "wolfeclick-warm-up") -> None:
        self.app = app
        self.task = task
        self.name = name
        self._lock = threading.Lock()
        self.started = False

    def _start(self) -> None:
        with self._lock:
            if self.started:
                return
            self.started = True
        threading.Thread(target=self.task, name=self.name, daemon=True).start()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.started or scope.get("type") != "http" or str(scope.get("path", "")).endswith(SELF_CALLS):
            await self.app(scope, receive, send)
            return

        async def send_then_start(message: Message) -> None:
            await send(message)
            if message.get("type") == "http.response.body" and not message.get("more_body", False):
                self._start()

        await self.app(scope, receive, send_then_start)
