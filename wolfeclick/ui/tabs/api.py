"""API-only endpoints (no component): replay access and a streamed battle, for scripts and ``gradio_client``.

Each returns plain JSON, ``{"error": one line}`` for what a caller got wrong; a step is one bounded panel (long
texts cut at ``viewer.TEXT_LIMIT``). Sync functions run in Gradio's worker threads, so parsing a large file here
never blocks the event loop.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Callable

import gradio as gr

from wolfeclick.battle.live_battles import LiveError, check_format, parse_seed
from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.errors import WolfeClickError, whole_on_one_line
from wolfeclick.sides import is_side
from wolfeclick.ui import tournament_runs
from wolfeclick.ui.binding import bind
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.live_page import run_live
from wolfeclick.ui.presentation import jump_to_turn, parse_step, share_query
from wolfeclick.ui.tabs.common import failure
from wolfeclick.ui.viewer_payload import TEXT_LIMIT, charts_svg, window_payload

__all__ = ["register", "replay_turn", "replay_window", "list_replays", "get_replay", "battle_stream"]

StepRule = Callable[[int, int], int]


def list_replays(ctx: AppContext, source: str = "all") -> list[dict]:
    """API: the recordings (id, p1, p2, winner, turns, format, created, source), newest first; ``source`` keeps one
    kind (played, tournament, training, branch, imported, ladder) or ``all``."""
    return [info.as_dict() for info in ctx.library.list(source if isinstance(source, str) else None)]


def get_replay(ctx: AppContext, replay_id: str) -> dict:
    """API: one recording as JSON ({"error": …} for an unknown or invalid id)."""
    try:
        return json.loads(ctx.library.get(replay_id).to_json())
    except WolfeClickError as exc:
        return {"error": str(exc)}


def _turn(ctx: AppContext, replay_id: Any, step: Any, perspective: Any, rule: StepRule | None = None,
          message: str = "") -> dict:
    try:
        if not isinstance(replay_id, str):
            raise LiveError("replay id must be a string")
        view = ctx.library.annotated(replay_id)[0]
        index = view.clamp(rule(parse_step(step), view.steps) if rule else parse_step(step))
    except WolfeClickError as exc:
        return {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001
        return {"error": failure(ctx, exc, "replay_turn")}
    side = perspective if is_side(perspective) else "p1"
    _, marks = charts_svg(view)
    turns = [view.step_turn(i) for i in range(view.steps)]
    return {"html": view.html(index, side, text_limit=TEXT_LIMIT), "step": index, "steps": view.steps,
            "decisions": len(view), "turn": turns[index] if turns else 0,
            "marker": {k: v[index] for k, v in marks.items() if index < len(v)},
            "link": share_query(replay_id, turns, index), "message": message}


def replay_turn(ctx: AppContext, replay_id: str, step: Any = 0, perspective: str = "p1") -> dict:
    """API: one step rendered: {"html", "step", "steps", "turn", "marker", "link"}; a bad step is one line."""
    return _turn(ctx, replay_id, step, perspective)


def replay_open(ctx: AppContext, replay_id: str, perspective: str = "p1") -> dict:
    """API: a replay's first step."""
    return _turn(ctx, replay_id, 0, perspective)


def replay_next(ctx: AppContext, replay_id: str, step: Any = 0, perspective: str = "p1") -> dict:
    return _turn(ctx, replay_id, step, perspective, lambda s, n: s + 1)


def replay_previous(ctx: AppContext, replay_id: str, step: Any = 0, perspective: str = "p1") -> dict:
    return _turn(ctx, replay_id, step, perspective, lambda s, n: max(0, s - 1))


def replay_first(ctx: AppContext, replay_id: str, step: Any = 0, perspective: str = "p1") -> dict:
    return _turn(ctx, replay_id, 0, perspective)


def replay_last(ctx: AppContext, replay_id: str, step: Any = 0, perspective: str = "p1") -> dict:
    return _turn(ctx, replay_id, 0, perspective, lambda s, n: n - 1)


def replay_jump(ctx: AppContext, replay_id: str, turn: Any = 1, perspective: str = "p1") -> dict:
    """API: the first step of a game turn; an out-of-range or unreadable turn is clamped with one line saying so."""
    try:
        view = ctx.library.view(replay_id) if isinstance(replay_id, str) else None
    except WolfeClickError as exc:
        return {"error": str(exc)}
    if view is None:
        return {"error": "replay id must be a string"}
    index, message = jump_to_turn([t.turn for t in view.turns], turn)
    return _turn(ctx, replay_id, index, perspective, message=message)


def replay_window(ctx: AppContext, replay_id: str, step: Any = 0, token: str = "") -> dict:
    """API (the viewer's background fetch): the panels, turn-list items and markers of a replay around ``step``,
    for a battle too long to send at once; ``{"error": one line}`` for a bad id or step."""
    try:
        if not isinstance(replay_id, str):
            raise LiveError("replay id must be a string")
        view = ctx.library.annotated(replay_id)[0]
        index = view.clamp(parse_step(step))
    except WolfeClickError as exc:
        return {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001
        return {"error": failure(ctx, exc, "replay_window")}
    return window_payload(view, replay_id=replay_id, start=index, token=str(token or "")[:40])


def replay_export_html(ctx: AppContext, replay_id: str) -> dict:
    """API: the Showdown replay file (HTML text) of a recording."""
    try:
        return {"id": replay_id, "html": ctx.library.export_html(replay_id).read_text(encoding="utf-8")}
    except WolfeClickError as exc:
        return {"error": str(exc)}


async def battle_stream(ctx: AppContext, p1: str, p2: str, format_id: str = DEFAULT_FORMAT, seed: int = 0,
                        max_turns: int = DEFAULT_MAX_TURNS, request: gr.Request | None = None) -> AsyncIterator[dict]:
    """API: play a battle and stream each turn record as JSON, then {"done": true, "recording": id, ...}.
    The recording is saved under an id no other battle holds (one saver per call). Both sides are the app's
    served policies (``ctx.admit``; no person can be seated through the API)."""
    try:
        p1s, p2s = ctx.admit(p1, human=False), ctx.admit(p2, human=False)
        format_id = check_format(format_id)
        seed_value = parse_seed(seed)
        turns_cap = max(1, min(DEFAULT_MAX_TURNS, int(max_turns)))
        stop = ctx.stops.start("live", request)  # the same per-visitor quota as Live
    except (WolfeClickError, TypeError, ValueError) as exc:
        yield {"error": whole_on_one_line(exc)}
        return
    saver = ctx.saver()
    try:
        async for event in run_live(p1s, p2s, cache=ctx.policies, saver=saver, format_id=format_id,
                                    seed=seed_value, max_turns=turns_cap, stop=stop):
            if event.kind == "turn" and event.turn is not None:
                yield event.turn.model_dump(mode="json")
            elif event.kind == "error":
                yield {"error": event.message}
                return
            elif event.kind == "done" and event.recording is not None:
                yield {"done": True, "recording": event.recording.id,
                       "result": event.recording.result.model_dump(mode="json"),
                       **({"error": event.message} if event.message else {})}
    finally:
        ctx.stops.finish("live", request, stop)


def compare_list(ctx: AppContext) -> list[dict]:
    """API: earlier comparisons as [{"id", "label"}] (label: date, players, battle count)."""
    return [{"id": value, "label": label} for label, value in tournament_runs.list_compares(ctx.results)]


def register(ctx: AppContext) -> None:
    """Add the API-only endpoints to the Blocks being built."""
    for fn, name in ((list_replays, "list_replays"), (get_replay, "get_replay"), (replay_turn, "replay_turn"),
                     (replay_open, "replay_open"), (replay_turn, "replay_show"), (replay_next, "replay_next"),
                     (replay_previous, "replay_previous"), (replay_first, "replay_first"),
                     (replay_last, "replay_last"), (replay_jump, "replay_jump"), (replay_window, "replay_window"),
                     (replay_export_html, "replay_export_html"), (compare_list, "compare_list")):
        gr.api(bind(fn, ctx), api_name=name)
    gr.api(bind(battle_stream, ctx), api_name="battle_stream", concurrency_limit=ctx.settings.max_live,
           concurrency_id="live")
