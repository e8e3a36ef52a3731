"""A script that must run before Gradio's own: put at the top of the app page's ``<head>``.

Gradio adds a Blocks ``head`` only once its own modules have run, too late for what ``assets/early.js`` does
(it wraps ``requestAnimationFrame`` before Gradio's status tracker module takes a reference to it). This middleware
rewrites the app page's HTML on its way out; every other response passes untouched.
"""

from __future__ import annotations

from pathlib import Path

from wolfeclick.ui.asgi import ASGIApp, Message, Receive, Scope, Send

__all__ = ["EarlyScript", "EARLY_JS_PATH", "early_js", "with_early_script"]


EARLY_JS_PATH = Path(__file__).with_name("assets") / "early.js"
PAGE_PATHS = ("/", "")
"""The app's page (Gradio serves it at the root; everything else is assets, API and files)."""


def early_js() -> str:
    return EARLY_JS_PATH.read_text(encoding="utf-8")


def with_early_script(html: bytes, script: str) -> bytes:
    """Pure: ``html`` with ``<script>script</script>`` first in its ``<head>`` (unchanged when it has none)."""
    at = html.find(b"<head>")
    if at < 0:
        return html
    at += len(b"<head>")
    return html[:at] + b"<script>" + script.encode("utf-8") + b"</script>" + html[at:]


class EarlyScript:
    """ASGI middleware: the app page's HTML (``GET /``) gets ``script`` at the top of its ``<head>``."""

    def __init__(self, app: ASGIApp, script: str | None = None) -> None:
        self.app = app
        self.script = script if script is not None else early_js()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "GET" or scope.get("path") not in PAGE_PATHS:
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        body = bytearray()

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                kind = dict(message.get("headers", [])).get(b"content-type", b"")
                if not kind.startswith(b"text/html"):
                    start = None
                    await send(message)
                    return
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            page = with_early_script(bytes(body), self.script)
            told = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            told.append((b"content-length", str(len(page)).encode("ascii")))
            await send({**start, "headers": told})
            await send({"type": "http.response.body", "body": page, "more_body": False})

        await self.app(scope, receive, rewrite)
