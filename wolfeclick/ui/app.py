"""The Gradio app: Live, Replays and Compare tabs around one battle view. Thin wiring only.

Rendering lives in ``view.py`` (pure), recordings in ``library.py``, live battles in ``live.py``, tournaments in
``compare.py``. Every handler here turns inputs into calls on those and their results into component updates, and
every action has an ``api_name`` so ``gradio_client`` can drive the app (see docs/app.md for the list).

Share links: ``?replay=ID&turn=N`` (and optionally ``&step=K``, the decision index) are read in the page's load
event. The id must match the recording id pattern and is resolved inside the recordings folder only.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from html import escape as html_escape
from pathlib import Path
from typing import Any, AsyncIterator
from urllib.parse import urlencode, urlsplit, urlunsplit

import gradio as gr
from gradio.components.plot import PlotData

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.battle.store import MAX_RECORDING_BYTES, RecordingError
from wolfeclick.ui import compare as compare_mod
from wolfeclick.ui.library import LIST_HEADERS, SOURCE_FILTERS, Library
from wolfeclick.ui.live import (
    AGENT_CHOICES,
    CUSTOM,
    FORMATS,
    OPPONENT_CHOICES,
    LiveError,
    check_format,
    default_pace,
    hardware_report,
    one_line,
    parse_seed,
    probe_hardware,
    resolve_spec,
    run_live,
)
from wolfeclick.ui.view import BattleView, step_for_turn

__all__ = ["build_app", "launch", "launch_options", "share_query", "CSS_PATH"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CSS_PATH = PROJECT_ROOT / "assets" / "app.css"
TITLE = "WolfeClick Arena"
INTRO = ("Watch Pokémon Showdown agents battle, step through recorded battles turn by turn, and compare policies. "
         "<b>Live</b>: pick two policies and press Start. <b>Replays</b>: open a recording, step back to any turn "
         "and copy the link to it. <b>Compare</b>: run a small tournament.")
EMPTY_VIEW = '<div class="wc-card wc-muted">No battle to show yet.</div>'
SPEEDS = [0.5, 1.0, 2.0, 4.0, 8.0]
COMPARE_BASELINES = ["random", "maxdamage", "heuristic", "preset:run1", "preset:run2", "preset:run3"]


def _plot(figure: dict[str, Any] | None) -> PlotData | None:
    if figure is None:
        return None
    return PlotData(type="plotly", plot=json.dumps(figure, separators=(",", ":")))


# --------------------------------------------------------------------------------------------------------------
# Share links
# --------------------------------------------------------------------------------------------------------------
def _page_url(request: gr.Request | None) -> str:
    """The page's own URL (no query): from the Referer the browser sends, else the server's base URL."""
    for getter in (lambda r: r.headers.get("referer"), lambda r: str(r.request.base_url)):
        try:
            value = getter(request) if request is not None else None
        except Exception:
            value = None
        if value and value.startswith(("http://", "https://")):
            parts = urlsplit(value)
            return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))
    return ""


def _message(text: str) -> str:
    """A one-line message for the page, as escaped HTML (upload errors can quote the uploaded file's content)."""
    return f'<div class="wc-message">{html_escape(text)}</div>' if text else ""


def share_query(replay_id: str, view: BattleView, index: int) -> str:
    """``?replay=ID&turn=N`` (``&step=K`` added when K is not the first decision of turn N)."""
    turn = view.turns[index].turn if view.turns else 0
    params = {"replay": replay_id, "turn": turn}
    if view.turns and step_for_turn(view.turns, turn) != index:
        params["step"] = index
    return "?" + urlencode(params)


def _int_param(value: Any, limit: int = 10**6) -> int | None:
    text = str(value or "").strip()
    if not text or len(text) > 7 or not text.isdigit():
        return None
    return min(int(text), limit)


# --------------------------------------------------------------------------------------------------------------
# The app
# --------------------------------------------------------------------------------------------------------------
def build_app(library: Library | None = None) -> gr.Blocks:
    """Build the Blocks. ``library`` defaults to the recordings folder named by ``$WOLFECLICK_RECORDINGS``."""
    lib = library or Library()
    live_stops: dict[str, asyncio.Event] = {}
    compare_stops: dict[str, asyncio.Event] = {}

    # ---------------------------------------------------------------- replay helpers
    def replay_choices(source: str | None = None) -> list[tuple[str, str]]:
        return [(f"{i.id} — {i.p1} vs {i.p2} ({i.winner}, {i.turns} turns)", i.id) for i in lib.list(source)]

    def list_rows(source: str | None = None) -> list[list[Any]]:
        return [info.row() for info in lib.list(source)]

    def view_outputs(replay_id: str, index: int, perspective: str, request: gr.Request | None) -> list[Any]:
        view = lib.view(replay_id)
        index = view.clamp(index)
        html, hp, reward = view.render(index, perspective or "p1")
        query = share_query(replay_id, view, index)
        page = _page_url(request)
        return [
            html, _plot(hp), _plot(reward),
            gr.Slider(minimum=0, maximum=max(1, len(view) - 1), value=index, step=1,
                      label=f"Decision {index + 1} of {len(view)} (turn {view.turns[index].turn if view.turns else 0})"),
            (page + query) if page else query,
            index,
        ]

    def blank_view(message: str) -> list[Any]:
        return [f'<div class="wc-card wc-muted">{html_escape(message)}</div>', None, None,
                gr.Slider(minimum=0, maximum=1, value=0, step=1, label="Decision"), "", 0]

    def open_outputs(replay_id: str | None, index: int, perspective: str, request: gr.Request | None,
                     message: str = "", choices: list[tuple[str, str]] | None = None) -> list[Any]:
        dropdown = gr.Dropdown(choices=choices if choices is not None else replay_choices(),
                               value=replay_id if replay_id else None)
        if not replay_id:
            return [*blank_view("Choose a recording, or upload one."), dropdown,
                    gr.DownloadButton(value=None, interactive=False), gr.DownloadButton(value=None, interactive=False),
                    _message(message)]
        try:
            outputs = view_outputs(replay_id, index, perspective, request)
            json_path = str(lib.path(replay_id))
            html_path = str(lib.export_html(replay_id))
        except RecordingError as exc:
            return [*blank_view("Replay not available."), gr.Dropdown(choices=dropdown.choices, value=None),
                    gr.DownloadButton(value=None, interactive=False), gr.DownloadButton(value=None, interactive=False),
                    _message(f"⚠ {exc}")]
        return [*outputs, dropdown, gr.DownloadButton(value=json_path, interactive=True),
                gr.DownloadButton(value=html_path, interactive=True), _message(message)]

    # ---------------------------------------------------------------- handlers: replays
    def replay_open(replay_id: str, perspective: str = "p1", request: gr.Request = None):
        return open_outputs(replay_id, 0, perspective, request)

    def replay_show(replay_id: str, step: float, perspective: str = "p1", request: gr.Request = None):
        try:
            return view_outputs(replay_id, int(step or 0), perspective, request)
        except RecordingError as exc:
            return blank_view(f"⚠ {exc}")

    def nav(delta: int | None, to_end: bool = False):
        def handler(replay_id: str, step: float, perspective: str = "p1", request: gr.Request = None):
            if not replay_id:
                return blank_view("Choose a recording first.")
            try:
                view = lib.view(replay_id)
            except RecordingError as exc:
                return blank_view(f"⚠ {exc}")
            if delta is None:
                target = len(view) - 1 if to_end else 0
            else:
                target = int(step or 0) + delta
            return view_outputs(replay_id, view.clamp(target), perspective, request)

        return handler

    def replay_jump(replay_id: str, turn: float, perspective: str = "p1", request: gr.Request = None):
        try:
            view = lib.view(replay_id)
        except RecordingError as exc:
            return blank_view(f"⚠ {exc}")
        return view_outputs(replay_id, step_for_turn(view.turns, int(turn or 0)), perspective, request)

    def replay_tick(replay_id: str, step: float, perspective: str, playing: bool, request: gr.Request = None):
        try:
            view = lib.view(replay_id)
        except RecordingError:
            return [*blank_view("Replay not available."), gr.Timer(active=False), gr.Button(value="▶ Play"), False]
        target = view.clamp(int(step or 0) + 1)
        at_end = target >= len(view) - 1
        outputs = view_outputs(replay_id, target, perspective, request)
        if at_end:
            return [*outputs, gr.Timer(active=False), gr.Button(value="▶ Play"), False]
        return [*outputs, gr.Timer(active=True), gr.Button(value="❚❚ Pause"), True]

    def replay_play(replay_id: str, step: float, playing: bool, speed: float):
        if playing or not replay_id:
            return gr.Timer(active=False), gr.Button(value="▶ Play"), False
        try:
            view = lib.view(replay_id)
        except RecordingError:
            return gr.Timer(active=False), gr.Button(value="▶ Play"), False
        if int(step or 0) >= len(view) - 1:  # at the end already: nothing to play
            return gr.Timer(active=False), gr.Button(value="▶ Play"), False
        return gr.Timer(value=1.0 / max(0.1, float(speed or 1.0)), active=True), gr.Button(value="❚❚ Pause"), True

    def replay_speed(speed: float, playing: bool):
        return gr.Timer(value=1.0 / max(0.1, float(speed or 1.0)), active=bool(playing))

    def replay_refresh(current: str | None, source: str = "all"):
        choices = replay_choices(source)
        ids = {value for _, value in choices}
        return list_rows(source), gr.Dropdown(choices=choices, value=current if current in ids else None)

    def replay_select_row(rows: Any, perspective: str, evt: gr.SelectData, request: gr.Request = None):
        try:
            row = evt.index[0] if isinstance(evt.index, (list, tuple)) else int(evt.index)
            values = rows.values.tolist() if hasattr(rows, "values") else rows
            replay_id = str(values[row][0])
        except (IndexError, TypeError, ValueError, AttributeError):
            replay_id = None
        return open_outputs(replay_id, 0, perspective, request)

    def replay_upload(file: Any, perspective: str = "p1", request: gr.Request = None):
        if not file:
            return open_outputs(None, 0, perspective, request, "Choose a recording file to upload.")
        path = file if isinstance(file, str) else getattr(file, "name", None) or getattr(file, "path", None)
        try:
            with open(path, "rb") as handle:  # Gradio's own temporary copy; the uploader's file name is never used
                data = handle.read(MAX_RECORDING_BYTES + 1)
            recording, created = lib.upload(data)
        except RecordingError as exc:
            return open_outputs(None, 0, perspective, request, f"⚠ Not a valid recording: {exc}. Nothing was saved.")
        except OSError:
            return open_outputs(None, 0, perspective, request, "⚠ The upload could not be read. Nothing was saved.")
        note = "Uploaded" if created else "Already here"
        return open_outputs(recording.id, 0, perspective, request, f"✓ {note} as {recording.id}.")

    # ---------------------------------------------------------------- handlers: share links / load
    def on_load(request: gr.Request):
        params = {}
        try:
            params = dict(request.query_params) if request is not None else {}
        except Exception:
            params = {}
        replay_id = params.get("replay")
        choices = replay_choices()
        if replay_id is None:
            newest = choices[0][1] if choices else None
            tab = params.get("tab")
            selected = gr.Tabs(selected=tab) if tab in ("live", "replays", "compare") else gr.Tabs()
            return [selected, *open_outputs(newest, 0, "p1", request, choices=choices)]
        replay_id = str(replay_id)
        try:
            view = lib.view(replay_id)
        except RecordingError as exc:
            reason = "invalid replay id" if "invalid" in str(exc) else "no such replay"
            return [gr.Tabs(selected="replays"),
                    *open_outputs(None, 0, "p1", request, f"⚠ The link's replay could not be opened ({reason}).",
                                  choices=choices)]
        step = _int_param(params.get("step"))
        turn = _int_param(params.get("turn"))
        index = step if step is not None else step_for_turn(view.turns, turn) if turn is not None else 0
        return [gr.Tabs(selected="replays"), *open_outputs(replay_id, view.clamp(index), "p1", request,
                                                           choices=choices)]

    async def on_load_hardware():
        info = await asyncio.to_thread(probe_hardware)
        return hardware_report(info)

    # ---------------------------------------------------------------- handlers: live
    async def live_start(agent: str, agent_custom: str, opponent: str, opponent_custom: str, format_id: str,
                         seed: str, mode: str, pace: float, request: gr.Request = None,
                         progress: gr.Progress = gr.Progress()) -> AsyncIterator[list[Any]]:
        """Start a live battle and stream its turns (outputs: status, view, HP chart, reward chart, link, turn)."""
        skip = gr.skip()
        try:
            p1 = resolve_spec(agent, agent_custom)
            p2 = resolve_spec(opponent, opponent_custom)
            format_id = check_format(format_id)
            seed_value = parse_seed(seed)
        except LiveError as exc:
            yield [f"⚠ {exc}", skip, skip, skip, "", None, gr.Button(visible=False), None]
            return
        session = _session_key(request)
        stop = _session_stop(live_stops, request)
        title = f"**{p1}** vs **{p2}** · {format_id} · seed {seed_value}"
        try:
            pace_value = max(0.0, min(5.0, float(pace if pace is not None else default_pace())))
        except (TypeError, ValueError):
            pace_value = default_pace()
        try:
            async for event in run_live(p1, p2, format_id=format_id, seed=seed_value, mode=mode or "score",
                                        pace=pace_value, max_turns=DEFAULT_MAX_TURNS, stop=stop, library=lib):
                if event.kind == "loading":
                    progress(None, desc=event.message)
                    if event.view is None:
                        yield [f"Loading · {event.message}", skip, skip, skip, "", skip, skip, skip]
                    else:
                        html, hp, reward = event.view.render(0)
                        yield [f"{title} · {event.message}", html, None, None, "", skip, gr.Button(visible=False), None]
                elif event.kind == "turn":
                    view = event.view
                    html, hp, reward = view.render(len(view) - 1)
                    yield [f"● Live · {title} · turn {event.turn.turn} · {len(view)} decisions", html, _plot(hp),
                           _plot(reward), "", event.turn.model_dump(mode="json"), skip, skip]
                elif event.kind == "error":
                    yield [f"⚠ {event.message}", skip, skip, skip, "", {"error": event.message}, skip, skip]
                    return
                else:  # done
                    view, recording = event.view, event.recording
                    index = len(view) - 1
                    html, hp, reward = view.render(index)
                    query = share_query(recording.id, view, index) if len(view) else f"?replay={recording.id}"
                    page = _page_url(request)
                    link = (page + query) if page else query
                    result = view.meta.result or {}
                    ended = "Stopped" if result.get("reason") == "aborted" else "Finished"
                    yield [f"{ended} · {title} · {event.message}", html, _plot(hp), _plot(reward),
                           f"Recorded as `{recording.id}`. Replay link: [{link}]({query})",
                           {"done": True, "recording": recording.id, "result": result, "link": link},
                           gr.Button(visible=True), recording.id]
        finally:
            if live_stops.get(session) is stop:
                live_stops.pop(session, None)

    async def live_stop(request: gr.Request = None) -> str:
        """Stop this session's live battle (what was played is still recorded)."""
        return _request_stop(live_stops, request, "No live battle is running in this session.", "■ Stopping…")

    async def battle_stream(p1: str, p2: str, format_id: str = DEFAULT_FORMAT, seed: int = 0,
                            max_turns: int = DEFAULT_MAX_TURNS) -> AsyncIterator[dict]:
        """API: play a battle and stream each turn record as JSON, then {"done": true, "recording": id, ...}."""
        try:
            p1s, p2s = resolve_spec(p1, None), resolve_spec(p2, None)
            format_id = check_format(format_id)
            seed_value = parse_seed(seed)
            turns_cap = max(1, min(DEFAULT_MAX_TURNS, int(max_turns)))
        except (LiveError, TypeError, ValueError) as exc:
            yield {"error": one_line(exc)}
            return
        async for event in run_live(p1s, p2s, format_id=format_id, seed=seed_value, max_turns=turns_cap,
                                    library=lib):
            if event.kind == "turn":
                yield event.turn.model_dump(mode="json")
            elif event.kind == "error":
                yield {"error": event.message}
                return
            elif event.kind == "done":
                yield {"done": True, "recording": event.recording.id,
                       "result": event.recording.result.model_dump(mode="json")}

    # ---------------------------------------------------------------- handlers: API-only replay access
    def list_replays(source: str = "all") -> list[dict]:
        """API: the recordings (id, p1, p2, winner, turns, format, created, source), newest first; ``source``
        keeps one kind (played, tournament, training, branch, imported, ladder)."""
        return [info.as_dict() for info in lib.list(source)]

    def get_replay(replay_id: str) -> dict:
        """API: one recording as JSON ({"error": …} for an unknown or invalid id)."""
        try:
            return json.loads(lib.get(replay_id).to_json())
        except RecordingError as exc:
            return {"error": str(exc)}

    def replay_turn(replay_id: str, step: int = 0, perspective: str = "p1") -> dict:
        """API: one decision point rendered: {"html", "turn", "step", "steps", "hp_figure", "reward_figure"}."""
        try:
            view = lib.view(replay_id)
        except RecordingError as exc:
            return {"error": str(exc)}
        index = view.clamp(int(step or 0))
        html, hp, reward = view.render(index, perspective if perspective in ("p1", "p2") else "p1")
        return {"html": html, "step": index, "steps": len(view), "turn": view.turns[index].turn if view.turns else 0,
                "hp_figure": hp, "reward_figure": reward, "link": share_query(replay_id, view, index)}

    def replay_export_html(replay_id: str) -> dict:
        """API: the Showdown replay file (HTML text) of a recording."""
        try:
            return {"id": replay_id, "html": lib.export_html(replay_id).read_text(encoding="utf-8")}
        except RecordingError as exc:
            return {"error": str(exc)}

    # ---------------------------------------------------------------- handlers: compare
    async def compare_run(chosen: list[str], extra: str, battles: float, format_id: str, seed: str, mode: str,
                          request: gr.Request = None, progress: gr.Progress = gr.Progress()):
        """Run a small tournament; table and charts update as each battle finishes."""
        skip = gr.skip()
        specs = list(chosen or []) + [s.strip() for s in (extra or "").split(",") if s.strip()]
        try:
            seed_value = parse_seed(seed)
            stream = compare_mod.run_compare(specs, int(battles or 2), format_id or DEFAULT_FORMAT, seed_value,
                                             mode=mode or "score", stop=_session_stop(compare_stops, request))
            async for update in stream:
                if update.total:
                    progress((update.done, update.total), desc=update.message, unit="battles")
                figures = [update.figures.get(k) for k in ("win_rate", "heatmap", "ratings")]
                yield [update.message, update.table or skip, *[f if f is not None else skip for f in figures],
                       gr.Dropdown(choices=compare_mod.list_compares(), value=update.tournament)
                       if update.finished else skip, update.battles or skip]
        except LiveError as exc:
            yield [f"⚠ {exc}", skip, skip, skip, skip, skip, skip]

    async def compare_stop(request: gr.Request = None) -> str:
        return _request_stop(compare_stops, request, "No comparison is running in this session.",
                             "■ Stopping after the battles in flight…")

    def compare_load(tournament_id: str):
        """Load an earlier comparison's table and charts by tournament id."""
        try:
            update = compare_mod.load_compare(tournament_id or "")
        except LiveError as exc:
            return [f"⚠ {exc}", gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()]
        return [update.message, update.table, update.figures.get("win_rate"), update.figures.get("heatmap"),
                update.figures.get("ratings"), update.battles]

    def compare_list() -> list[dict]:
        """API: earlier comparisons as [{"id", "label"}]."""
        return [{"id": value, "label": label} for label, value in compare_mod.list_compares()]

    # ---------------------------------------------------------------- layout
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        gr.HTML(f'<div class="wc-banner"><b style="font-size:18px">⚔ {TITLE}</b> '
                f'<span class="wc-muted">{INTRO}</span></div>', js_on_load=None)
        with gr.Tabs() as tabs:
            # ------------------------------------------------------------ Live
            with gr.Tab("Live battle", id="live"):
                with gr.Row(equal_height=False):
                    with gr.Column(scale=1, min_width=280):
                        lv_agent = gr.Dropdown(AGENT_CHOICES, value="heuristic", label="Agent (p1)")
                        lv_agent_custom = gr.Textbox(label="Agent spec", visible=False,
                                                     placeholder="llm:REPO[@REV][+ADAPTER] or llm:/path")
                        lv_opp = gr.Dropdown(OPPONENT_CHOICES, value="random", label="Opponent (p2)")
                        lv_opp_custom = gr.Textbox(label="Opponent checkpoint spec", visible=False,
                                                   placeholder="preset:run2 or llm:…")
                        lv_format = gr.Dropdown(FORMATS, value=DEFAULT_FORMAT, label="Format", allow_custom_value=True)
                        lv_seed = gr.Textbox(label="Seed", placeholder="blank = random", max_length=12)
                        lv_mode = gr.Radio(["score", "generate"], value="score", label="Decoding (checkpoints)",
                                           info="score: rank every legal action; generate: sample text like the "
                                                "training runs")
                        lv_pace = gr.Slider(0, 2, value=default_pace(), step=0.1, label="Seconds between turns")
                        with gr.Row():
                            lv_start = gr.Button("▶ Start", variant="primary")
                            lv_stop = gr.Button("■ Stop", variant="stop")
                        lv_hw = gr.Markdown("Checking hardware…")
                    with gr.Column(scale=3):
                        lv_status = gr.Markdown("Pick two policies and press **Start**.")
                        lv_html = gr.HTML(EMPTY_VIEW, js_on_load=None)
                        with gr.Row():
                            lv_hp = gr.Plot(label="Team HP", show_label=False)
                            lv_reward = gr.Plot(label="Cumulative reward", show_label=False)
                        lv_link = gr.Markdown("")
                        lv_open = gr.Button("Open this battle in Replays", visible=False)
                        lv_turn = gr.JSON(visible=False, label="Latest turn record")
                        lv_last = gr.State(None)
            # ------------------------------------------------------------ Replays
            with gr.Tab("Replays", id="replays"):
                with gr.Accordion("All recordings (click a row to open it)", open=False):
                    rp_table = gr.Dataframe(headers=LIST_HEADERS, datatype="str", interactive=False,
                                            max_height=360, wrap=True)
                with gr.Row(equal_height=False):
                    with gr.Column(scale=1, min_width=280):
                        rp_select = gr.Dropdown(choices=[], label="Recording", allow_custom_value=True)
                        with gr.Row():
                            rp_source = gr.Dropdown(SOURCE_FILTERS, value="all", label="Source", scale=1,
                                                    info="played here, tournament, training env, imported…")
                            rp_refresh = gr.Button("↻ Refresh list", size="sm", scale=1)
                        rp_upload = gr.File(label="Upload a recording, an OpenEnv-WolfeClick log or a Showdown replay "
                                                  "(.json / .log)", file_types=[".json", ".log", ".txt"],
                                            type="filepath", height=110)
                        rp_msg = gr.HTML("", js_on_load=None)
                        rp_persp = gr.Radio(["p1", "p2"], value="p1", label="Viewpoint",
                                            info="the other side's unrevealed Pokémon show as unknown")
                        rp_link = gr.Textbox(label="Link to this turn", buttons=["copy"], interactive=False)
                        with gr.Row():
                            rp_json = gr.DownloadButton("⬇ JSON", size="sm", interactive=False)
                            rp_export = gr.DownloadButton("⬇ Showdown replay", size="sm", interactive=False)
                    with gr.Column(scale=3):
                        with gr.Row(elem_id="wc-nav"):
                            rp_first = gr.Button("« First", size="sm")
                            rp_prev = gr.Button("◀ Previous", size="sm")
                            rp_play = gr.Button("▶ Play", size="sm", variant="primary")
                            rp_next = gr.Button("Next ▶", size="sm")
                            rp_last = gr.Button("Last »", size="sm")
                        with gr.Row():
                            rp_slider = gr.Slider(0, 1, value=0, step=1, label="Decision", scale=4)
                            rp_turn = gr.Number(label="Jump to turn", precision=0, minimum=0, scale=1)
                            rp_speed = gr.Dropdown(SPEEDS, value=1.0, label="Speed (turns/s)", scale=1)
                        rp_html = gr.HTML(EMPTY_VIEW, js_on_load=None)
                        with gr.Row():
                            rp_hp = gr.Plot(label="Team HP", show_label=False)
                            rp_reward = gr.Plot(label="Cumulative reward", show_label=False)
                        rp_step = gr.Number(0, precision=0, visible=False, label="Current decision")
                        rp_playing = gr.State(False)
                        rp_timer = gr.Timer(1.0, active=False)
            # ------------------------------------------------------------ Compare
            with gr.Tab("Compare", id="compare"):
                with gr.Row(equal_height=False):
                    with gr.Column(scale=1, min_width=280):
                        cp_specs = gr.CheckboxGroup(COMPARE_BASELINES, value=["random", "maxdamage", "heuristic"],
                                                    label="Policies")
                        cp_extra = gr.Textbox(label="More specs (comma separated)", placeholder="llm:…, preset:run2")
                        cp_battles = gr.Slider(2, 40, value=4, step=2, label="Battles per pairing",
                                               info="played in pairs: same teams, seats swapped")
                        cp_format = gr.Dropdown(FORMATS, value=DEFAULT_FORMAT, label="Format", allow_custom_value=True)
                        cp_seed = gr.Textbox(label="Seed", value="0", max_length=12)
                        cp_mode = gr.Radio(["score", "generate"], value="score", label="Decoding (checkpoints)")
                        with gr.Row():
                            cp_run = gr.Button("▶ Run", variant="primary")
                            cp_stop = gr.Button("■ Stop", variant="stop")
                        cp_select = gr.Dropdown(choices=[], label="Earlier results", allow_custom_value=True)
                        cp_load = gr.Button("Load", size="sm")
                    with gr.Column(scale=3):
                        cp_status = gr.Markdown("Choose policies and press **Run**.")
                        cp_table = gr.Dataframe(headers=compare_mod.TABLE_HEADERS, datatype="str",
                                                interactive=False, label="Standings")
                        with gr.Row():
                            cp_win = gr.Plot(show_label=False)
                            cp_heat = gr.Plot(show_label=False)
                        cp_ratings = gr.Plot(show_label=False)
                        cp_games = gr.Dataframe(headers=compare_mod.BATTLE_HEADERS, label="Battles (open any replay)",
                                                datatype=["number", "str", "str", "str", "str", "number", "markdown"],
                                                interactive=False, max_height=320)

        view_out = [rp_html, rp_hp, rp_reward, rp_slider, rp_link, rp_step]
        open_out = [*view_out, rp_select, rp_json, rp_export, rp_msg]
        nav_in = [rp_select, rp_step, rp_persp]

        # ------------------------------------------------------------ events: page load
        demo.load(on_load, outputs=[tabs, *open_out], api_name="open_share_link")
        demo.load(on_load_hardware, outputs=[lv_hw], api_name="hardware")
        demo.load(lambda: (list_rows(), gr.Dropdown(choices=compare_mod.list_compares())),
                  outputs=[rp_table, cp_select], api_visibility="private")

        # ------------------------------------------------------------ events: live
        lv_agent.change(lambda c: gr.Textbox(visible=c == CUSTOM), lv_agent, lv_agent_custom, api_visibility="private")
        lv_opp.change(lambda c: gr.Textbox(visible=c == CUSTOM), lv_opp, lv_opp_custom, api_visibility="private")
        lv_start.click(live_start, [lv_agent, lv_agent_custom, lv_opp, lv_opp_custom, lv_format, lv_seed, lv_mode,
                                    lv_pace], [lv_status, lv_html, lv_hp, lv_reward, lv_link, lv_turn, lv_open, lv_last],
                       api_name="live_start", concurrency_limit=16, concurrency_id="live")
        lv_stop.click(live_stop, None, lv_status, api_name="live_stop", concurrency_limit=None)
        def live_open(replay_id: str, perspective: str, request: gr.Request = None):
            return [gr.Tabs(selected="replays"), *open_outputs(replay_id, 0, perspective, request)]

        lv_open.click(live_open, [lv_last, rp_persp], [tabs, *open_out], api_visibility="private")

        # ------------------------------------------------------------ events: replays
        rp_select.input(replay_open, [rp_select, rp_persp], open_out, api_name="replay_open")
        rp_slider.release(replay_show, [rp_select, rp_slider, rp_persp], view_out, api_name="replay_show",
                          trigger_mode="always_last")
        rp_persp.input(replay_show, nav_in, view_out, api_visibility="private")
        rp_first.click(nav(None, False), nav_in, view_out, api_name="replay_first")
        rp_prev.click(nav(-1), nav_in, view_out, api_name="replay_previous")
        rp_next.click(nav(+1), nav_in, view_out, api_name="replay_next")
        rp_last.click(nav(None, True), nav_in, view_out, api_name="replay_last")
        rp_turn.submit(replay_jump, [rp_select, rp_turn, rp_persp], view_out, api_name="replay_jump")
        rp_play.click(replay_play, [rp_select, rp_step, rp_playing, rp_speed], [rp_timer, rp_play, rp_playing],
                      api_visibility="private")
        rp_speed.change(replay_speed, [rp_speed, rp_playing], rp_timer, api_visibility="private")
        rp_timer.tick(replay_tick, [rp_select, rp_step, rp_persp, rp_playing],
                      [*view_out, rp_timer, rp_play, rp_playing], api_visibility="private",
                      trigger_mode="always_last")
        rp_refresh.click(replay_refresh, [rp_select, rp_source], [rp_table, rp_select], api_name="replays_refresh")
        rp_source.input(replay_refresh, [rp_select, rp_source], [rp_table, rp_select], api_visibility="private")
        rp_table.select(replay_select_row, [rp_table, rp_persp], open_out, api_visibility="private")
        rp_upload.upload(replay_upload, [rp_upload, rp_persp], open_out, api_name="replay_upload")

        # ------------------------------------------------------------ events: compare
        cp_run.click(compare_run, [cp_specs, cp_extra, cp_battles, cp_format, cp_seed, cp_mode],
                     [cp_status, cp_table, cp_win, cp_heat, cp_ratings, cp_select, cp_games], api_name="compare_run",
                     concurrency_limit=2, concurrency_id="compare")
        cp_stop.click(compare_stop, None, cp_status, api_name="compare_stop", concurrency_limit=None)
        cp_load.click(compare_load, cp_select, [cp_status, cp_table, cp_win, cp_heat, cp_ratings, cp_games],
                      api_name="compare_load")

        # ------------------------------------------------------------ API-only endpoints
        gr.api(list_replays, api_name="list_replays")
        gr.api(get_replay, api_name="get_replay")
        gr.api(replay_turn, api_name="replay_turn")
        gr.api(replay_export_html, api_name="replay_export_html")
        gr.api(battle_stream, api_name="battle_stream", concurrency_limit=16, concurrency_id="live")
        gr.api(compare_list, api_name="compare_list")

    demo.queue(default_concurrency_limit=32)
    demo.wolfeclick_library = lib  # for tests and scripts
    return demo


def _session_key(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or "anonymous"


def _request_stop(registry: dict[str, asyncio.Event], request: gr.Request | None, idle: str, stopping: str) -> str:
    """Set this session's stop event, if it has work running; the message says which."""
    stop = registry.get(_session_key(request))
    if stop is None:
        return idle
    stop.set()
    return stopping


def _session_stop(registry: dict[str, asyncio.Event], request: gr.Request | None) -> asyncio.Event:
    session = _session_key(request)
    previous = registry.get(session)
    if previous is not None:
        previous.set()
    registry[session] = asyncio.Event()
    return registry[session]


def launch_options(demo: gr.Blocks) -> dict[str, Any]:
    """What ``launch()`` needs besides host and port: CSS, file access for downloads, the upload size limit."""
    lib: Library = demo.wolfeclick_library
    css = CSS_PATH.read_text(encoding="utf-8") if CSS_PATH.exists() else ""
    return {
        "css": css,
        "theme": gr.themes.Soft(primary_hue="indigo"),
        "allowed_paths": [str(lib.directory), str(lib.exports)],
        "max_file_size": MAX_RECORDING_BYTES + 1024 * 1024,
        "footer_links": ["api"],
        "show_error": True,
    }


def warm_up() -> None:
    """Load what the first replay step needs (the Pokédex, for sprite ids) before anyone asks."""
    from wolfeclick.ui.view import sprite_url

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
    blocking = not options.get("prevent_thread_lock", False)
    options["prevent_thread_lock"] = True
    demo.launch(**options)
    threading.Thread(target=warm_up, name="wolfeclick-warm-up", daemon=True).start()
    if blocking:
        demo.block_thread()
    return demo
