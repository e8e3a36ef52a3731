"""The script the app page runs before Gradio's own (``wolfeclick.ui.early_script``): at the top of the page's
``<head>`` (Gradio's Blocks ``head`` is added after its modules ran, too late), and nowhere else."""

from __future__ import annotations

import asyncio

from wolfeclick.ui.early_script import EarlyScript, early_js, with_early_script

PAGE = (b"<!doctype html><html><head><meta charset='utf-8'>"
        b"<script type=\"module\" src=\"./assets/index.js\"></script></head><body></body></html>")


def _respond(scope: dict, *messages: dict) -> list[dict]:
    async def app(scope, receive, send) -> None:
        for message in messages:
            await send(message)

    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request"}

    asyncio.run(EarlyScript(app, script="window.early = 1;")(scope, receive, send))  # type: ignore[arg-type]
    return sent


def _html(body: bytes, *, chunks: int = 1) -> list[dict]:
    size = -(-len(body) // chunks)
    parts = [body[k:k + size] for k in range(0, len(body), size)]
    return [{"type": "http.response.start", "status": 200,
             "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]},
            *({"type": "http.response.body", "body": p, "more_body": k < len(parts) - 1} for k, p in enumerate(parts))]


def test_the_script_comes_before_every_script_of_the_page() -> None:
    page = with_early_script(PAGE, "window.early = 1;")
    assert page.index(b"<script>window.early = 1;</script>") < page.index(b"<script type=\"module\"")
    assert page.startswith(b"<!doctype html><html><head><script>")
    assert with_early_script(b"no head here", "x") == b"no head here"


def test_the_app_page_gets_it_whole_with_its_length_told_again() -> None:
    sent = _respond({"type": "http", "method": "GET", "path": "/"}, *_html(PAGE, chunks=3))
    start, body = sent[0], b"".join(m["body"] for m in sent[1:])
    assert body == with_early_script(PAGE, "window.early = 1;")
    assert dict(start["headers"])[b"content-length"] == str(len(body)).encode()
    assert [m.get("more_body", False) for m in sent[1:]] == [False]


def test_assets_api_calls_and_other_types_pass_untouched() -> None:
    for scope in ({"type": "http", "method": "GET", "path": "/assets/index.js"},
                  {"type": "http", "method": "POST", "path": "/"},
                  {"type": "http", "method": "GET", "path": "/gradio_api/info"}):
        assert _respond(scope, *_html(PAGE, chunks=2)) == _html(PAGE, chunks=2)
    not_html = [{"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]},
                {"type": "http.response.body", "body": b"{\"head\": \"<head>\"}"}]
    assert _respond({"type": "http", "method": "GET", "path": "/"}, *not_html) == not_html


def test_the_shipped_script_wraps_request_animation_frame_only() -> None:
    js = early_js()
    assert "window.requestAnimationFrame = function" in js
    assert "</script" not in js  # it is inlined into the page
