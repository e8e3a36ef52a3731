"""The Compare tab's "Rate a policy": the gauntlet (``wolfeclick gauntlet``) against the shipped reference ladder.

One served policy plays the ladder's rungs nearest its strength in seat-swapped pairs until its 95% interval is
narrower than the width chosen or the battle cap (at most the app's ``max_battles``) is reached; the page shows the
estimate after each step and, at the end, the rating on the ladder's fixed scale. Every policy played passes
``ctx.admit`` first, rungs included: a rung the app does not serve is left out (its rating still fixes the scale).
It counts as the session's Compare run (one heavy job: starting it stops a Compare run in flight, and Stop stops
it). Battles go to the app's results folder and replay library, so they join the history.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any, AsyncIterator

import gradio as gr

from wolfeclick.arena.yardstick_plan import DEFAULT_WIDTH, LADDER_FORMATS
from wolfeclick.battle.live_battles import parse_seed
from wolfeclick.battle.stream import Stream
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.ui.binding import bind
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.live_page import offered
from wolfeclick.ui.tabs.common import failure

__all__ = ["RateUI", "build", "rate_run", "RUN_KIND"]

RUN_KIND = "compare"
"""The run this counts as in the session's stop registry and the visitor's quota: a Compare run."""


@dataclass
class RateUI:
    spec: gr.Dropdown
    format: gr.Dropdown
    width: gr.Number
    battles: gr.Slider
    seed: gr.Textbox
    run: gr.Button
    status: gr.Markdown


async def rate_run(ctx: AppContext, ui: RateUI, spec: Any, format_id: Any, width: Any, max_battles: Any, seed: Any,
                   request: gr.Request | None = None) -> AsyncIterator[dict]:
    """Play the gauntlet; the status line after each step, then the rating and the record per rung."""
    from wolfeclick.arena.gauntlet import run_gauntlet
    from wolfeclick.arena.yardstick import load_ladder
    from wolfeclick.ui.yardstick_view import gauntlet_markdown, step_markdown

    try:
        stop = ctx.stops.start(RUN_KIND, request)  # QuotaRefused when this visitor already runs a heavy job
    except WolfeClickError as exc:
        yield {ui.status: f"⚠ {exc}"}
        return
    try:
        chosen = ctx.admit(spec, human=False)
        ladder = load_ladder()
        table = ladder.table(str(format_id or ""))
        try:
            cap, wide = int(max_battles), float(width)
        except (TypeError, ValueError):
            raise InputError("the width and the battle cap are numbers") from None
        if not 2 <= cap <= ctx.settings.max_battles:
            raise InputError(f"the battle cap is between 2 and {ctx.settings.max_battles} in this app")
        if not 0 < wide < 1e6:
            raise InputError("the width is a positive number of rating points")
        served = []
        for rung in table.ratings():
            try:
                served.append(ctx.admit(rung, human=False))
            except InputError:
                continue  # a rung this app does not serve: not played here
        policies = {}
        for name in dict.fromkeys([chosen, *served]):
            policies[name] = await asyncio.to_thread(ctx.policies.build, name, "score")
        seen: list[Any] = []
        results: list[Any] = []
        yield {ui.status: step_markdown(chosen, seen, cap)}
        async with Stream[Any]() as steps:

            async def gauntlet() -> None:
                results.append(await run_gauntlet(
                    chosen, ladder, table.format, ctx.results, width=wide, max_battles=cap, seed=parse_seed(seed),
                    recordings_dir=ctx.library.directory, policies=policies, rungs=served, stop=stop,
                    on_step=steps.put))

            steps.spawn(gauntlet())
            async for step in steps:
                seen.append(step)
                yield {ui.status: step_markdown(chosen, seen, cap)}
        yield {ui.status: gauntlet_markdown(results[0], table)}
    except Exception as exc:  # noqa: BLE001 - one line for a user error, a logged bug otherwise
        yield {ui.status: failure(ctx, exc, "rate_run")}
    finally:
        ctx.stops.finish(RUN_KIND, request, stop)


def build(ctx: AppContext) -> RateUI:
    """The section's layout and event (inside the Compare tab)."""
    listed = offered([replace(e, label=e.spec) for e in ctx.catalogue.entries()])
    with gr.Accordion("Rate a policy on the reference ladder (a fixed scale, random = 1000)", open=False):
        gr.Markdown("Plays the policy against the ladder's rungs nearest its strength, in seat-swapped pairs, "
                    "until its 95% interval is narrower than the width, and gives its rating on the shipped "
                    "ladder's scale (docs/yardstick.md; the table is on the Leaderboard tab).")
        with gr.Row():
            spec = gr.Dropdown(listed, value=listed[0][1] if listed else None, label="Policy")
            format_box = gr.Dropdown(list(LADDER_FORMATS), value=LADDER_FORMATS[0], label="Format")
            width = gr.Number(DEFAULT_WIDTH, label="Stop when the interval is narrower than", precision=0)
            battles = gr.Slider(2, ctx.settings.max_battles, value=min(ctx.settings.max_battles, 120), step=2,
                                label="Battle cap")
            seed = gr.Textbox(label="Seed", value="0", max_length=12)
        run = gr.Button("Rate", variant="primary")
        status = gr.Markdown("")
    ui = RateUI(spec, format_box, width, battles, seed, run, status)
    run.click(bind(rate_run, ctx, ui), [spec, format_box, width, battles, seed], [status], api_name="rate_policy",
              concurrency_limit=1, concurrency_id="compare")
    return ui
