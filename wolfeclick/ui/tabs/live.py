"""The Live tab: pick two policies, watch their battle turn by turn in the same client viewer as Replays.

Each update sends only the new steps (and re-sends the previous one, now that its outcome is known), so a
decision is never shown with a reward whose cause is still hidden. The battle is saved through one
``RecordingSaver`` per run; its id is the one every link uses.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator

import gradio as gr

from wolfeclick.battle.live_battles import FORMATS, LiveError, check_format, human_sides, parse_seed
from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.errors import WolfeClickError
from wolfeclick.game.actions import MAX_MOVES, MAX_SWITCHES
from wolfeclick.policies.human import HumanAnswerError, HumanSeat, check_timer
from wolfeclick.sides import Side, is_side
from wolfeclick.sides import other as opponent
from wolfeclick.ui.binding import bind
from wolfeclick.ui.components import data_component, viewer_component
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.live_page import hardware_report, policy_choices, prompt_markdown, run_live
from wolfeclick.ui.presentation import (
    PACE_RANGE,
    clamp_pace,
    finished_phase,
    plural,
    result_text,
    share_query,
    status_line,
)
from wolfeclick.ui.tabs.common import failure
from wolfeclick.ui.viewer_payload import live_payload, to_json

__all__ = ["LiveUI", "HumanUI", "OPEN_AT_CURSOR_JS", "build", "live_start", "live_stop", "human_choose", "STREAM_OUTPUTS",
           "HUMAN_OUTPUTS", "BANK_SIZE"]

STREAM_OUTPUTS = ("status", "data", "turn", "open_button", "link", "last")
"""The order of ``/live_start``'s outputs (API clients get all but the Button and the State), then HUMAN_OUTPUTS."""
HUMAN_OUTPUTS = ("prompt", "key", "state", "note")
"""A person's prompt (Markdown), its key (the hidden box the buttons send back), the state and the note a click
answers with; then the buttons."""
BANK_SIZE = MAX_MOVES + MAX_SWITCHES
"""Buttons in the bank: four moves and five switches at most (team preview offers six leads)."""


@dataclass
class HumanUI:
    """"You": the bank of buttons a person chooses with, relabelled for each decision; the hidden key names the
    decision the shown buttons belong to, so a late click never answers the next one."""

    prompt: gr.Markdown
    key: gr.Textbox
    state: gr.Markdown
    buttons: list[gr.Button]
    note: gr.Markdown
    state_box: gr.Accordion

    def outputs(self) -> list[Any]:
        return [*(getattr(self, name) for name in HUMAN_OUTPUTS), *self.buttons, self.state_box]

    def show(self, prompt: Any, names: dict[str, str]) -> dict:
        update = {self.prompt: prompt_markdown(prompt, names), self.key: prompt.key, self.state: prompt.state,
                  self.note: "", self.state_box: gr.Accordion(visible=True)}
        for index, button in enumerate(self.buttons):
            if index < len(prompt.buttons):
                update[button] = gr.Button(value=prompt.buttons[index].label, visible=True, interactive=True)
            else:
                update[button] = gr.Button(visible=False)
        return update

    def hide(self, text: str = "", over: bool = True) -> dict:
        """No buttons; ``over``: nobody plays any more, so the state box goes too (it is only for a person)."""
        update: dict[Any, Any] = {self.prompt: text, self.key: "", **{button: gr.Button(visible=False) for button in self.buttons}}
        if over:
            update[self.state_box] = gr.Accordion(visible=False)
        return update


@dataclass
class LiveUI:
    agent: gr.Dropdown
    opponent: gr.Dropdown
    format: gr.Dropdown
    seed: gr.Textbox
    mode: gr.Radio
    pace: gr.Slider
    start: gr.Button
    stop: gr.Button
    hardware: gr.Markdown
    status: gr.Markdown
    data: gr.HTML
    viewer: gr.HTML
    link: gr.Markdown
    open_button: gr.Button
    turn: gr.JSON
    last: gr.State
    timer: gr.Textbox
    human: HumanUI
    open_step: gr.Number

    def stream_outputs(self) -> list[Any]:
        return [getattr(self, name) for name in STREAM_OUTPUTS] + self.human.outputs()


def _link(request: gr.Request | None, query: str) -> str:
    from wolfeclick.ui.tabs.links import page_url

    page = page_url(request)
    return (page + query) if page else query


def _seats(ctx: AppContext, specs: dict[str, str], timer: Any, request: gr.Request | None) -> dict[Side, HumanSeat]:
    """A seat for the side this session's person plays (if any), registered so their clicks find it."""
    sides = human_sides(specs)
    timer_s = check_timer(timer)
    seats = {side: HumanSeat(side, timer_s=timer_s, idle_s=ctx.settings.max_idle_s) for side in sides}
    for seat in seats.values():
        ctx.seats.open(request, seat)
    return seats


async def live_start(ctx: AppContext, ui: LiveUI, agent: str, opponent: str, format_id: str, seed: str, mode: str,
                     pace: float, timer: str | None = None,
                     request: gr.Request | None = None, progress: gr.Progress = gr.Progress()) -> AsyncIterator[dict]:
    """Start a live battle and stream it into the Live viewer. A side chosen as "You" is played with the buttons
    (``timer``: seconds per decision, blank for none). Each side is one of the app's served policies
    (``ctx.admit``): anything else is refused in one line before anything is imported or built."""
    try:
        p1 = ctx.admit(agent)
        p2 = ctx.admit(opponent)
        format_id = check_format(format_id)
        seed_value = parse_seed(seed)
        human_sides({"p1": p1, "p2": p2})
        check_timer(timer)
        stop = ctx.stops.start("live", request)  # QuotaRefused when this visitor already plays their share
    except (WolfeClickError, HumanAnswerError) as exc:
        yield {ui.status: f"⚠ {exc}", ui.open_button: gr.Button(visible=False)}
        return
    seats = _seats(ctx, {"p1": p1, "p2": p2}, timer, request)
    title = f"**{p1}** vs **{p2}** · {format_id} · seed {seed_value}"
    events = run_live(p1, p2, cache=ctx.policies, saver=ctx.saver(), format_id=format_id, seed=seed_value,
                      mode=mode or "score", pace=clamp_pace(pace, ctx.settings.live_pace),
                      max_turns=DEFAULT_MAX_TURNS, stop=stop, seats=seats)
    async for update in _stream(ctx, ui, events, title, stop, request, progress, seats):
        yield update


def live_error_text(message: str) -> str:
    """Pure: an error as the Live tab says it. The simulator's refusal of a team format names the CLI's options
    (``--team1/--team2``), which the page has no field for: here it says what to do in the app instead."""
    if "needs a team for each side" in message:
        format_id = message.split("'")[1] if message.count("'") >= 2 else "this format"
        return (f"{format_id} is played with given teams, and Live plays formats whose teams the simulator makes "
                "(e.g. gen9randombattle); record team battles with `wolfeclick record --format FORMAT --teams DIR` "
                "and open them in Replays")
    return message


async def _stream(ctx: AppContext, ui: LiveUI, events: AsyncIterator[Any], title: str, stop: Any,
                  request: gr.Request | None, progress: Any,
                  seats: dict[Side, HumanSeat] | None = None) -> AsyncIterator[dict]:
    """A live run's events as updates of the Live tab (status, viewer payloads, a person's buttons, the link at
    the end)."""
    run = uuid.uuid4().hex[:12]
    names: dict[str, str] = {}
    you = next(iter(seats or {}), None)  # the side this page's person plays: the other's secrets stay off the page
    try:
        async for event in events:
            if event.view is not None:
                names = event.view.meta.names
            if event.kind == "prompt":
                yield {ui.status: status_line("live", title, f"turn {event.prompt.turn} · your move"),
                       **ui.human.show(event.prompt, names)}
                continue
            if event.kind == "answered":
                yield {**ui.human.hide(event.message or "Sent. Waiting for the battle to go on…", over=False)}
                continue
            if event.kind == "loading":
                progress(None, desc=event.message)
                update = {ui.status: status_line("loading", title, event.message), ui.link: "",
                          ui.open_button: gr.Button(visible=False), ui.last: None}
                if event.view is not None:
                    update[ui.data] = to_json(live_payload(event.view, run=run, since=0, status="", you=you))
                yield update
            elif event.kind == "turn":
                view = event.view
                phase = "stopping" if stop.is_set() else "live"
                yield {ui.status: status_line(phase, title, f"turn {event.turn.turn} · {plural(len(view), 'decision')}"),
                       ui.data: to_json(live_payload(view, run=run, since=max(0, len(view) - 2), status="", you=you)),
                       ui.turn: seen_turn(event.turn, you)}
            elif event.kind == "error":
                message = live_error_text(event.message)
                yield {ui.status: f"⚠ {message}", ui.turn: {"error": message}, **ui.human.hide()}
                return
            else:  # done
                view, recording = event.view, event.recording
                turns = [t.turn for t in view.turns]
                query = share_query(recording.id, turns, len(turns) - 1)
                link = _link(request, query)
                result = recording.result.model_dump()
                detail = result_text(result, view.meta.names) + (f" · ⚠ {event.message}" if event.message else "")
                yield {ui.status: status_line(finished_phase(result), title, detail),
                       # every step again: the panels sent while it played said "in progress" (and, when a
                       # person played, held back the other side's secrets)
                       ui.data: to_json(live_payload(view, run=run, since=0, status="", replay_id=recording.id,
                                                     link=link, you=you)),
                       ui.link: f"Recorded as `{recording.id}`. Replay link: [{link}]({query})",
                       ui.turn: {"done": True, "recording": recording.id, "result": result, "link": link,
                                 "step": max(0, len(turns) - 1)},
                       ui.open_button: gr.Button(visible=True),
                       ui.last: {"id": recording.id, "step": max(0, len(turns) - 1)}, **ui.human.hide()}
    except Exception as exc:  # noqa: BLE001 - one line for a user error, a logged bug otherwise
        yield {ui.status: failure(ctx, exc, "live_start"), **ui.human.hide()}
    finally:
        ctx.stops.finish("live", request, stop)
        for seat in (seats or {}).values():
            ctx.seats.release(request, seat)


def seen_turn(turn: Any, you: str | None) -> dict:
    """A turn record as ``/live_start`` sends it: whole, unless a person plays — then the other side's decision
    (its state, prompt, scores, output) and its unrevealed Pokémon are left out until the battle ends (the page
    receives this too, in a hidden component)."""
    data = turn.model_dump(mode="json")
    if not is_side(you):
        return data
    other = opponent(you)
    data["decisions"].pop(other, None)
    snap = data["snapshot"].get(other)
    if snap:
        snap["team"] = [mon for mon in snap["team"] if mon.get("revealed") or mon.get("active") or mon.get("fainted")]
    return data


async def human_choose(ctx: AppContext, index: int, key: str | None, request: gr.Request | None = None) -> str:
    """A click on button ``index`` of the prompt ``key``: answers this session's own seat, nobody else's."""
    seat = ctx.seats.get(request)
    if seat is None:
        return "⚠ No battle of yours is waiting for a choice."
    try:
        command = seat.choose(key or None, int(index))
    except HumanAnswerError as exc:
        return f"⚠ {exc}"
    return f"Sent `{command}`."


OPEN_AT_CURSOR_JS = """(last, step) => {
  const viewer = (window.__wcViewers || {}).live;
  return [last, viewer && viewer.state.total ? viewer.state.index : -1];
}"""
"""*Open this battle in Replays (at this turn)* reads the Live viewer's cursor: the decision the person is looking
at, not the battle's last one (the server never sees the cursor)."""


RECORDED = "recorded"
"""The take-over choice that keeps a side's recorded policy."""


def takeover_choices(ctx: AppContext) -> list[tuple[str, str]]:
    """Replays' take-over dropdowns: keep the recorded policy, or any the agent's side may choose."""
    return [("as recorded (the policy that played)", RECORDED), *policy_choices(ctx.catalogue)]


def recorded_policy(ctx: AppContext, parent: Any, side: str) -> str:
    """The policy that played ``side`` of ``parent``, if this app serves it; else one line saying to choose."""
    spec = parent.players[side].policy
    try:
        return ctx.admit(spec)
    except WolfeClickError:
        raise LiveError(f"{side} was played by {str(spec)[:60]!r}, which this app does not serve; choose a policy "
                        f"for {side}") from None


async def takeover_start(ctx: AppContext, ui: LiveUI, tabs: gr.Tabs, p1_choice: str, p2_choice: str, mode: str,
                         pace: float, replay_id: str, step: Any, timer: str | None = None, request: gr.Request | None = None,
                         progress: gr.Progress = gr.Progress()) -> AsyncIterator[dict]:
    """Replays' *Take over from here*: the shown replay plays on live, from the shown decision, with the chosen
    policies — or "You" with the buttons (``timer`` seconds per decision) — in the Live viewer
    (``run_live(takeover=…)``); saved with ``source=branch``. A side a person played keeps a person "as recorded".
    Every side's policy, the recorded one too (an uploaded file names any spec it likes), must be one of the app's
    served policies (``ctx.admit``)."""
    from wolfeclick.battle.branch import BranchError, replayable
    from wolfeclick.ui.presentation import parse_step

    try:
        if not isinstance(replay_id, str) or not replay_id:
            raise LiveError("open a replay first")
        parent = await asyncio.to_thread(ctx.library.get, replay_id)
        index = parse_step(step)
        replayable(parent)
        if not 0 <= index < len(parent.turns):
            raise LiveError(f"take over at a decision (1…{len(parent.turns)}), not after the end")
        specs = {side: recorded_policy(ctx, parent, side) if choice == RECORDED else ctx.admit(choice)
                 for side, choice in (("p1", p1_choice), ("p2", p2_choice))}
        human_sides(specs)
        check_timer(timer)
        stop = ctx.stops.start("live", request)  # QuotaRefused when this visitor already plays their share
    except (WolfeClickError, BranchError) as exc:
        yield {ui.status: f"⚠ Cannot take over: {exc}", tabs: gr.Tabs(selected="live"),
               ui.open_button: gr.Button(visible=False)}
        return
    seats = _seats(ctx, specs, timer, request)
    title = (f"**{specs['p1']}** vs **{specs['p2']}** · taking over `{parent.id}` at decision {index + 1} "
             f"(turn {parent.turns[index].turn})")
    events = run_live(specs["p1"], specs["p2"], cache=ctx.policies, saver=ctx.saver(), mode=mode or "score",
                      pace=clamp_pace(pace, ctx.settings.live_pace), stop=stop, takeover=(parent, index),
                      seats=seats)
    yield {tabs: gr.Tabs(selected="live")}
    async for update in _stream(ctx, ui, events, title, stop, request, progress, seats):
        yield update


async def live_stop(ctx: AppContext, request: gr.Request | None = None) -> str:
    """Stop this session's live battle (what was played is still recorded)."""
    if ctx.stops.stop("live", request):
        return status_line("stopping", "", "the battle ends after the decision in flight")
    return "No live battle is running in this session."


async def hardware(ctx: AppContext) -> str:
    return hardware_report(await asyncio.to_thread(ctx.hardware))


def _human_controls() -> HumanUI:
    """The prompt, the button bank (hidden until a decision waits for a person) and the state they may read."""
    with gr.Group(elem_id="wc-human", elem_classes=["wc-human"]):
        prompt = gr.Markdown("", elem_id="wc-human-prompt")
        with gr.Row(elem_classes=["wc-human-bank"]):
            buttons = [gr.Button(visible=False, variant="primary", size="sm", elem_id=f"wc-human-{index}",
                                 elem_classes=["wc-human-choice"]) for index in range(BANK_SIZE)]
        note = gr.Markdown("", elem_id="wc-human-note")
        with gr.Accordion("The state the policies see (yours, this decision)", open=False, visible=False,
                          elem_id="wc-human-state") as state_box:  # shown only while someone plays
            state = gr.Markdown("")
        key = gr.Textbox("", visible=False, elem_id="wc-human-key")
    return HumanUI(prompt, key, state, buttons, note, state_box)


def build(ctx: AppContext) -> LiveUI:
    """The tab's layout and its own events (inside a ``gr.Tab``)."""
    with gr.Row(equal_height=False, elem_classes=["wc-tab-row"]):
        with gr.Column(scale=1, min_width=260, elem_classes=["wc-controls-col"]):
            with gr.Accordion("Battle settings", open=True, elem_classes=["wc-controls"]):
                agent = gr.Dropdown(policy_choices(ctx.catalogue), value="heuristic", label="Agent (p1)",
                                    elem_id="wc-live-agent")
                opponent = gr.Dropdown(policy_choices(ctx.catalogue, opponent=True), value="random",
                                       label="Opponent (p2)", elem_id="wc-live-opponent")
                format_box = gr.Dropdown(FORMATS, value=DEFAULT_FORMAT, label="Format", allow_custom_value=True,
                                         elem_id="wc-live-format")
                seed = gr.Textbox(label="Seed", placeholder="blank = random", max_length=12, elem_id="wc-live-seed")
                mode = gr.Radio(["score", "generate"], value="score", label="Decoding (checkpoints)",
                                info="score: rank every legal action; generate: sample text like the training runs")
                pace = gr.Slider(PACE_RANGE[0], 2, value=min(2.0, ctx.settings.live_pace), step=0.1,
                                 label="Seconds between decisions", info="not used when you play: you set the pace")
                timer = gr.Textbox(label="Your timer (seconds per decision)", placeholder="blank = no timer",
                                   max_length=8, elem_id="wc-human-timer",
                                   info="when you play a side: at 0 a seeded fallback plays for you (flagged)")
                with gr.Row():
                    start = gr.Button("▶ Start", variant="primary", elem_id="wc-live-start")
                    stop = gr.Button("■ Stop", variant="stop")
                hardware_box = gr.Markdown("Checking hardware…")
        with gr.Column(scale=4, elem_classes=["wc-battle-col"]):
            status = gr.Markdown("Pick two policies and press **Start**.")
            human = _human_controls()
            viewer = viewer_component("live", "wc-live-viewer")
            data = data_component("wc-live-data")
            link = gr.Markdown("")
            open_button = gr.Button("Open this battle in Replays (at this turn)", visible=False,
                                    elem_id="wc-live-open")
            open_step = gr.Number(-1, visible=False, precision=0)
            turn = gr.JSON(visible=False, label="Latest turn record")
            last = gr.State(None)
    ui = LiveUI(agent, opponent, format_box, seed, mode, pace, start, stop, hardware_box, status, data, viewer, link,
                open_button, turn, last, timer, human, open_step)
    start.click(bind(live_start, ctx, ui), [agent, opponent, format_box, seed, mode, pace, timer],
                ui.stream_outputs(), api_name="live_start", concurrency_limit=ctx.settings.max_live,
                concurrency_id="live")
    for index, button in enumerate(human.buttons):  # never queued behind anything: the battle waits on it
        button.click(bind(human_choose, ctx, index), human.key, human.note, api_visibility="private",
                     concurrency_limit=None)
    stop.click(bind(live_stop, ctx), None, status, api_name="live_stop", concurrency_limit=None)
    return ui
