"""The Replays tab: open a recording (list, search, upload, share link) into the client viewer.

Opening sends the whole battle once (``viewer.battle_payload``); stepping never calls the server. Parsing a file
and preparing its view run in a worker thread, so one large upload never stalls another session's page.
"""

from __future__ import annotations

import asyncio
import html
import os
import uuid
from dataclasses import dataclass
from typing import Any

import gradio as gr

from wolfeclick.battle.store import MAX_RECORDING_BYTES, RecordingError
from wolfeclick.errors import WolfeClickError
from wolfeclick.ui.analysis_run import controls as analysis_controls
from wolfeclick.ui.analysis_run import wire as wire_analysis
from wolfeclick.ui.analysis_view import stored_view
from wolfeclick.ui.binding import bind
from wolfeclick.ui.components import data_component, viewer_component
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.library import HEAVY_BYTES, LIST_HEADERS, LIST_WIDTHS
from wolfeclick.ui.presentation import int_param, page_of, search_rows
from wolfeclick.ui.quotas import QuotaRefused, evict_oldest, visitor_of
from wolfeclick.ui.rescore_run import controls as rescore_controls
from wolfeclick.ui.rescore_run import wire as wire_rescore
from wolfeclick.ui.tabs.common import failure, message_html
from wolfeclick.ui.uploads import UploadBusy
from wolfeclick.ui.viewer_payload import battle_payload, to_json

__all__ = ["ReplaysUI", "build", "open_replay", "upload", "list_page", "on_load", "DROPDOWN_LIMIT"]

DROPDOWN_LIMIT = 200
"""The dropdown offers the newest this many; the searchable list reaches every recording."""
TAB_IDS = ("live", "replays", "compare", "leaderboard")


@dataclass
class ReplaysUI:
    data: gr.HTML
    viewer: gr.HTML
    select: gr.Dropdown
    upload: gr.File
    message: gr.HTML
    json_file: gr.DownloadButton
    export_file: gr.DownloadButton
    search: gr.Textbox
    page: gr.Number
    caption: gr.Markdown
    table: gr.Dataframe
    rescores: gr.HTML
    takeover: "TakeoverUI"
    pair: "PairUI"

    def opened(self) -> list[Any]:
        """The components opening a replay updates."""
        return [self.data, self.select, self.message, self.json_file, self.export_file, self.rescores]

    def loaded(self) -> list[Any]:
        """The components the page's load event updates (the lists before the rescores: API callers index them)."""
        return [*self.opened()[:-1], self.table, self.page, self.caption, self.rescores, self.pair.a, self.pair.b]


@dataclass
class TakeoverUI:
    """*Take over from here*: a policy for each side, and the shown replay and decision (filled by the page)."""

    p1: gr.Dropdown
    p2: gr.Dropdown
    mode: gr.Radio
    button: gr.Button
    replay_id: gr.Textbox
    step: gr.Number
    timer: gr.Textbox

    def inputs(self, pace: Any) -> list[Any]:
        """``takeover_start``'s inputs; the replay id and step are the 5th and 6th (``TAKEOVER_JS`` fills them)."""
        return [self.p1, self.p2, self.mode, pace, self.replay_id, self.step, self.timer]


TAKEOVER_JS = """(...args) => {
  const viewer = (window.__wcViewers || {}).replays;
  if (viewer && viewer.state.data && viewer.state.data.id) { args[4] = viewer.state.data.id; args[5] = viewer.state.index || 0; }
  return args;
}"""
"""The button reads the shown replay and decision from the client viewer (the server never sees the cursor)."""


SHOW_OPENED_JS = """() => {
  const viewer = document.querySelector('#wc-replays-viewer');
  if (viewer) viewer.scrollIntoView({block: 'start'});
}"""
"""A row clicked in *All recordings* (below the viewer) opens its battle above: the page scrolls to it."""


def _takeover_controls(ctx: AppContext) -> TakeoverUI:
    from wolfeclick.ui.tabs.live import RECORDED, takeover_choices

    with gr.Accordion("Take over from here", open=False, elem_classes=["wc-controls"]):
        gr.Markdown("The shown decision on, chosen policies play the battle on live (its earlier choices are "
                    "replayed exactly); saved as a branch. Choose **You** for a side to play it yourself.")
        p1 = gr.Dropdown(takeover_choices(ctx), value=RECORDED, label="p1 from here", elem_id="wc-takeover-p1")
        p2 = gr.Dropdown(takeover_choices(ctx), value=RECORDED, label="p2 from here", elem_id="wc-takeover-p2")
        mode = gr.Radio(["score", "generate"], value="score", label="Decoding (checkpoints)")
        timer = gr.Textbox(label="Your timer (seconds per decision, when you play)", placeholder="blank = no timer",
                           max_length=8)
        button = gr.Button("⤳ Take over from here", variant="primary", elem_id="wc-takeover")
        replay_id = gr.Textbox(visible=False)
        step = gr.Number(0, visible=False, precision=0)
    return TakeoverUI(p1, p2, mode, button, replay_id, step, timer)


@dataclass
class PairUI:
    """*Compare move by move*: two recordings of one battle start, one decision cursor."""

    a: gr.Dropdown
    b: gr.Dropdown
    button: gr.Button
    step: gr.Slider
    view: gr.HTML


def _pair(ctx: AppContext, a_id: str, b_id: str, step: int | None) -> tuple[str, int, int]:
    """Blocking: the pair at ``step`` (None: at the first divergence), the step shown and the last step."""
    from wolfeclick.ui.sidebyside import check_pair, divergence, pair_html

    a, b = ctx.library.get(a_id), ctx.library.get(b_id)
    check_pair(a, b)
    mark = divergence(a, b)
    view_a, view_b = ctx.library.view(a_id), ctx.library.view(b_id)
    last = max(view_a.steps, view_b.steps) - 1
    shown = max(0, min(last, (mark or 0) if step is None else int(step)))
    return pair_html(view_a, view_b, (a_id, b_id), shown, mark), shown, last


async def compare_pair(ctx: AppContext, pair: PairUI, a_id: str | None, b_id: str | None,
                       step: Any = None) -> dict:
    """API: two recordings side by side at decision number ``step`` (1 is the first, as every text says; blank:
    their first divergence); one line if they are not the same battle start."""
    if not a_id or not b_id:
        return {pair.view: message_html("Choose two recordings with the same seed and format.")}
    try:
        wanted = None if step in (None, "") else int(float(step)) - 1
    except (ValueError, TypeError, OverflowError):
        return {pair.view: message_html("⚠ the decision must be a whole number")}
    try:
        text, shown, last = await asyncio.to_thread(_pair, ctx, str(a_id), str(b_id), wanted)
    except Exception as exc:  # noqa: BLE001 - one line for a user error, a logged bug otherwise
        return {pair.view: message_html(failure(ctx, exc, "compare_pair"))}
    return {pair.view: text, pair.step: gr.Slider(minimum=1, maximum=max(2, last + 1), value=shown + 1, step=1)}


async def compare_first(ctx: AppContext, pair: PairUI, a_id: str | None, b_id: str | None) -> dict:
    return await compare_pair(ctx, pair, a_id, b_id, None)


def _pair_controls(ctx: AppContext) -> PairUI:
    with gr.Accordion("Compare move by move (same seed and format)", open=False):
        with gr.Row():
            a = gr.Dropdown(choices=[], label="Battle A", allow_custom_value=True, scale=2, elem_id="wc-pair-a")
            b = gr.Dropdown(choices=[], label="Battle B", allow_custom_value=True, scale=2, elem_id="wc-pair-b")
            button = gr.Button("⇆ Compare", scale=1)
        step = gr.Slider(1, 2, value=1, step=1, label="Decision (one cursor for both; ←/→ once focused)",
                         elem_id="wc-pair-step")
        view = gr.HTML("", elem_id="wc-pair")
    pair = PairUI(a, b, button, step, view)
    button.click(bind(compare_first, ctx, pair), [a, b], [view, step], api_name="compare_pair_open")
    # input, not release: a person steps the focused slider with the arrow keys as well as by dragging it (release
    # fired for the mouse only); bursts collapse to the last value
    step.input(bind(compare_pair, ctx, pair), [a, b, step], [view, step], api_name="compare_pair",
               trigger_mode="always_last")
    return pair


def choices(ctx: AppContext) -> list[tuple[str, str]]:
    return [(choice_label(i.id, i.format, f"{i.p1} vs {i.p2} ({i.winner}, {i.turns} turns)"), i.id)
            for i in ctx.library.list()[:DROPDOWN_LIMIT]]


def choice_label(replay_id: str, fmt: str, rest: str) -> str:
    """Pure: a recording's dropdown label, its own part first: the box shows the start of the label, and every id of
    a format starts alike (it showed "gen9randombattle-…" whichever battle was open). The whole id is still in it,
    so typing an id finds it."""
    own = replay_id.removeprefix(f"{fmt}-") if fmt and replay_id.startswith(f"{fmt}-") and replay_id != fmt else ""
    return f"{own} · {rest} · {replay_id}" if own else f"{replay_id} — {rest}"


def exact_first(listed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Pure: the same choices, each placed before every choice whose id contains its id (else newest first).

    Gradio's dropdown filters its options by substring and Enter takes the first match, so with branches (whose ids
    extend their parent's) listed first, an exactly typed parent id picked its newest branch. Ordering the list is
    enough, and keeps the labels, values and the browser's own filtering as they are."""
    out: list[tuple[str, str]] = []
    for label, value in listed:
        at = next((k for k, (_, other) in enumerate(out) if value in other), len(out))
        out.insert(at, (label, value))
    return out


def pair_updates(ui: ReplaysUI, listed: list[tuple[str, str]]) -> dict:
    """Battle A and B list the recordings with an exactly typed id first among its matches (see exact_first)."""
    ordered = exact_first(listed)
    return {ui.pair.a: gr.Dropdown(choices=ordered), ui.pair.b: gr.Dropdown(choices=ordered)}


def rescore_summary_html(lines: list[str]) -> str:
    """Pure: the agreement summary of a replay's stored rescores (empty when there are none)."""
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return (f'<div class="wc-card wc-rescore-summary"><div class="wc-subhead">Asked afterwards (rescores)</div>'
            f'<ul>{items}</ul></div>')


def _prepare(ctx: AppContext, replay_id: str, step: int | None,
             turn: int | None) -> tuple[str, str, str, str]:
    """Blocking: the viewer payload (JSON) of a replay opened at a step or turn, its two download files, and the
    summary of its stored rescores."""
    from wolfeclick.ui.presentation import jump_to_turn

    view, lines = ctx.library.annotated(replay_id)
    if step is not None:
        start = view.clamp(step)
    elif turn is not None:
        start = jump_to_turn([t.turn for t in view.turns], turn)[0]
    else:
        start = 0
    payload = battle_payload(view, replay_id=replay_id, start=start, token=uuid.uuid4().hex[:12])
    payload["asked"] = step is not None or turn is not None  # else the viewer keeps its place in this battle
    card, payload["analysis"] = stored_view(ctx.library.directory, ctx.library.get(replay_id), ctx.value_model)
    return (to_json(payload), str(ctx.library.json_file(replay_id)), str(ctx.library.export_html(replay_id)),
            rescore_summary_html(lines) + card)


async def open_replay(ctx: AppContext, ui: ReplaysUI, replay_id: str | None, step: int | None = None,
                      turn: int | None = None, message: str = "") -> dict:
    """Send a replay to the viewer. A replay that cannot be opened leaves the open one alone and says why."""
    if not replay_id:
        return {ui.message: message_html(message or "Choose a recording, or upload one.")}
    try:
        payload, json_path, export_path, summary = await asyncio.to_thread(_prepare, ctx, str(replay_id), step, turn)
    except Exception as exc:  # noqa: BLE001 - split by failure(): one line, or a logged bug
        return {ui.message: message_html(failure(ctx, exc, "open_replay"))}
    return {ui.data: payload, ui.select: gr.update(value=replay_id), ui.message: message_html(message),
            ui.json_file: gr.DownloadButton(value=json_path, interactive=True),
            ui.export_file: gr.DownloadButton(value=export_path, interactive=True), ui.rescores: summary}


async def select(ctx: AppContext, ui: ReplaysUI, replay_id: str | None) -> dict:
    return await open_replay(ctx, ui, replay_id)


async def upload(ctx: AppContext, ui: ReplaysUI, file: Any, request: gr.Request | None = None) -> dict:
    """Validate and store an upload (byte for byte), then open it. A bad upload changes nothing but the message.
    The check runs in the upload worker process (``ui.uploads``), one upload per session at a time."""
    if not file:
        return {ui.message: message_html("Choose a recording file to upload.")}
    path = file if isinstance(file, str) else getattr(file, "name", None) or getattr(file, "path", None)
    if not isinstance(path, str):
        return {ui.message: message_html("⚠ The upload could not be read: Gradio passed no file path.")}
    try:
        def read() -> bytes:
            with open(path, "rb") as handle:  # Gradio's own temporary copy; the uploader's file name is never used
                return handle.read(MAX_RECORDING_BYTES + 1)

        data = await asyncio.to_thread(read)
        limit = ctx.settings.max_upload_bytes
        if len(data) > limit:
            return {ui.message: message_html(f"⚠ The file is over this app's upload limit of {limit / 2**20:g} MB. "
                                             "Nothing was saved.")}
        session = str(getattr(request, "session_hash", None) or id(request))
        visitor = visitor_of(request)
        ctx.upload_quota.admit(visitor, len(data), exists=os.path.exists)  # one line when over a quota
        checked = await ctx.uploads.check(session, data)
        replay_id, created = await asyncio.to_thread(ctx.library.store_checked, data, checked.stored, checked.info)
        stored = ctx.library.path(replay_id)
        ctx.upload_quota.record(visitor, str(stored), len(checked.stored or data), stored=created)
        if created:  # all uploads together stay under the operator's cap: the oldest go first
            await asyncio.to_thread(evict_oldest, ctx.library.directory, ctx.settings.upload_store_bytes,
                                    stored.name)
    except QuotaRefused as exc:
        return {ui.message: message_html(f"⚠ {exc}. Nothing was saved.")}
    except UploadBusy as exc:
        return {ui.message: message_html(f"⚠ {exc}.")}
    except RecordingError as exc:
        return {ui.message: message_html(f"⚠ Not a valid recording: {exc}. Nothing was saved.")}
    except OSError:
        return {ui.message: message_html("⚠ The upload could not be read. Nothing was saved.")}
    except Exception as exc:  # noqa: BLE001
        return {ui.message: message_html(failure(ctx, exc, "upload"))}
    note = "Uploaded" if created else "Already here"
    if len(data) > HEAVY_BYTES:  # opening parses it here: left to whoever opens it, one heavy file at a time
        return {ui.message: message_html(f"✓ {note} as {replay_id} ({len(data) / 1e6:.1f} MB). A file this large "
                                         "takes a few seconds to open: choose it in the list when you want it."),
                ui.select: gr.Dropdown(choices=choices(ctx))}
    update = await open_replay(ctx, ui, replay_id, message=f"✓ {note} as {replay_id}.")
    update[ui.select] = gr.Dropdown(choices=choices(ctx), value=replay_id)
    return update


def list_page(ctx: AppContext, ui: ReplaysUI, query: str | None, page: Any) -> dict:
    """The recordings list, searched (policy, format, winner, source; ``field:word`` narrows) and paged."""
    rows = search_rows([info.as_dict() for info in ctx.library.list()], query)
    shown = page_of(rows, page, ctx.settings.page_size)
    table = [[r["id"], r["p1"], r["p2"], r["winner"], r["turns"], r["format"], r["source"],
              str(r["created"])[:19].replace("T", " ")] for r in shown.rows]
    return {ui.table: table, ui.page: shown.page,
            ui.caption: shown.caption()}


def refresh(ctx: AppContext, ui: ReplaysUI, current: str | None, query: str | None, page: Any) -> dict:
    listed = choices(ctx)
    ids = {value for _, value in listed}
    return {**list_page(ctx, ui, query, page),
            ui.select: gr.Dropdown(choices=listed, value=current if current in ids else None),
            **pair_updates(ui, listed)}


async def select_row(ctx: AppContext, ui: ReplaysUI, rows: Any, evt: gr.SelectData) -> dict:
    try:
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else int(evt.index)
        values = rows.values.tolist() if hasattr(rows, "values") else rows
        replay_id = str(values[row][0])
    except (IndexError, TypeError, ValueError, AttributeError):
        replay_id = None
    return await open_replay(ctx, ui, replay_id)


async def on_load(ctx: AppContext, ui: ReplaysUI, tabs: gr.Tabs, request: gr.Request) -> dict:
    """The page's load: open a share link's replay at its turn/step (or the newest recording) and fill the lists.

    Share links: ``?replay=ID&turn=N`` (``&step=K`` for a decision that is not the turn's first, or the end);
    ``?tab=live|replays|compare`` picks a tab. The id is checked like any replay id.
    """
    try:
        params = dict(request.query_params) if request is not None else {}
    except (AttributeError, TypeError):
        params = {}
    listed = choices(ctx)
    update = {**list_page(ctx, ui, "", 1), ui.select: gr.Dropdown(choices=listed),
              **pair_updates(ui, listed)}
    replay_id = params.get("replay")
    if replay_id is None:
        tab = params.get("tab")
        update[tabs] = gr.Tabs(selected=tab) if tab in TAB_IDS else gr.Tabs()
        if listed:
            update.update(await open_replay(ctx, ui, listed[0][1]))
            update[ui.select] = gr.Dropdown(choices=listed, value=listed[0][1])  # the choices and the value at once
        return update
    update[tabs] = gr.Tabs(selected="replays")
    try:
        ctx.library.path(str(replay_id))
    except WolfeClickError as exc:
        update[ui.message] = message_html(f"⚠ The link's replay could not be opened ({exc}).")
        return update
    opened = await open_replay(ctx, ui, str(replay_id), step=int_param(params.get("step")),
                               turn=int_param(params.get("turn")))
    if ui.data not in opened:
        opened[ui.message] = message_html("⚠ The link's replay could not be opened (no such replay).")
    update.update(opened)
    if ui.data in opened:  # the choices and the value in one update: the value alone showed the bare id, not its label
        update[ui.select] = gr.Dropdown(choices=listed, value=str(replay_id))
    return update


UPLOAD_TYPES = [".json", ".log", ".txt", ".html", ".htm"]
"""What the upload box offers: recordings, server battle logs and replay JSON, protocol logs, saved replay pages."""


def build(ctx: AppContext) -> ReplaysUI:
    """The tab's layout and events (inside a ``gr.Tab``)."""
    with gr.Row(equal_height=False, elem_classes=["wc-tab-row"]):
        with gr.Column(scale=1, min_width=260, elem_classes=["wc-controls-col"]):
            with gr.Accordion("Recording", open=True, elem_classes=["wc-controls"]):
                select_box = gr.Dropdown(choices=[], label="Recording", allow_custom_value=True,
                                         elem_id="wc-replays-select")
                upload_box = gr.File(label="Upload a recording or a battle log (.json, .log, a saved replay .html)",
                                     file_types=UPLOAD_TYPES, type="filepath",
                                     height=110, elem_id="wc-replays-upload")
                message = gr.HTML("", js_on_load=None)
                with gr.Row():
                    json_file = gr.DownloadButton("⬇ JSON", size="sm", interactive=False)
                    export_file = gr.DownloadButton("⬇ Showdown replay", size="sm", interactive=False)
                refresh_button = gr.Button("↻ Refresh lists", size="sm")
            takeover = _takeover_controls(ctx)
            analysis = analysis_controls(ctx.settings.max_k)
            rescore = rescore_controls(ctx)
        with gr.Column(scale=4, elem_classes=["wc-battle-col"]):
            rescores = gr.HTML("", elem_id="wc-replays-rescores")
            viewer = viewer_component("replays", "wc-replays-viewer")
            data = data_component("wc-replays-data")
    with gr.Accordion("All recordings (search; click a row to open it)", open=True):
        with gr.Row():
            search = gr.Textbox(label="Search", placeholder="policy, format, winner, source (e.g. source:tournament)",
                                scale=4)
            # no ``minimum``: Gradio refuses a value below it with red Error badges and an empty table, while page_of
            # clamps any page to the first or last one (a person typing 0 or -1 means "the start")
            page = gr.Number(1, label="Page", precision=0, scale=1, elem_id="wc-replays-page")
        caption = gr.Markdown("")
        table = gr.Dataframe(headers=LIST_HEADERS, datatype="str", interactive=False, wrap=True,
                             column_widths=LIST_WIDTHS, elem_id="wc-replays-table")
    pair = _pair_controls(ctx)
    ui = ReplaysUI(data, viewer, select_box, upload_box, message, json_file, export_file, search, page, caption,
                   table, rescores, takeover, pair)
    select_box.input(bind(select, ctx, ui), select_box, ui.opened(), api_visibility="private")
    upload_box.upload(bind(upload, ctx, ui), upload_box, ui.opened(), api_name="replay_upload")
    search.submit(bind(list_page, ctx, ui), [search, page], [table, page, caption], api_visibility="private")
    page.submit(bind(list_page, ctx, ui), [search, page], [table, page, caption], api_visibility="private")
    refresh_button.click(bind(refresh, ctx, ui), [select_box, search, page],
                         [table, page, caption, select_box, pair.a, pair.b],
                         api_name="replays_refresh")
    table.select(bind(select_row, ctx, ui), table, ui.opened(), api_visibility="private").then(
        None, None, None, js=SHOW_OPENED_JS, api_visibility="private")
    wire_analysis(ctx, analysis, select_box, bind(open_replay, ctx, ui), ui.opened())
    wire_rescore(ctx, rescore, select_box, bind(open_replay, ctx, ui), ui.opened())
    return ui
