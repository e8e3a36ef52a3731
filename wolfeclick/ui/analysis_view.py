"""The analysis card under a replay: a win-probability chart, its turning points and mistakes, the option tables.

Pure HTML/SVG from a stored analysis (``wolfeclick.analysis``); every text from a recording or an analysis is
escaped. It sits beside the replay viewer rather than inside ``assets/viewer.js``, so either can change alone.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from wolfeclick.analysis.schema import Analysis, Estimate, load_analyses, pick_analysis
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.ui.presentation import played_by

WIDTH, HEIGHT, PAD = 640, 170, 28
SIDE_CLASS = {"p1": "wc-an-p1", "p2": "wc-an-p2"}
COLOUR = {"p1": "#2563eb", "p2": "#dc2626"}
"""Inline styles, so the card needs nothing from the app's stylesheet."""
PLAYED_ROW = '<tr class="wc-an-played" style="font-weight:700">'


def _x(index: int, count: int) -> float:
    return PAD + (WIDTH - 2 * PAD) * (index / max(1, count - 1))


def _y(value: float) -> float:
    return PAD / 2 + (HEIGHT - PAD) * (1 - value)


def _side(est: Estimate, side: str) -> tuple[float, float, float]:
    """(value, low, high) of a p1 estimate, from ``side``'s seat."""
    return (est.value, est.low, est.high) if side == "p1" else (1 - est.value, 1 - est.high, 1 - est.low)


def _action(action: ActionRecord | None) -> str:
    return escape(f"{action.action} {action.choice}") if action is not None else "default"


def chart_svg(analysis: Analysis, names: dict[str, str]) -> str:
    """Pure: one line per side with its interval band; turning points (circles) and mistakes (diamonds) marked."""
    points = analysis.decisions
    count = len(points)
    parts = [f'<svg class="wc-svg wc-an-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-label="win probability by decision">',
             f'<line class="wc-an-half" x1="{PAD}" x2="{WIDTH - PAD}" y1="{_y(0.5):.1f}" y2="{_y(0.5):.1f}" '
             'stroke="#9ca3af" stroke-dasharray="4 4"/>']
    for side in ("p1", "p2"):
        values = [_side(d.win, side) for d in points]
        upper = " ".join(f"{_x(n, count):.1f},{_y(high):.1f}" for n, (_, _, high) in enumerate(values))
        lower = " ".join(f"{_x(n, count):.1f},{_y(low):.1f}" for n, (_, low, _) in reversed(list(enumerate(values))))
        line = " ".join(f"{_x(n, count):.1f},{_y(value):.1f}" for n, (value, _, _) in enumerate(values))
        parts.append(f'<polygon class="wc-an-band {SIDE_CLASS[side]}" points="{upper} {lower}" '
                     f'fill="{COLOUR[side]}" fill-opacity="0.15" stroke="none"/>')
        parts.append(f'<polyline class="wc-an-line {SIDE_CLASS[side]}" points="{line}" fill="none" '
                     f'stroke="{COLOUR[side]}" stroke-width="2">'
                     f'<title>{escape(names.get(side, side))} ({side})</title></polyline>')
    where = {d.index: n for n, d in enumerate(points)}
    for point in analysis.turning_points:
        n = where.get(point.index)
        if n is not None:
            parts.append(f'<circle class="wc-an-turning" data-index="{point.index}" cx="{_x(n, count):.1f}" '
                         f'cy="{_y(point.before):.1f}" r="5" fill="#f59e0b"><title>turn {point.turn}: p1 {point.before:.2f} → '
                         f'{point.after:.2f}</title></circle>')
    for mistake in analysis.mistakes:
        n = where.get(mistake.index)
        if n is not None:
            value = _side(points[n].win, mistake.side)[0]
            x, y = _x(n, count), _y(value)
            parts.append(f'<path class="wc-an-mistake" data-index="{mistake.index}" d="M{x:.1f},{y - 6:.1f} '
                         f'L{x + 6:.1f},{y:.1f} L{x:.1f},{y + 6:.1f} L{x - 6:.1f},{y:.1f} Z" fill="#7c3aed"><title>{mistake.side} '
                         f'turn {mistake.turn}: {_action(mistake.played)} lost {mistake.loss:.2f}</title></path>')
    parts.append("</svg>")
    return "".join(parts)


def option_table_html(analysis: Analysis, index: int) -> str:
    """Pure: the option tables of decision ``index`` (one per valued side; '' when none was valued)."""
    out = []
    for decision in analysis.decisions:
        if decision.index != index:
            continue
        for side, table in sorted(decision.options.items()):
            rows = "".join(
                (PLAYED_ROW if option.action == table.played else "<tr>")
                + f"<td>{option.rank}</td><td>{_action(option.action)}</td><td>{option.estimate.value:.2f}</td>"
                f"<td>[{option.estimate.low:.2f}, {option.estimate.high:.2f}]</td></tr>"
                for option in table.options)
            verdict = (f"played {_action(table.played)}: rank {table.played_rank}, loss {table.loss:.2f}"
                       if table.played_rank is not None else f"played {_action(table.played)}")
            flag = " — a mistake" if table.mistake else ""
            out.append(f'<div class="wc-an-options" data-index="{decision.index}" data-side="{side}">'
                       f'<div class="wc-subhead">Decision {decision.index + 1} (turn {decision.turn}), {side}: '
                       f"{verdict}{flag}</div><table><thead><tr><th>#</th><th>option</th><th>win</th>"
                       f"<th>95%</th></tr></thead><tbody>{rows}</tbody></table></div>")
    return "".join(out)


def viewer_analysis(analysis: Analysis) -> dict[str, Any]:
    """Pure: what the replay viewer (``assets/viewer.js``) adds for an analysed battle, by step (= decision index):
    a mark on the turn-list line of each turning point and mistake (its tooltip as plain text, which the viewer sets
    as text) and the option tables shown in the decision panel of each valued decision (escaped HTML)."""
    marks: dict[str, dict[str, str]] = {}
    for point in analysis.turning_points:
        marks.setdefault(str(point.index), {})["turning"] = (
            f"turning point: p1's win probability {point.before:.2f} → {point.after:.2f}")
    for mistake in analysis.mistakes:
        line = marks.setdefault(str(mistake.index), {})
        note = (f"{mistake.side}'s mistake: {_plain(mistake.played)} lost {mistake.loss:.2f} "
                f"(best {_plain(mistake.best)})")
        line["mistake"] = f"{line['mistake']}; {note}" if "mistake" in line else note
    options = {str(d.index): option_table_html(analysis, d.index) for d in analysis.decisions if d.options}
    return {"marks": marks, "options": options, "k": analysis.k}


def _plain(action: ActionRecord | None) -> str:
    return f"{action.action} {action.choice}" if action is not None else "default"


def analysis_card(analysis: Analysis, recording: Recording) -> str:
    """Pure: the whole card for one stored analysis of ``recording``."""
    names = played_by({side: recording.players[side].name for side in ("p1", "p2")},
                      {side: recording.players[side].policy for side in ("p1", "p2")}, recording.source.kind == "branch")
    turning = "".join(f'<li data-index="{p.index}">turn {p.turn} (decision {p.index + 1}): p1 {p.before:.2f} → '
                      f"{p.after:.2f}</li>" for p in analysis.turning_points)
    mistakes = "".join(f'<li data-index="{m.index}">{m.side} turn {m.turn}: {_action(m.played)} '
                       f"(−{m.loss:.2f}; best {_action(m.best)})</li>" for m in analysis.mistakes)
    legend = " · ".join(f'<span class="{SIDE_CLASS[s]}" style="color:{COLOUR[s]}">{escape(names[s])} ({s})</span>'
                        for s in ("p1", "p2"))
    return (f'<div class="wc-card wc-analysis"><div class="wc-subhead">Win probability ({escape(analysis.policy)} '
            f"rollouts, K = {analysis.k}, seed {analysis.seed}; the analysis sees both teams)</div>"
            f'<div class="wc-an-legend">{legend}</div>{chart_svg(analysis, names)}'
            f'<div class="wc-subhead">Turning points</div><ul class="wc-an-turning-list">{turning}</ul>'
            + (f'<div class="wc-subhead">Mistakes (margin {analysis.margin:.2f})</div>'
               f'<ul class="wc-an-mistake-list">{mistakes or "<li>none found</li>"}</ul>'
               if any(d.options for d in analysis.decisions) else "")
            + (f'<div class="wc-muted">Step to a valued decision: its option table shows in the decision panel '
               f"beside the board ({sum(1 for d in analysis.decisions if d.options)} valued).</div>"
               if any(d.options for d in analysis.decisions) else "")
            + "</div>")


def stored_view(recordings_dir: Path, recording: Recording) -> tuple[str, dict[str, Any] | None]:
    """The card and the viewer's part (``viewer_analysis``) of the best stored analysis of ``recording``
    ('' and None when there is none); reads files."""
    found, _broken = load_analyses(recordings_dir, recording.id)
    analysis = pick_analysis(found)
    if analysis is None:
        return "", None
    return analysis_card(analysis, recording), viewer_analysis(analysis)
