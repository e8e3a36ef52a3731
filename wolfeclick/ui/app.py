"""The Gradio app: Live, Replays, Compare and Leaderboard tabs around one client-side battle viewer. Composition
only.

Each tab is a module under ``wolfeclick/ui/tabs`` with ``build(ctx)`` and module-level handlers that return
``{component: update}``; the API-only endpoints are in ``tabs/api.py``. Everything they share is the
``AppContext`` built here once. Share links: ``?replay=ID&turn=N`` (``&step=K``), ``?tab=live|replays|compare|leaderboard``,
``?policy=NAME`` (a policy's page on the Leaderboard tab).
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

import gradio as gr
from starlette.middleware import Middleware

from wolfeclick.battle.store import MAX_RECORDING_BYTES
from wolfeclick.ui.binding import bind
from wolfeclick.ui.choice_refusals import short_choice_refusals
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.early_script import EarlyScript
from wolfeclick.ui.first_answer import AfterFirstAnswer
from wolfeclick.ui.library import Library
from wolfeclick.ui.quotas import UploadRateLimit
from wolfeclick.ui.sessions import session_lifespan
from wolfeclick.ui.tabs import api, compare, live, replays
from wolfeclick.ui.tabs import leaderboard as board

__all__ = ["build_app", "app_context", "launch", "launch_options", "CSS_PATH"]

CSS_PATH = Path(__file__).with_name("assets") / "app.css"
TITLE = "WolfeClick Arena"
INTRO = ("Watch Pokémon Showdown agents battle, step through recorded battles turn by turn, and compare policies. "
         "<b>Live</b>: pick two policies and press Start. <b>Replays</b>: open a recording and step with ←/→ "
         "(Shift: by turn), Space, Home/End; the address bar links to the turn shown. <b>Compare</b>: run a small "
         "tournament.")


async def open_live_battle(ctx: AppContext, ui: replays.ReplaysUI, tabs: gr.Tabs, last: dict | None,
                           step: float | None = None) -> dict:
    """"Open this battle in Replays (at this turn)": the finished live battle at the step its viewer shows
    (``step``, read from the page), else at the step the live link names."""
    last = last if isinstance(last, dict) else {}
    at = int(step) if isinstance(step, (int, float)) and step >= 0 else last.get("step")
    update = await replays.open_replay(ctx, ui, last.get("id"), step=at)
    update[tabs] = gr.Tabs(selected="replays")
    return update


async def open_share_link(ctx: AppContext, rp: replays.ReplaysUI, lb: board.LeaderboardUI, tabs: gr.Tabs,
                          request: gr.Request) -> dict:
    """The page's load: the Replays tab's share links (``?replay=``, ``?tab=``), then ``?policy=NAME`` (or
    ``?tab=leaderboard``) opens the Leaderboard tab at that policy's page."""
    update = await replays.on_load(ctx, rp, tabs, request)
    try:
        params = dict(request.query_params) if request is not None else {}
    except (AttributeError, TypeError):
        params = {}
    if "replay" not in params and ("policy" in params or params.get("tab") == board.TAB_ID):
        update.update(await board.open_link(ctx, lb, params, request))
        update[tabs] = gr.Tabs(selected=board.TAB_ID)
    return update


TEMP_FILES_CLEANUP = (600, 3600)
"""Every 10 minutes, Gradio deletes the uploaded and generated temporary files older than an hour."""


def build_app(library: Library | None = None, ctx: AppContext | None = None) -> gr.Blocks:
    """Build the Blocks around ``ctx`` (default: from the environment, with ``library`` if given)."""
    ctx = ctx or AppContext.from_env(library)
    # Gradio keeps every file POSTed to /gradio_api/upload, used by an event or not: files older than an hour go
    with gr.Blocks(title=TITLE, analytics_enabled=False, delete_cache=TEMP_FILES_CLEANUP) as demo:
        gr.HTML(f'<div class="wc-banner"><b style="font-size:18px">⚔ {TITLE}</b> '
                f'<span class="wc-muted wc-intro">{INTRO}</span></div>', js_on_load=None)
        with gr.Tabs() as tabs:
            with gr.Tab("Live battle", id="live"):
                lv = live.build(ctx)
            with gr.Tab("Replays", id="replays"):
                rp = replays.build(ctx)
            with gr.Tab("Compare", id="compare"):
                cp = compare.build(ctx)
            with gr.Tab("Leaderboard", id=board.TAB_ID) as board_tab:
                lb = board.build(ctx)
        lv.open_button.click(bind(open_live_battle, ctx, rp, tabs), [lv.last, lv.open_step], [tabs, *rp.opened()],
                             api_visibility="private", js=live.OPEN_AT_CURSOR_JS)
        to = rp.takeover
        to.button.click(bind(live.takeover_start, ctx, lv, tabs), to.inputs(lv.pace), [tabs, *lv.stream_outputs()],
                        api_name="takeover_start", js=replays.TAKEOVER_JS, concurrency_limit=ctx.settings.max_live,
                        concurrency_id="live")
        demo.load(bind(open_share_link, ctx, rp, lb, tabs), None, [tabs, *rp.loaded(), *lb.outputs()],
                  api_name="open_share_link")
        board_tab.select(bind(board.first_open, ctx, lb), [lb.loaded, *lb.filters(), lb.policy], lb.outputs(),
                         api_visibility="private")
        demo.load(bind(live.hardware, ctx), None, lv.hardware, api_name="hardware")
        demo.load(bind(compare.compare_choices, ctx, cp), None, cp.select, api_visibility="private")
        api.register(ctx)
        board.register(ctx)
    set_default_concurrency(demo, 32)
    short_choice_refusals(demo)  # Gradio's refusal of an unoffered value: one line, the value not echoed
    vars(demo)["wolfeclick_context"] = ctx  # read by launch_options, tests and scripts (``app_context``)
    return demo


def app_context(demo: gr.Blocks) -> AppContext:
    """The context ``build_app`` built ``demo`` around."""
    ctx = vars(demo).get("wolfeclick_context")
    if not isinstance(ctx, AppContext):
        raise TypeError("these Blocks were not made by build_app")
    return ctx


def set_default_concurrency(demo: gr.Blocks, limit: int) -> None:
    """Events without their own limit run ``limit`` at once. ``gr.Blocks()`` already made the queue;
    ``demo.queue(default_concurrency_limit=…)`` would replace it and rebuild Gradio's server app (83 routes, about
    0.15 s of the cold start), which ``launch()`` builds again anyway. The limit is read when an event first runs."""
    queue = getattr(demo, "_queue", None)
    if queue is not None and hasattr(queue, "default_concurrency_limit"):
        queue.default_concurrency_limit = limit
    else:  # a Gradio whose queue is laid out otherwise: the public way
        demo.queue(default_concurrency_limit=limit)


def launch_options(demo: gr.Blocks) -> dict[str, Any]:
    """What ``launch()`` needs besides host and port: CSS, file access for downloads, the upload size limit, the
    bounds on visitors' sessions kept in memory (``wolfeclick.ui.sessions``), the warm-up started once the first
    request is answered (``wolfeclick.ui.first_answer``) and the script the page runs before Gradio's own
    (``wolfeclick.ui.early_script``)."""
    ctx = app_context(demo)
    lib = ctx.library
    css = CSS_PATH.read_text(encoding="utf-8") if CSS_PATH.exists() else ""
    upload_limit = min(MAX_RECORDING_BYTES, ctx.settings.max_upload_bytes) + 1024 * 1024
    return {
        "app_kwargs": {
            "lifespan": session_lifespan(ctx.settings.session_idle_s, caches=[lib.drop_idle_views]),
            "middleware": [
                Middleware(AfterFirstAnswer, task=warm_up), Middleware(EarlyScript),
                Middleware(UploadRateLimit, bytes_per_hour=max(ctx.settings.upload_bytes_per_visitor, upload_limit),
                           unknown_bytes=upload_limit)]},
        "css": css,
        "theme": gr.themes.Soft(primary_hue="indigo"),
        "allowed_paths": [str(lib.directory), str(lib.exports)],
        "max_file_size": upload_limit,
        "state_session_capacity": ctx.settings.sessions,
        "footer_links": ["api"],
        "show_error": True,
    }


def warm_up() -> None:
    """Load what the first replay needs (the Pokédex, for sprite ids) before anyone asks."""
    from wolfeclick.ui.battle_panels import sprite_url

    sprite_url("Pikachu")


def launch(demo: gr.Blocks | None = None, **overrides: Any) -> gr.Blocks:
    """Build (if needed) and launch. Host and port come from GRADIO_SERVER_NAME / GRADIO_SERVER_PORT
    (default 127.0.0.1:7860); ``overrides`` go to ``launch()``."""
    demo = demo or build_app()
    options = launch_options(demo)
    options.setdefault("server_name", os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    port = os.environ.get("GRADIO_SERVER_PORT")
    if port:
        options.setdefault("server_port", int(port))
    options.update(overrides)
    if "_frontend" in inspect.signature(gr.Blocks.launch).parameters:
        # Gradio's launch() asks its own URL once (3 s timeout, no retry after a timeout or a proxy's refusal) and
        # refuses to start when that fails: on a busy machine, 4 of 6 starts. The app binds its own address and
        # needs no such check.
        options.setdefault("_frontend", False)
    blocking = not options.get("prevent_thread_lock", False)
    options["prevent_thread_lock"] = True
    demo.launch(**options)
    if blocking:
        demo.block_thread()
    return demo
