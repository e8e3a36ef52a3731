"""The Leaderboard tab: every battle in the app's history rated together, and a page per policy.

The history is the app's results folder and recordings library (``ui.history_index``), the table is
``arena.leaderboard`` over it (what the CLI's ``leaderboard`` prints), a policy's page is
``arena.policy_history``; this module only lays them out. The index is rebuilt once when the tab is first opened
in a session and whenever Refresh is pressed; filters re-read it. All of that runs in a worker thread. Share a
policy's page with ``?policy=NAME`` (handled by the app's load event).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

import gradio as gr

from wolfeclick.arena.charts import rating_history_chart
from wolfeclick.arena.leaderboard import MIN_BATTLES, SOURCES, BoardQuery, parse_query
from wolfeclick.arena.policy_history import policy_page
from wolfeclick.battle.schema import is_valid_id
from wolfeclick.errors import InputError
from wolfeclick.ui import board_view as view
from wolfeclick.ui import yardstick_view
from wolfeclick.ui.binding import bind
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.history_index import Computed
from wolfeclick.ui.tabs.common import failure
from wolfeclick.ui.tabs.links import page_url

__all__ = ["LeaderboardUI", "build", "refresh", "apply_filters", "first_open", "show_policy", "open_link",
           "leaderboard_json", "policy_json", "TAB_ID"]

TAB_ID = "leaderboard"
MAX_POLICY_CHARS = 300
FRESH_S = 5.0
LEADERBOARD_WAIT_S = 1.0
"""A view waits at most this long for a rebuild, then shows the last table and says it is updating."""
"""A first opening within this many seconds of a rebuild reads that index instead of rebuilding it again."""


@dataclass
class LeaderboardUI:
    format: gr.Dropdown
    since: gr.Textbox
    sources: gr.CheckboxGroup
    min_battles: gr.Number
    period: gr.Radio
    refresh: gr.Button
    status: gr.Markdown
    table: gr.Dataframe
    too_few: gr.Dataframe
    matrix: gr.Dataframe
    downloads: list[gr.DownloadButton]
    """One button per export (``DOWNLOADS``), each naming what it gives."""
    policy: gr.Dropdown
    page: gr.HTML
    record: gr.Dataframe
    chart: gr.Plot
    recent: gr.Dataframe
    loaded: gr.State

    def filters(self) -> list[Any]:
        return [self.format, self.since, self.sources, self.min_battles, self.period]

    def page_outputs(self) -> list[Any]:
        return [self.page, self.record, self.chart, self.recent]

    def outputs(self) -> list[Any]:
        """Everything a refresh updates (the table, its exports, the policy list and the open page)."""
        return [self.status, self.table, self.too_few, self.matrix, *self.downloads, self.format, self.policy,
                self.loaded, *self.page_outputs()]


def _filters_text(query: BoardQuery) -> str:
    parts = []
    if query.format:
        parts.append(f"format {query.format}")
    if query.since:
        parts.append(f"since {query.since}")
    if query.sources:
        parts.append("source " + ", ".join(query.sources))
    return f" ({'; '.join(parts)})" if parts else ""


def _check_policy(policy: Any) -> str:
    if not isinstance(policy, str) or not policy.strip():
        raise InputError("choose a policy")
    if len(policy) > MAX_POLICY_CHARS or "\n" in policy:
        raise InputError("a policy spec is at most 300 characters on one line")
    return policy.strip()


def _has_replay(ctx: AppContext):
    def check(battle: str) -> bool:
        return is_valid_id(battle) and (ctx.library.directory / f"{battle}.json").is_file()

    return check


def _page_update(ctx: AppContext, ui: LeaderboardUI, computed: Computed, policy: str, request: Any) -> dict:
    if not any(policy in (e.p1, e.p2) for e in computed.entries):
        raise InputError(f"no battles of {policy[:60]!r} in this view of the history")
    page = policy_page(computed.entries, computed.board, policy)
    share = page_url(request) + view.policy_query(policy)
    return {ui.page: view.page_html(page, share), ui.record: view.record_rows(page),
            ui.chart: rating_history_chart(policy, page.history), ui.recent: view.recent_rows(page, _has_replay(ctx))}


def _compute(ctx: AppContext, query: BoardQuery, rebuild: bool) -> tuple[Computed, list[str]]:
    computed = ctx.standings.compute(query, rebuild=rebuild, wait_s=LEADERBOARD_WAIT_S)
    files = ctx.standings.export(computed.board, ctx.library.exports)
    return computed, [str(p) for p in files]


async def _table(ctx: AppContext, ui: LeaderboardUI, filters: tuple, policy: Any, rebuild: bool,
                 request: Any) -> dict:
    return (await _table_for(ctx, ui, filters, policy, rebuild, request))[0]


async def _table_for(ctx: AppContext, ui: LeaderboardUI, filters: tuple, policy: Any, rebuild: bool,
                     request: Any, stand_in: bool = True) -> tuple[dict, str | None]:
    """The table's updates and the policy whose page they open (None when the table could not be built, or when
    ``policy`` has no row and no ``stand_in``, the top policy, may open in its place)."""
    try:
        query = parse_query(*filters)
        computed, files = await asyncio.to_thread(_compute, ctx, query, rebuild)
    except Exception as exc:  # noqa: BLE001 - one line for a user error, a logged bug otherwise
        return {ui.status: failure(ctx, exc, "leaderboard")}, None
    board = computed.board
    names = [r.policy for r in board.rows + board.too_few]
    chosen = policy if isinstance(policy, str) and policy in names else (names[0] if names and stand_in else None)
    out: dict[Any, Any] = {
        ui.status: view.status_text(board, len(computed.entries), computed.skipped, _filters_text(query),
                                      len(computed.unrated), computed.notes),
        ui.table: view.table_rows(board), ui.too_few: view.too_few_rows(board), ui.matrix: view.matrix_rows(board),
        **dict(zip(ui.downloads, files)),  # plain paths: an API caller gets the four files
        ui.format: gr.Dropdown(choices=["all", *computed.formats]),
        ui.policy: gr.Dropdown(choices=names, value=chosen), ui.loaded: True,
    }
    if chosen is not None:
        out.update(await asyncio.to_thread(_page_update, ctx, ui, computed, chosen, request))
    return out, chosen


async def refresh(ctx: AppContext, ui: LeaderboardUI, format_id: Any, since: Any, sources: Any, min_battles: Any,
                  period: Any, policy: Any, request: gr.Request | None = None) -> dict:
    """Rebuild the index from the files on disk, then the table, its exports and the open policy page."""
    return await _table(ctx, ui, (format_id, since, sources, min_battles, period), policy, True, request)


async def apply_filters(ctx: AppContext, ui: LeaderboardUI, format_id: Any, since: Any, sources: Any,
                        min_battles: Any, period: Any, policy: Any, request: gr.Request | None = None) -> dict:
    """The table over the last index, cut by the filters (an index is built if there is none yet)."""
    return await _table(ctx, ui, (format_id, since, sources, min_battles, period), policy, False, request)


async def first_open(ctx: AppContext, ui: LeaderboardUI, loaded: Any, format_id: Any, since: Any, sources: Any,
                     min_battles: Any, period: Any, policy: Any, request: gr.Request | None = None) -> dict:
    """The tab's first opening in a session rebuilds the index (unless a rebuild has just finished, e.g. for the
    share link that selected the tab); later openings leave the table as it is."""
    if loaded or _opened_by_link(request):
        return {ui.loaded: True}  # a dict keyed by a component: Gradio reads an empty dict as one bare value
    return await _table(ctx, ui, (format_id, since, sources, min_battles, period), policy,
                        not ctx.standings.rebuilt_within(FRESH_S), request)


def _opened_by_link(request: Any) -> bool:
    """Whether the page's own link names this tab (``?policy=``, ``?tab=leaderboard``): the page selects the tab
    at once (``assets/early.js``) and its load event fills it, the link's policy page included; this opening must
    not race it with the top policy's page."""
    try:
        params = dict(request.query_params)
    except (AttributeError, TypeError):
        return False
    return "replay" not in params and ("policy" in params or params.get("tab") == TAB_ID)


async def show_policy(ctx: AppContext, ui: LeaderboardUI, policy: Any, format_id: Any, since: Any, sources: Any,
                      min_battles: Any, period: Any, request: gr.Request | None = None) -> dict:
    """A policy's page over the current index and filters."""
    try:
        name = _check_policy(policy)
        query = parse_query(format_id, since, sources, min_battles, period)
        computed = await asyncio.to_thread(ctx.standings.compute, query, rebuild=False)
        return {**await asyncio.to_thread(_page_update, ctx, ui, computed, name, request), ui.status: gr.update()}
    except Exception as exc:  # noqa: BLE001
        return {ui.status: failure(ctx, exc, "policy page")}


async def open_link(ctx: AppContext, ui: LeaderboardUI, params: dict[str, str], request: Any) -> dict:
    """The load event's part for this tab: ``?policy=NAME`` (or ``?tab=leaderboard``) builds the table and opens
    that policy's page; a policy the history does not know opens the top one, with one line saying so."""
    policy = params.get("policy")
    out, chosen = await _table_for(ctx, ui, (None, None, None, MIN_BATTLES, "tournament"), policy, True, request,
                                   stand_in=policy is None)
    if policy is not None and ui.table in out and chosen != policy:
        # the page's place says so: another policy's page standing in for the link's read as the link's answer
        out.update({ui.status: f"⚠ The link's policy {str(policy)[:60]!r} has no battles in this history.",
                    ui.page: view.missing_page_html(str(policy)[:60])})
    return out


# ------------------------------------------------------------------------------------------------------ API
def leaderboard_json(ctx: AppContext, format_id: str = "all", since: str = "", sources: str = "",
                     min_battles: int = MIN_BATTLES, period: str = "tournament") -> dict:
    """API: rebuild the index and return the table ({"battles", "anchor", "rows", "too_few", "matrix", …}, as the
    CLI's ``--json``, plus "entries" and "skipped"); a bad filter is {"error": one line}."""
    try:
        computed = ctx.standings.compute(parse_query(format_id, since, sources, min_battles, period), rebuild=True)
    except Exception as exc:  # noqa: BLE001
        return {"error": failure(ctx, exc, "leaderboard api").removeprefix("⚠ ")}
    return {**computed.board.to_dict(), "entries": len(computed.entries), "skipped": len(computed.skipped),
            "unrated": len(computed.unrated), "notes": computed.notes}


def policy_json(ctx: AppContext, policy: str, format_id: str = "all", since: str = "", sources: str = "",
                min_battles: int = MIN_BATTLES, period: str = "tournament") -> dict:
    """API: rebuild the index and return one policy's page: its table row, record against every opponent (Wilson
    intervals), Glicko-2 rating per period, recent battles (each with a "link" that opens its replay, or null when
    the library does not hold it), checkpoints seen, and the page's share query."""
    try:
        name = _check_policy(policy)
        computed = ctx.standings.compute(parse_query(format_id, since, sources, min_battles, period), rebuild=True)
        if not any(name in (e.p1, e.p2) for e in computed.entries):
            raise InputError(f"no battles of {name[:60]!r} in this view of the history")
    except Exception as exc:  # noqa: BLE001
        return {"error": failure(ctx, exc, "policy api").removeprefix("⚠ ")}
    data = policy_page(computed.entries, computed.board, name).to_dict()
    has = _has_replay(ctx)
    for battle in data["recent"]:
        battle["link"] = view.replay_query(battle["battle"]) if has(battle["battle"]) else None
    data["share"] = view.policy_query(name)
    return data


def register(ctx: AppContext) -> None:
    gr.api(bind(leaderboard_json, ctx), api_name="leaderboard")
    gr.api(bind(policy_json, ctx), api_name="leaderboard_policy")


def _link_last(headers: list[str]) -> list[Literal["str", "markdown"]]:
    """A table's column types: text, and a markdown link in the last column."""
    return ["markdown" if index == len(headers) - 1 else "str" for index in range(len(headers))]


DOWNLOADS = ("⬇ Table · JSON", "⬇ Table · CSV", "⬇ Pairings · JSON", "⬇ Pairings · CSV")
"""The export buttons' labels, in ``Standings.export``'s order (``EXPORT_NAMES``: leaderboard.json, leaderboard.csv,
matrix.json, matrix.csv). A file list in the controls column cut every name to its extension and size."""


def _download_buttons() -> list[gr.DownloadButton]:
    """The four exports, two buttons a row under one caption; each is given its file by the first table."""
    gr.HTML('<div class="wc-downloads-caption">Downloads: this table and every pairing, as the CLI exports them '
            "(<code>leaderboard --json/--csv</code>)</div>")
    buttons: list[gr.DownloadButton] = []
    for row in (DOWNLOADS[:2], DOWNLOADS[2:]):
        with gr.Row(elem_classes=["wc-downloads"]):
            buttons += [gr.DownloadButton(label, size="sm", min_width=100) for label in row]
    return buttons


def build(ctx: AppContext) -> LeaderboardUI:
    """The tab's layout and events (inside a ``gr.Tab``)."""
    with gr.Row(equal_height=False, elem_classes=["wc-tab-row"]):
        with gr.Column(scale=1, min_width=260, elem_classes=["wc-controls-col"]):
            with gr.Accordion("Which battles", open=True, elem_classes=["wc-controls"]):
                format_box = gr.Dropdown(["all"], value="all", label="Format", allow_custom_value=True)
                since = gr.Textbox(label="Since (ISO date)", placeholder="2026-12-01", max_length=40)
                sources = gr.CheckboxGroup(list(SOURCES), value=[], label="Source (none ticked: all)")
                min_battles = gr.Number(MIN_BATTLES, label="Rank policies with at least this many battles",
                                        precision=0)
                period = gr.Radio(["tournament", "day"], value="tournament", label="Glicko-2 rating period")
                refresh_button = gr.Button("↻ Refresh (rebuild from history)", variant="primary")
                downloads = _download_buttons()
        with gr.Column(scale=4):
            status = gr.Markdown("Open this tab or press **Refresh** to rate every battle played here.")
            table = gr.Dataframe(headers=view.TABLE_HEADERS, label="Leaderboard (Bradley–Terry, random = 1000)",
                                 datatype=_link_last(view.TABLE_HEADERS), interactive=False)
            too_few = gr.Dataframe(headers=view.TABLE_HEADERS, label="Too few battles (rated with everyone, not "
                                   "ranked)", datatype=_link_last(view.TABLE_HEADERS), interactive=False)
            with gr.Accordion("Every pairing", open=False):
                matrix = gr.Dataframe(headers=view.MATRIX_HEADERS, datatype="str", interactive=False)
            with gr.Accordion("Reference ladder: the fixed scale a gauntlet rates on", open=False):
                gr.HTML(yardstick_view.shipped_html(), elem_id="wc-yardstick")
    with gr.Group(elem_id="wc-policy-page"):
        policy = gr.Dropdown(choices=[], label="Policy page", allow_custom_value=True)
        page = gr.HTML("", elem_id="wc-policy-head")
        with gr.Row(equal_height=False, elem_classes=["wc-chart-row"]):
            record = gr.Dataframe(headers=view.RECORD_HEADERS, label="Against every opponent (score: ties ½)",
                                  datatype=_link_last(view.RECORD_HEADERS), interactive=False, elem_id="wc-policy-record")
            chart = gr.Plot(show_label=False)
        recent = gr.Dataframe(headers=view.RECENT_HEADERS, label="Recent battles (open any replay)",
                              datatype=_link_last(view.RECENT_HEADERS), interactive=False, elem_id="wc-policy-recent",
                              max_height=100_000)
    loaded = gr.State(False)
    ui = LeaderboardUI(format_box, since, sources, min_battles, period, refresh_button, status, table, too_few,
                       matrix, downloads, policy, page, record, chart, recent, loaded)
    refresh_button.click(bind(refresh, ctx, ui), [*ui.filters(), policy], ui.outputs(),
                         api_name="leaderboard_refresh", concurrency_limit=2, concurrency_id="leaderboard")
    for box in (format_box, sources, period):
        box.input(bind(apply_filters, ctx, ui), [*ui.filters(), policy], ui.outputs(), api_visibility="private")
    for typed in (since, min_battles):
        typed.submit(bind(apply_filters, ctx, ui), [*ui.filters(), policy], ui.outputs(), api_visibility="private")
    policy.input(bind(show_policy, ctx, ui), [policy, *ui.filters()], [*ui.page_outputs(), status],
                 api_name="leaderboard_page")
    return ui
