"""The Compare tab: a small tournament, its standings, verdicts, charts and every battle with a replay link."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, AsyncIterator

import gradio as gr

from wolfeclick.battle.live_battles import FORMATS, LiveError, parse_seed
from wolfeclick.battle.runner import DEFAULT_FORMAT
from wolfeclick.errors import WolfeClickError
from wolfeclick.ui import tournament_runs
from wolfeclick.ui.binding import bind
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.live_page import offered
from wolfeclick.ui.presentation import status_line
from wolfeclick.ui.tabs import rate
from wolfeclick.ui.tabs.common import failure

__all__ = ["CompareUI", "build", "compare_run", "compare_stop", "compare_load", "RUN_OUTPUTS", "LOAD_OUTPUTS"]

RUN_OUTPUTS = ("status", "table", "win", "heat", "ratings", "select", "games", "verdicts")
LOAD_OUTPUTS = ("status", "table", "win", "heat", "ratings", "games", "verdicts")
"""The order of ``/compare_run``'s and ``/compare_load``'s outputs for API clients."""


@dataclass
class CompareUI:
    specs: gr.CheckboxGroup
    battles: gr.Slider
    format: gr.Dropdown
    seed: gr.Textbox
    mode: gr.Radio
    run: gr.Button
    stop: gr.Button
    select: gr.Dropdown
    load: gr.Button
    status: gr.Markdown
    table: gr.Dataframe
    verdicts: gr.Dataframe
    win: gr.Plot
    heat: gr.Plot
    ratings: gr.Plot
    games: gr.Dataframe

    def outputs(self, names: tuple[str, ...]) -> list[Any]:
        return [getattr(self, name) for name in names]


def _shown(ui: CompareUI, update: tournament_runs.CompareUpdate) -> dict:
    out: dict[Any, Any] = {ui.status: update.message}
    if update.table:
        out[ui.table] = update.table
    for key, component in (("win_rate", ui.win), ("heatmap", ui.heat), ("ratings", ui.ratings)):
        if update.figures.get(key) is not None:
            out[component] = update.figures[key]
    if update.battles:
        out[ui.games] = gr.Dataframe(value=update.battles, label=f"Battles ({len(update.battles)}; open any replay)")
    if update.verdicts:
        out[ui.verdicts] = gr.Dataframe(value=update.verdicts, visible=True)
    return out


async def compare_run(ctx: AppContext, ui: CompareUI, chosen: list[str], battles: float, format_id: str, seed: str,
                      mode: str, engine: str = "local", request: gr.Request | None = None,
                      progress: gr.Progress = gr.Progress()) -> AsyncIterator[dict]:
    """Run a small tournament; table and charts update as each battle finishes. Every policy is one of the app's
    served ones (``ctx.admit``), the engine one the operator opened, the size within ``settings.max_battles``."""
    try:
        stop = ctx.stops.start("compare", request)  # QuotaRefused when this visitor already runs a heavy job
    except WolfeClickError as exc:
        yield {ui.status: f"⚠ {exc}"}
        return
    try:
        if not isinstance(chosen, list) or len(chosen) > tournament_runs.MAX_POLICIES:
            raise LiveError(f"choose two to {tournament_runs.MAX_POLICIES} policies from the list")
        specs = [ctx.admit(spec, human=False) for spec in chosen]
        engine = engine or "local"
        if engine not in ctx.settings.engines:
            raise LiveError(f"engine {str(engine)[:20]!r} is not open in this app; engines: "
                            f"{', '.join(ctx.settings.engines)}")
        stream = tournament_runs.run_compare(specs, int(battles or 2), format_id or DEFAULT_FORMAT, parse_seed(seed),
                                         cache=ctx.policies, out_dir=ctx.results,
                                         recordings=ctx.library.directory, mode=mode or "score", stop=stop,
                                         engine=engine, max_battles=ctx.settings.max_battles)
        async for update in stream:
            if update.total:
                progress((update.done, update.total), desc=update.message, unit="battles")
            out = _shown(ui, update)
            if update.finished:
                out[ui.select] = gr.Dropdown(choices=tournament_runs.list_compares(ctx.results), value=update.tournament)
            yield out
    except Exception as exc:  # noqa: BLE001 - one line for a user error, a logged bug otherwise
        yield {ui.status: failure(ctx, exc, "compare_run")}
    finally:
        ctx.stops.finish("compare", request, stop)


async def compare_stop(ctx: AppContext, request: gr.Request | None = None) -> str:
    if ctx.stops.stop("compare", request):
        return status_line("stopping", "", "after the battles in flight")
    return "No comparison is running in this session."


def compare_load(ctx: AppContext, ui: CompareUI, tournament_id: str) -> dict:
    """Load an earlier comparison's table and charts by tournament id."""
    try:
        return _shown(ui, tournament_runs.load_compare(tournament_id or "", ctx.results))
    except LiveError as exc:
        return {ui.status: f"⚠ {exc}"}


def compare_choices(ctx: AppContext, ui: CompareUI) -> dict:
    return {ui.select: gr.Dropdown(choices=tournament_runs.list_compares(ctx.results))}


def build(ctx: AppContext) -> CompareUI:
    with gr.Row(equal_height=False, elem_classes=["wc-tab-row"]):
        with gr.Column(scale=1, min_width=260, elem_classes=["wc-controls-col"]):
            with gr.Accordion("Tournament settings", open=True, elem_classes=["wc-controls"]):
                listed = ctx.catalogue.entries()
                specs = gr.CheckboxGroup(offered([replace(e, label=e.spec) for e in listed]),
                                         value=[e.spec for e in listed if not e.gpu and not e.external
                                                and not e.operator],
                                         label="Policies", info="the policies this app serves")
                battles = gr.Slider(2, 40, value=4, step=2, label="Battles per pairing",
                                    info="played in pairs: same teams, seats swapped")
                format_box = gr.Dropdown(FORMATS, value=DEFAULT_FORMAT, label="Format", allow_custom_value=True)
                seed = gr.Textbox(label="Seed", value="0", max_length=12)
                mode = gr.Radio(["score", "generate"], value="score", label="Decoding (checkpoints)")
                engine = gr.Radio(list(ctx.settings.engines), value=ctx.settings.engines[0], label="Engine",
                                  visible=len(ctx.settings.engines) > 1,
                                  info="ray: battles on Ray actors (a local Ray instance); same results")
                with gr.Row():
                    run = gr.Button("▶ Run", variant="primary")
                    stop = gr.Button("■ Stop", variant="stop")
                select = gr.Dropdown(choices=[], label="Earlier results (date · players · battles)",
                                     allow_custom_value=True)
                load = gr.Button("Load", size="sm")
        with gr.Column(scale=4, elem_classes=["wc-battle-col"]):
            status = gr.Markdown("Choose policies and press **Run**.")
            table = gr.Dataframe(headers=tournament_runs.TABLE_HEADERS, datatype="str", interactive=False,
                                 label="Standings", elem_id="wc-compare-table", wrap=True)
            verdicts = gr.Dataframe(headers=tournament_runs.VERDICT_HEADERS, datatype="str", interactive=False,
                                    label="Verdicts (is one really stronger?)", visible=False,
                                    elem_id="wc-compare-verdicts", wrap=True)  # long verdicts wrap: no cut column
            with gr.Row(elem_classes=["wc-chart-row"]):
                win = gr.Plot(show_label=False)
                heat = gr.Plot(show_label=False)
            ratings = gr.Plot(show_label=False)
            games = gr.Dataframe(headers=tournament_runs.BATTLE_HEADERS, label="Battles (open any replay)",
                                 datatype=["number", "str", "str", "str", "str", "number", "markdown"],
                                 interactive=False, max_height=100_000, elem_classes=["wc-all-rows"])
    rate.build(ctx)  # "Rate a policy" on the reference ladder, below the tournament
    ui = CompareUI(specs, battles, format_box, seed, mode, run, stop, select, load, status, table,
                   verdicts, win, heat, ratings, games)
    run.click(bind(compare_run, ctx, ui), [specs, battles, format_box, seed, mode, engine],
              ui.outputs(RUN_OUTPUTS),
              api_name="compare_run", concurrency_limit=1, concurrency_id="compare")
    stop.click(bind(compare_stop, ctx), None, status, api_name="compare_stop", concurrency_limit=None)
    load.click(bind(compare_load, ctx, ui), select, ui.outputs(LOAD_OUTPUTS), api_name="compare_load")
    return ui
