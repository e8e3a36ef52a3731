"""What a long-running server builds again and again must not stay behind: serve-env builds an opponent for every
episode, the app a baseline for every battle (issue 60: serve-env's RSS grew ~0.37 MB an episode)."""

from __future__ import annotations

import logging

from wolfeclick.battle.policy_specs import make_policy


def test_building_baseline_players_leaves_no_logger_behind() -> None:
    for spec in ("random", "maxdamage", "heuristic"):
        make_policy(spec)  # the first build of each kind may set up what every later one shares
    before = len(logging.Logger.manager.loggerDict)
    for _ in range(20):
        for spec in ("random", "maxdamage", "heuristic"):
            make_policy(spec)
    assert len(logging.Logger.manager.loggerDict) == before  # poke-env named one logger per player before


SESSIONS_PROBE = """
import socket
from gradio_client import Client
import wolfeclick.ui.app as app
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
demo = app.launch(prevent_thread_lock=True, server_port=port)
for _ in range(10):  # ten visitors: each client is a session of its own
    Client(f"http://127.0.0.1:{port}/", verbose=False, ssl_verify=False).predict(api_name="/hardware")
print("held", len(demo.state_holder.session_data))
demo.close()
"""


def test_the_app_keeps_at_most_its_bound_of_visitors_sessions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Gradio kept ~330 kB of component settings for each of up to 10,000 sessions (a page load is one), closed or
    not: the serving process grew with every visitor. The app holds ``$WOLFECLICK_APP_SESSIONS``."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, WOLFECLICK_RECORDINGS=str(tmp_path), WOLFECLICK_RESULTS=str(tmp_path),
               WOLFECLICK_APP_SESSIONS="3", HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    done = subprocess.run([sys.executable, "-c", SESSIONS_PROBE], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line for line in done.stdout.splitlines() if line.startswith("held")] == ["held 3"]


def _holder_with(ages_s: list[float]):  # type: ignore[no-untyped-def]
    """A real Gradio ``StateHolder`` over the app's Blocks, its sessions last used ``ages_s`` seconds ago."""
    import datetime

    import gradio as gr
    from gradio.state_holder import StateHolder

    with gr.Blocks() as blocks:
        gr.Textbox()
    holder = StateHolder()
    holder.set_blocks(blocks)
    now = datetime.datetime.now()
    for index, age in enumerate(ages_s):
        holder[f"s{index}"]
        holder.time_last_used[f"s{index}"] = now - datetime.timedelta(seconds=age)
    return holder, now


def test_sessions_idle_past_the_bound_are_dropped_and_the_others_kept() -> None:
    from wolfeclick.ui.sessions import drop_idle_sessions

    holder, now = _holder_with([5, 3000, 100, 1900])
    assert drop_idle_sessions(holder, 1800, now) == 2
    assert sorted(holder.session_data) == ["s0", "s2"] and sorted(holder.time_last_used) == ["s0", "s2"]


def test_the_apps_lifespan_sweeps_idle_sessions_while_it_serves() -> None:
    import asyncio
    import types

    from wolfeclick.ui.sessions import session_lifespan

    holder, _ = _holder_with([5000, 0])
    trimmed: list[bool] = []

    async def serve() -> list[str]:
        async with session_lifespan(1800, every_s=0.01, trim=lambda: trimmed.append(True))(
                types.SimpleNamespace(state_holder=holder)):
            while "s0" in holder.session_data:  # waits on the sweep, not on a clock
                await asyncio.sleep(0.01)
        return sorted(holder.session_data)

    assert asyncio.run(asyncio.wait_for(serve(), 120)) == ["s1"]
    assert trimmed


def test_replays_nobody_opened_for_the_idle_bound_leave_the_view_cache(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The view cache held its whole budget (160 MB) long after the last visitor left: a quiet app never gave it back.
    A view unused past the idle bound is dropped; one opened since is kept."""
    import shutil
    import time

    from devkit.samples import SAMPLES
    from wolfeclick.ui.library import Library

    for path in SAMPLES[:2]:
        shutil.copy(path, tmp_path / path.name)
    library = Library(tmp_path)
    old, recent = (path.stem for path in SAMPLES[:2])
    start = time.monotonic()
    library.view(old)
    library.view(recent)
    held = library.cached_bytes()
    assert held > 0
    mid = time.monotonic()
    library.view(recent)  # opened again: last used after ``mid``
    assert library.drop_idle_views(1800, now=start + 1800) == 0  # nothing idle for longer than the bound yet
    assert library.drop_idle_views(1800, now=mid + 1800) == 1  # the one not opened since ``mid`` is
    assert 0 < library.cached_bytes() < held
    assert library.drop_idle_views(1800, now=time.monotonic() + 1801) == 1
    assert library.cached_bytes() == 0


def test_the_apps_lifespan_sweeps_the_caches_with_the_sessions() -> None:
    import asyncio
    import types

    from wolfeclick.ui.sessions import session_lifespan

    holder, _ = _holder_with([0])
    swept: list[float] = []

    def cache(idle_s: float) -> int:
        swept.append(idle_s)
        return 1

    async def serve() -> None:
        async with session_lifespan(1800, every_s=0.01, trim=lambda: None, caches=[cache])(
                types.SimpleNamespace(state_holder=holder)):
            while not swept:  # waits on the sweep, not on a clock
                await asyncio.sleep(0.01)

    asyncio.run(asyncio.wait_for(serve(), 120))
    assert swept[0] == 1800

