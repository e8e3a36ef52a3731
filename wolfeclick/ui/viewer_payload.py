"""The client viewer's data: a whole battle (or a live battle's new steps) as one JSON payload. Pure; no Gradio.

Opening a replay sends this once; stepping, playing, jumping, the viewpoint, the turn list and the charts' turn
marker then happen in the browser (``wolfeclick/ui/assets/viewer.js``) without asking the server again. Each step is a
pre-rendered, escaped HTML panel (``BattleView.html`` with both viewpoints in it, picked by a CSS class), so the
browser only swaps ``innerHTML`` and moves two SVG markers: well under a frame.

Bounded: long texts (states, prompts) are cut to ``TEXT_LIMIT`` per step, and a payload carries at most
``MAX_PAYLOAD_BYTES`` of panels: for a battle larger than that the steps around the requested one are sent
(``first``…``first+len(steps)``) and the viewer fetches further windows (``window_payload``) in the background
as it nears their edge, never reloading the page.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from wolfeclick.ui.battle_panels import SIDE_COLORS, SIDES, BattleView, esc

__all__ = ["battle_payload", "live_payload", "window_payload", "WINDOW_BYTES",
           "charts_svg", "turn_list_html", "nice_ticks", "MAX_PAYLOAD_BYTES",
           "TEXT_LIMIT"]

MAX_PAYLOAD_BYTES = 8 * 1024 * 1024
"""Panels per payload at most (a 300-turn battle is about 4.4 MB; a 100k-turn upload gets a window)."""
WINDOW_BYTES = 2 * 1024 * 1024
"""Panels per background window (a long replay's further steps; small enough to arrive in well under a second)."""
TEXT_LIMIT = 6000
"""A state or prompt longer than this is cut in the step panels (the JSON download has it whole)."""
CHART_W, CHART_H = 460, 210
MAX_POINTS = 1500
MARGIN = {"l": 44, "r": 12, "t": 26, "b": 28}


def nice_ticks(low: float, high: float, most: int = 8, integer: bool = False) -> list[float]:
    """Round tick values inside [low, high], at most ``most`` of them and as many as that allows (three or more
    wherever a round step gives them); whole numbers only when ``integer`` (turns are never 2.5).

    The step is the smallest round one (1, 2, 2.5 or 5 times a power of ten) that gives no more than ``most`` ticks: a
    step chosen from the range alone (the first round step above range / most) gave a cumulative reward of -42…39
    one tick, 0, for most = 4."""
    if high <= low:
        high = low + 1
    raw = (high - low) / max(1, most)
    magnitude = 10 ** (math.floor(math.log10(raw)) - 1) if raw > 0 else 1
    ticks: list[float] = []
    for step in (m * magnitude * 10 ** k for k in range(4) for m in (1, 2, 2.5, 5)):
        if integer:
            step = max(1, round(step))
        start = math.ceil(low / step - 1e-9) * step
        count = math.floor((high - start) / step + 1e-9) + 1
        if count <= most:
            ticks = [round(start + n * step, 6) for n in range(max(0, count))]
            break
    return ticks


def _scale(low: float, high: float, out_low: float, out_high: float):
    span = (high - low) or 1.0
    return lambda v: round(out_low + (v - low) * (out_high - out_low) / span, 1)


def _chart(key: str, title: str, x: Sequence[int], series: Mapping[str, Sequence[float]], names: Mapping[str, str],
           y_range: tuple[float, float] | None) -> tuple[str, list[list[float]]]:
    """One SVG line chart (step-shaped, a line per side) and the marker position of every step."""
    if not x:
        return f'<div class="wc-chart wc-muted">{esc(title)}: no data yet.</div>', []
    x_low, x_high = min(x), max(x)
    if x_high == x_low:
        x_high = x_low + 1
    values = [v for side in SIDES for v in series[side]]
    y_low, y_high = y_range if y_range else (min(values + [0.0]), max(values + [0.0]))
    if y_high - y_low < 1e-9:
        y_high = y_low + 1
    if not y_range:
        pad = (y_high - y_low) * 0.08
        y_low, y_high = y_low - pad, y_high + pad
    left, right = MARGIN["l"], CHART_W - MARGIN["r"]
    top, bottom = MARGIN["t"], CHART_H - MARGIN["b"]
    sx, sy = _scale(x_low, x_high, left, right), _scale(y_low, y_high, bottom, top)
    parts = [f'<svg class="wc-svg" viewBox="0 0 {CHART_W} {CHART_H}" role="img" aria-label="{esc(title)}" '
             f'preserveAspectRatio="xMidYMid meet">',
             f'<text x="{left}" y="16" class="wc-svg-title">{esc(title)}</text>']
    for tick in nice_ticks(x_low, x_high, 8, integer=True):
        px = sx(tick)
        parts.append(f'<line x1="{px}" x2="{px}" y1="{top}" y2="{bottom}" class="wc-grid"/>'
                     f'<text x="{px}" y="{bottom + 14}" class="wc-tick" text-anchor="middle">{int(tick)}</text>')
    for tick in nice_ticks(y_low, y_high, 5):
        py = sy(tick)
        label = f"{tick:g}"
        parts.append(f'<line x1="{left}" x2="{right}" y1="{py}" y2="{py}" class="wc-grid"/>'
                     f'<text x="{left - 4}" y="{py + 4}" class="wc-tick" text-anchor="end">{label}</text>')
    parts.append(f'<text x="{right}" y="{bottom + 26}" class="wc-tick" text-anchor="end">turn</text>')
    every = max(1, len(x) // MAX_POINTS)  # a 100k-step upload draws a thinned line, markers stay exact
    for side in SIDES:
        ys = series[side]
        points = []
        kept = list(range(0, len(x), every)) + ([len(x) - 1] if (len(x) - 1) % every else [])
        for n, i in enumerate(kept):
            if n:
                points.append(f"{sx(x[i])},{sy(ys[kept[n - 1]])}")
            points.append(f"{sx(x[i])},{sy(ys[i])}")
        parts.append(f'<polyline fill="none" stroke="{SIDE_COLORS[side]}" stroke-width="2" '
                     f'points="{" ".join(points)}"><title>{esc(side)} · {esc(names.get(side, side))}</title></polyline>')
    parts.append("</svg>")
    # the marker is drawn over the chart in an SVG of its own (its own layer): moving it each step repaints three
    # shapes, not the chart's lines
    parts.append(f'<svg class="wc-svg wc-marks" viewBox="0 0 {CHART_W} {CHART_H}" aria-hidden="true" '
                 f'preserveAspectRatio="xMidYMid meet">'
                 f'<line class="wc-mark" x1="{sx(x[0])}" x2="{sx(x[0])}" y1="{top}" y2="{bottom}"/>')
    for side in SIDES:
        parts.append(f'<circle class="wc-dot wc-dot-{side}" r="5" cx="{sx(x[0])}" cy="{sy(series[side][0])}" '
                     f'fill="{SIDE_COLORS[side]}"/>')
    parts.append("</svg>")
    legend = "".join(f'<span class="wc-legend wc-c-{s}" style="color:{SIDE_COLORS[s]}">━ {esc(s)} · {esc(names.get(s, s))}</span>'
                     for s in SIDES)
    marks = [[sx(xv), sy(series["p1"][i]), sy(series["p2"][i])] for i, xv in enumerate(x)]
    return (f'<div class="wc-chart" data-chart="{key}"><div class="wc-plot">{"".join(parts)}</div>'
            f'<div class="wc-legends">{legend}</div></div>', marks)


def charts_svg(view: BattleView) -> tuple[str, dict[str, list[list[float]]]]:
    """Both charts (team HP, cumulative reward) as SVG, and each chart's marker position for every step.
    Memoised on the view for as long as it does not grow (an API step asks for one marker)."""
    key = (view.steps, view.finished)
    cached = getattr(view, "_charts_memo", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    result = _charts(view)
    view._charts_memo = (key, result)  # type: ignore[attr-defined]
    return result


def _charts(view: BattleView) -> tuple[str, dict[str, list[list[float]]]]:
    data = view.series()
    names = view.meta.names
    hp_html, hp_marks = _chart("hp", "Team HP (mean public HP %, 6 slots)", data["x"], data["hp"], names, (0, 100))
    reward_html, reward_marks = _chart("reward", "Cumulative reward", data["x"], data["reward"], names, None)
    return f'<div class="wc-charts">{hp_html}{reward_html}</div>', {"hp": hp_marks, "reward": reward_marks}


def turn_list_html(view: BattleView, start: int, stop: int, secret: str | None = None) -> list[str]:
    """One ``<li>`` per step (turn, both actions, knockouts that followed), clickable in the viewer."""
    items = []
    for index in range(start, stop):
        row = view.turn_row(index, secret)
        kos = "".join(f'<span class="wc-ko">✖ {esc(text)}</span>' for text in row["kos"])
        if row["label"] == "End":
            body = f'<b>End</b> <span class="wc-tl-text">{esc(row["text"])}</span>{kos}'
        else:
            body = (f'<b>{esc(row["label"])}</b> <span class="wc-tl-p1">{esc(row["p1"]) or "—"}</span>'
                    f' <span class="wc-tl-p2">{esc(row["p2"]) or "—"}</span>{kos}')
        items.append(f'<li data-step="{index}" tabindex="-1">{body}</li>')
    return items


def _window(view: BattleView, start: int, budget: int) -> tuple[int, int, list[str]]:
    """Panels around ``start`` until ``budget`` bytes: (first, stop, panels)."""
    total = view.steps
    panels: dict[int, str] = {}
    used = 0
    low, high = start, start  # [low, high) rendered so far
    while (low > 0 or high < total) and used < budget:
        for index in ((high,) if high < total else ()) + ((low - 1,) if low > 0 else ()):
            if used >= budget:
                break
            text = view.html(index, None, text_limit=TEXT_LIMIT)
            panels[index] = text
            used += len(text.encode("utf-8"))
            if index == high:
                high += 1
            else:
                low -= 1
    return low, high, [panels[i] for i in range(low, high)]


def battle_payload(view: BattleView, *, replay_id: str | None, start: int = 0, viewer: str = "replays",
                   token: str = "", budget: int = MAX_PAYLOAD_BYTES) -> dict[str, Any]:
    """Everything the browser needs to step through a battle without the server."""
    start = view.clamp(start)
    first, stop, panels = _window(view, start, budget) if view.steps else (0, 0, [])
    charts, marks = charts_svg(view)
    return {
        "kind": "open", "viewer": viewer, "token": token, "id": replay_id, "total": view.steps,
        "first": first, "start": start, "finished": view.finished,
        "turns": [view.step_turn(i) for i in range(view.steps)],
        "panels": panels, "list": turn_list_html(view, first, stop), "charts": charts,
        "marks": {k: v[first:stop] for k, v in marks.items()}, "marks_first": first,
        "decisions": len(view),
    }


def window_payload(view: BattleView, *, replay_id: str, start: int, token: str = "",
                   budget: int = WINDOW_BYTES) -> dict[str, Any]:
    """More of an open replay for the viewer to hold (fetched in the background as it nears the edge of what it
    has, or when it is sent to a step it does not have): the panels, list items and markers around ``start``."""
    start = view.clamp(start)
    first, stop, panels = _window(view, start, budget) if view.steps else (0, 0, [])
    _, marks = charts_svg(view)
    return {"kind": "window", "viewer": "replays", "token": token, "id": replay_id, "total": view.steps,
            "first": first, "panels": panels, "list": turn_list_html(view, first, stop),
            "marks": {k: v[first:stop] for k, v in marks.items()}, "marks_first": first}


def live_payload(view: BattleView, *, run: str, since: int, status: str, replay_id: str | None = None,
                 link: str = "", you: str | None = None) -> dict[str, Any]:
    """A live battle's update: the steps from ``since`` on (the previous last step is re-sent once its outcome is
    known), the charts redrawn, and the status line. The browser appends them to the same viewer.

    ``you``: the side a person at this page plays. Until the battle ends the other side's private knowledge is not
    in the payload at all (``BattleView.html(secret=…)``) and the viewer shows the battle as ``you`` see it; the
    finished battle's panels carry everything, and the viewer offers a toggle to show it."""
    since = max(0, min(since, view.steps))
    charts, marks = charts_svg(view)
    secret = None if you not in SIDES or view.finished else ("p2" if you == "p1" else "p1")
    perspective = you if secret else None
    return {
        "kind": "live", "viewer": "live", "token": run, "id": replay_id, "total": view.steps, "first": since,
        "finished": view.finished, "turns": [view.step_turn(i) for i in range(view.steps)],
        "panels": [view.html(i, perspective, text_limit=TEXT_LIMIT, secret=secret) for i in range(since, view.steps)],
        "list": turn_list_html(view, since, view.steps, secret), "charts": charts,
        "marks": marks, "marks_first": 0, "status": status, "link": link,
        "decisions": len(view), "you": you if you in SIDES else None, "secret": secret is not None,
    }


def to_json(payload: Mapping[str, Any]) -> str:
    """Compact JSON for the page (the HTML component carries it as its value; it is never parsed as HTML)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
