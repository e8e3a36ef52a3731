"""*Analyse this battle* in the Replays tab: start an analysis of the open replay, watch its progress, stop it.

The analysis itself is ``wolfeclick.analysis.core.analyse`` on a simulator pool of its own; when it finishes it is
stored beside the recording (as ``wolfeclick analyse`` stores it) and the replay is opened again, so the chart, the
marks and the option tables show at once. Stop cancels the rollouts left and writes nothing. One analysis per
browser session (``StopRegistry``): starting another stops the first.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

import gradio as gr

from wolfeclick.analysis.core import AnalysisStopped, analyse, summary_line
from wolfeclick.analysis.schema import save_analysis
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.protocol import SIDES
from wolfeclick.ui.binding import bind
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.tabs.common import failure, message_html

KIND = "analysis"
POLICY = "heuristic"
SIDE_CHOICES = ["none", "p1", "p2", "both"]
POLL_S = 0.5
"""How often the status line shows the rollouts done while an analysis runs."""


@dataclass
class AnalysisUI:
    k: gr.Number
    options: gr.Radio
    start: gr.Button
    stop: gr.Button
    status: gr.HTML


def controls(max_k: int) -> AnalysisUI:
    """The accordion's layout (inside the Replays tab's controls column); K goes up to the app's ``max_k``."""
    with gr.Accordion("Analyse this battle", open=False, elem_classes=["wc-controls"]):
        # no precision/minimum/maximum: Gradio would round 2.5 to 2 and stack a toast per check; the handler
        # refuses anything but a whole number from 1 to max_k in one line
        k = gr.Number(min(16, max_k), label=f"Rollouts per estimate (K, 1 to {max_k} here)", elem_id="wc-analysis-k")
        options = gr.Radio(SIDE_CHOICES, value="none", label="Value every option of", elem_id="wc-analysis-options")
        with gr.Row():
            start = gr.Button("Analyse", size="sm", elem_id="wc-analysis-start")
            stop = gr.Button("■ Stop", size="sm", elem_id="wc-analysis-stop")
        status = gr.HTML("", elem_id="wc-analysis-status")
    return AnalysisUI(k, options, start, stop, status)


def progress_html(done: int, total: int) -> str:
    """Pure: the status line while an analysis runs (before its rollouts are counted: that it starts, with a
    progress bar of no value, not "0 of 0 rollouts")."""
    if total <= 0:
        return ('<div class="wc-message wc-an-progress-line"><progress class="wc-an-progress"></progress> Starting '
                f"the analysis: replaying the battle to count its rollouts ({POLICY} on both sides)…</div>")
    return (f'<div class="wc-message wc-an-progress-line"><progress class="wc-an-progress" value="{done}" '
            f'max="{max(1, total)}"></progress> {done} of {total} rollouts ({POLICY} on both sides; the analysis '
            "sees both teams)</div>")


def sides_of(choice: str | None) -> tuple[str, ...]:
    if choice in (None, "", "none"):
        return ()
    if choice == "both":
        return SIDES
    if choice in SIDES:
        return (choice,)
    raise InputError(f"options must be one of {', '.join(SIDE_CHOICES)}, not {str(choice)[:20]!r}")


def rollouts_per_estimate(value: Any, max_k: int) -> int:
    """K as a whole number from 1 to the app's bound (``$WOLFECLICK_APP_MAX_K``), else one line."""
    try:
        k = int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError("K must be a whole number of rollouts") from None
    if not 1 <= k <= max_k or k != value:
        raise InputError(f"K must be a whole number from 1 to {max_k} in this app")
    return k


def check_size(decisions: int, max_decisions: int) -> None:
    """A battle longer than the app's bound (``$WOLFECLICK_APP_MAX_DECISIONS``) is not analysed here."""
    if decisions > max_decisions:
        raise InputError(f"this battle has {decisions} decisions; this app analyses battles of at most "
                         f"{max_decisions} (wolfeclick analyse on your own machine has no bound)")


async def analysis_start(ctx: AppContext, ui: AnalysisUI, reopen: Callable[[str], Awaitable[dict]],
                         replay_id: str | None, k: float, options: str,
                         request: gr.Request | None = None) -> AsyncIterator[dict]:
    """Analyse the open replay, yielding the progress line, then store it and open the replay again."""
    if not replay_id:
        yield {ui.status: message_html("Open a replay first.")}
        return
    try:
        stop = ctx.stops.start(KIND, request)  # QuotaRefused when this visitor already runs a heavy job
    except WolfeClickError as exc:
        yield {ui.status: message_html(f"⚠ {exc}")}
        return
    state = {"done": 0, "total": 0}

    def progress(done: int, total: int) -> None:
        state.update(done=done, total=total)

    task: asyncio.Future[Any] | None = None
    try:
        count, sides = rollouts_per_estimate(k, ctx.settings.max_k), sides_of(options)
        recording = await asyncio.to_thread(ctx.library.get, str(replay_id))
        check_size(len(recording.turns), ctx.settings.max_decisions)
        yield {ui.status: progress_html(0, 0)}
        async with SimPool() as pool:
            task = asyncio.ensure_future(analyse(recording, make_policy(POLICY), pool=pool, k=count, seed=0,
                                                 options=sides, progress=progress, stop=stop))
            while not task.done():
                await asyncio.wait({task}, timeout=POLL_S)
                if not task.done():
                    yield {ui.status: progress_html(state["done"], state["total"])}
            analysis = task.result()
        await asyncio.to_thread(save_analysis, analysis, ctx.library.directory)
        opened = await reopen(str(replay_id))
        yield {**opened, ui.status: message_html(f"Finished · {summary_line(analysis, recording)}")}
    except AnalysisStopped:
        yield {ui.status: message_html(f"Stopped after {state['done']} of {state['total']} rollouts; nothing was "
                                       "written.")}
    except Exception as exc:  # noqa: BLE001 - one line for a user error, a logged bug otherwise
        yield {ui.status: message_html(failure(ctx, exc, "analysis_start"))}
    finally:
        if task is not None and not task.done():
            task.cancel()
        ctx.stops.finish(KIND, request, stop)


async def analysis_stop(ctx: AppContext, request: gr.Request | None = None) -> str:
    if ctx.stops.stop(KIND, request):
        return message_html("Stopping the analysis…")
    return message_html("No analysis is running in this session.")


def wire(ctx: AppContext, ui: AnalysisUI, replay: gr.Dropdown, reopen: Callable[[str], Awaitable[dict]],
         opened: list[Any]) -> None:
    """The accordion's events: Analyse reads the replay chosen in ``replay``; ``reopen`` opens it into ``opened``."""
    ui.start.click(bind(analysis_start, ctx, ui, reopen), [replay, ui.k, ui.options], [ui.status, *opened],
                   api_visibility="private", concurrency_limit=1, concurrency_id="analysis")
    ui.stop.click(bind(analysis_stop, ctx), None, ui.status, api_visibility="private")
