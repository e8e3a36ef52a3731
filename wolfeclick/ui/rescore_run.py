"""*Ask a policy* in the Replays tab: what would a served policy have done at each of one side's decisions?

The browser's ``wolfeclick rescore``: the open replay is replayed from its own choices (``battle.rescore``), the
chosen policy sees exactly what that side saw at each decision, and its answers are stored beside the recording
(``rescores/<id>/``) as the CLI stores them. The replay is then opened again, so the agreement summary and each
decision panel's "asked afterwards" note show at once. Only the app's served policies can be asked (``ctx.admit``),
never a person, and only of battles within the app's decision bound.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import gradio as gr

from wolfeclick.battle.rescore import rescore_one, save_rescore
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.protocol import SIDES
from wolfeclick.ui.analysis_run import check_size
from wolfeclick.ui.binding import bind
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.live_page import HUMAN_CHOICE, policy_choices
from wolfeclick.ui.tabs.common import failure, message_html


@dataclass
class RescoreUI:
    policy: gr.Dropdown
    side: gr.Radio
    start: gr.Button
    status: gr.HTML


def rescore_choices(ctx: AppContext) -> list[tuple[str, str]]:
    """The served policies a visitor may ask (a person cannot be asked after the fact)."""
    return [choice for choice in policy_choices(ctx.catalogue) if choice != HUMAN_CHOICE]


def controls(ctx: AppContext) -> RescoreUI:
    """The accordion's layout (inside the Replays tab's controls column)."""
    choices = rescore_choices(ctx)
    with gr.Accordion("Ask a policy (rescore)", open=False, elem_classes=["wc-controls"]):
        gr.Markdown("Replays this battle from its own choices and asks the chosen policy what it would have done "
                    "at each of one side's decisions; its answers show beside each decision and as an agreement "
                    "line (as `wolfeclick rescore` does).")
        policy = gr.Dropdown(choices, value=choices[0][1] if choices else None, label="Policy to ask",
                             elem_id="wc-rescore-policy")
        side = gr.Radio(list(SIDES), value="p1", label="At the decisions of", elem_id="wc-rescore-side")
        start = gr.Button("Ask", size="sm", elem_id="wc-rescore-start")
        status = gr.HTML("", elem_id="wc-rescore-status")
    return RescoreUI(policy, side, start, status)


async def rescore_start(ctx: AppContext, ui: RescoreUI, reopen: Callable[[str], Awaitable[dict]],
                        replay_id: str | None, policy: str | None, side: str | None,
                        request: gr.Request | None = None) -> dict:
    """Ask ``policy`` at ``side``'s decisions of the open replay, store the answers and open the replay again."""
    if not replay_id:
        return {ui.status: message_html("Open a replay first.")}
    stop = None
    try:
        spec = ctx.admit(policy, human=False)
        stop = ctx.stops.start("rescore", request)  # QuotaRefused when this visitor already runs a heavy job
        if side not in SIDES:
            return {ui.status: message_html(f"side must be p1 or p2, not {str(side)[:20]!r}")}
        recording = await asyncio.to_thread(ctx.library.get, str(replay_id))
        check_size(len(recording.turns), ctx.settings.max_decisions)
        asked = await asyncio.to_thread(ctx.policies.build, spec)
        async with SimPool(1) as pool:
            rescore = await rescore_one(recording, asked, side, pool=pool)  # type: ignore[arg-type]
        await asyncio.to_thread(save_rescore, rescore, ctx.library.directory)
        opened = await reopen(str(replay_id))
        share = f"{rescore.agreement:.0%}" if rescore.agreement is not None else "n/a"
        return {**opened, ui.status: message_html(f"Asked {spec} at {len(rescore.decisions)} decisions of {side}: "
                                                  f"it agrees with the recorded choice at {share}.")}
    except Exception as exc:  # noqa: BLE001 - one line for a user error, a logged bug otherwise
        return {ui.status: message_html(failure(ctx, exc, "rescore_start"))}
    finally:
        if stop is not None:
            ctx.stops.finish("rescore", request, stop)


def wire(ctx: AppContext, ui: RescoreUI, replay: gr.Dropdown, reopen: Callable[[str], Awaitable[dict]],
         opened: list[Any]) -> None:
    """Ask reads the replay chosen in ``replay``; ``reopen`` opens it into ``opened`` (summary and notes)."""
    ui.start.click(bind(rescore_start, ctx, ui, reopen), [replay, ui.policy, ui.side], [ui.status, *opened],
                   api_visibility="private", concurrency_limit=1, concurrency_id="analysis")
