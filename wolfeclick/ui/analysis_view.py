"""The analysis card under a replay: a win-probability chart, its turning points and mistakes, the option tables;
for a replay with no analysis, the value model's estimate on the same chart.

Pure HTML/SVG from a stored analysis (``wolfeclick.analysis``); every text from a recording or an analysis is
escaped. It sits beside the replay viewer rather than inside ``assets/viewer.js``, so either can change alone.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from wolfeclick.analysis.schema import Analysis, OptionValue, load_analyses, pick_analysis
from wolfeclick.analysis.value_model import SEES, ValueModel, estimate_battle
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.ui.battle_panels import shown_names
from wolfeclick.ui.viewer_payload import nice_ticks

WIDTH, HEIGHT, PAD = 900, 190, 28
"""The chart's drawing units: about a wide card's pixels (a 915 px card draws it at 1:1, its labels at 11 px); on a
phone app.css sets the labels larger in these units, so they read at about 10 px there too."""
ESTIMATE_HEIGHT = 150
"""The estimate's chart is shorter (the battle below it stays in view), never narrower: a max-height had shrunk the
whole drawing to about half its card's width."""
LEFT, BOTTOM = 44, 30
"""Room for the y axis' percent labels and the x axis' turn numbers."""
X_TICKS = 12
"""At most this many turn labels on the x axis (75 drawing units apart or more)."""
SIDE_CLASS = {"p1": "wc-an-p1", "p2": "wc-an-p2"}
COLOUR = {"p1": "#2563eb", "p2": "#dc2626"}
"""Inline styles, so the card needs nothing from the app's stylesheet."""
PLAYED_ROW = '<tr class="wc-an-played" style="font-weight:700">'
SIGNS = {"turning": "●", "mistake": "◆"}
"""One sign per kind of mark, wherever it is drawn: the chart's marks (a circle, a diamond), its legend, the card's
lists and the viewer's turn list (sent in ``viewer_analysis``)."""


def _x(index: int, count: int) -> float:
    return LEFT + (WIDTH - LEFT - PAD) * (index / max(1, count - 1))


def _y_at(value: float, height: int = HEIGHT) -> float:
    return PAD / 2 + (height - PAD / 2 - BOTTOM) * (1 - value)


def _axes(turns: list[int], height: int) -> list[str]:
    """The y axis in percent (0, 25, 50, 75, 100; the 50 % line dashed) and the x axis by turn, as the turning points
    and mistakes are listed: round turn numbers (``viewer.nice_ticks``, at most ``X_TICKS``), each at the first
    charted decision of its turn, and the axis' name, "turn", at its left end."""
    parts = []
    for pct in (0, 25, 50, 75, 100):
        y = _y_at(pct / 100, height)
        dash = ' stroke-dasharray="4 4"' if pct == 50 else ""
        parts.append(f'<line class="wc-an-grid{" wc-an-half" if pct == 50 else ""}" x1="{LEFT}" x2="{WIDTH - PAD}" '
                     f'y1="{y:.1f}" y2="{y:.1f}" stroke="{"#9ca3af" if pct == 50 else "#e5e7eb"}"{dash}/>'
                     f'<text class="wc-an-ytick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="#6b7280">{pct}%</text>')
    parts.append(f'<text class="wc-an-xtitle" x="{LEFT - 6}" y="{height - 4}" text-anchor="end" font-size="11" '
                 'fill="#6b7280">turn</text>')
    if not turns:
        return parts
    first_at: dict[int, int] = {}
    for n, turn in enumerate(turns):
        first_at.setdefault(turn, n)
    for tick in nice_ticks(min(turns), max(turns), X_TICKS, integer=True):
        at = first_at.get(int(tick))
        if at is None:
            continue  # a turn with no charted decision (the analysis skipped it): no label rather than a wrong one
        parts.append(f'<text class="wc-an-xtick" x="{_x(at, len(turns)):.1f}" y="{height - 4}" text-anchor="middle" '
                     f'font-size="11" fill="#6b7280">{int(tick)}</text>')
    return parts


def _action(action: ActionRecord | None) -> str:
    return escape(f"{action.action} {action.choice}") if action is not None else "default"


ESTIMATE_LABEL = "estimate from the public state — not rollouts"
"""How the value model's line is named wherever it is drawn (``wolfeclick.analysis.value_model``)."""
ESTIMATE_COLOUR = "#6b7280"


def chart_svg(analysis: Analysis | None, names: dict[str, str],
              estimate: list[tuple[int, float]] | None = None, turns: list[int] | None = None) -> str:
    """Pure: p1's win probability by decision, as a chess site's evaluation graph: one line with its 95 % band on a
    0-100 % axis (the 50 % line dashed; p2's chance is the rest), an x axis by turn (a point per decision), a cursor
    the viewer moves to the shown decision (``data-xs``: x by decision index) and the turning points (circles) and
    mistakes (diamonds) as marks that open their decision when clicked.

    ``estimate`` (decision index, p1's chance) is the value model's line: drawn dashed beside the rollouts'
    (``wc-an-estimate``, at the analysed decisions), or alone, shorter (``ESTIMATE_HEIGHT``), with no band and no
    marks, when there is no ``analysis``. ``turns``: the recording's turn by decision index (an analysis carries its
    own)."""
    if analysis is not None:
        points = [(d.index, d.win.value, d.win.low, d.win.high) for d in analysis.decisions]
        turn_of = {d.index: d.turn for d in analysis.decisions}
    else:
        points = [(index, value, value, value) for index, value in estimate or []]
        turn_of = {index: turns[index] for index, _ in estimate or [] if turns and index < len(turns)}
    height = HEIGHT if analysis is not None else ESTIMATE_HEIGHT

    def _y(value: float) -> float:
        return _y_at(value, height)

    count = len(points)
    xs = {index: round(_x(n, count), 1) for n, (index, _, _, _) in enumerate(points)}
    charted = [turn_of[index] for index, _, _, _ in points] if len(turn_of) == count else []
    xs_attr = escape(",".join(f"{index}:{x}" for index, x in xs.items()))
    start_x = next(iter(xs.values()), LEFT)
    p1 = escape(names.get("p1", "p1"))
    parts = [f'<svg class="wc-svg wc-an-chart" viewBox="0 0 {WIDTH} {height}" role="img" data-xs="{xs_attr}" '
             f'aria-label="{p1} (p1): win probability by turn">', *_axes(charted, height)]
    line = " ".join(f"{_x(n, count):.1f},{_y(value):.1f}" for n, (_, value, _, _) in enumerate(points))
    if analysis is not None:
        upper = " ".join(f"{_x(n, count):.1f},{_y(high):.1f}" for n, (_, _, _, high) in enumerate(points))
        lower = " ".join(f"{_x(n, count):.1f},{_y(low):.1f}" for n, (_, _, low, _) in reversed(list(enumerate(points))))
        parts.append(f'<polygon class="wc-an-band {SIDE_CLASS["p1"]}" points="{upper} {lower}" '
                     f'fill="{COLOUR["p1"]}" fill-opacity="0.15" stroke="none"/>')
        parts.append(f'<polyline class="wc-an-line {SIDE_CLASS["p1"]}" points="{line}" fill="none" '
                     f'stroke="{COLOUR["p1"]}" stroke-width="2">'
                     f'<title>{p1} (p1): win probability</title></polyline>')
        found = dict(estimate or [])
        beside = " ".join(f"{_x(n, count):.1f},{_y(found[index]):.1f}" for n, (index, _, _, _) in enumerate(points)
                          if index in found)
        if beside:
            parts.append(f'<polyline class="wc-an-estimate" points="{beside}" fill="none" stroke="{ESTIMATE_COLOUR}" '
                         f'stroke-width="1.5" stroke-dasharray="5 3"><title>{p1} (p1): value model, '
                         f"{ESTIMATE_LABEL}</title></polyline>")
    else:
        parts.append(f'<polyline class="wc-an-estimate {SIDE_CLASS["p1"]}" points="{line}" fill="none" '
                     f'stroke="{COLOUR["p1"]}" stroke-width="2" stroke-dasharray="6 3">'
                     f"<title>{p1} (p1): win probability, {ESTIMATE_LABEL}</title></polyline>")
    parts.append(f'<line class="wc-an-cursor" x1="{start_x}" x2="{start_x}" y1="{_y(1):.1f}" y2="{_y(0):.1f}" '
                 'stroke="#111827" stroke-width="1.5"/>')
    if analysis is None:
        parts.append("</svg>")
        return "".join(parts)
    where = {index: n for n, (index, _, _, _) in enumerate(points)}
    for point in analysis.turning_points:
        n = where.get(point.index)
        if n is not None:
            parts.append(f'<circle class="wc-an-turning" data-index="{point.index}" cx="{_x(n, count):.1f}" '
                         f'cy="{_y(point.before):.1f}" r="6" fill="#d97706" style="cursor:pointer">'
                         f'<title>decision {point.index + 1}, turn {point.turn}: p1 {point.before:.0%} → '
                         f'{point.after:.0%} (click to open)</title></circle>')
    for mistake in analysis.mistakes:
        n = where.get(mistake.index)
        if n is not None:
            x, y = _x(n, count), _y(points[n][1])
            parts.append(f'<path class="wc-an-mistake" data-index="{mistake.index}" d="M{x:.1f},{y - 7:.1f} '
                         f'L{x + 7:.1f},{y:.1f} L{x:.1f},{y + 7:.1f} L{x - 7:.1f},{y:.1f} Z" fill="#7c3aed" '
                         f'style="cursor:pointer"><title>decision {mistake.index + 1}, {mistake.side} turn '
                         f'{mistake.turn}: {_action(mistake.played)} lost {mistake.loss:.2f} (click to open)</title>'
                         "</path>")
    parts.append("</svg>")
    return "".join(parts)


def _early(option: OptionValue) -> str:
    """Racing's note on an option it stopped: the interval beside it is from fewer rollouts than the others'."""
    if not option.stopped_early:
        return ""
    return f' <span class="wc-an-early">stopped early after {option.estimate.rollouts} rollouts</span>'


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
                f"<td>[{option.estimate.low:.2f}, {option.estimate.high:.2f}]{_early(option)}</td></tr>"
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
    return {"marks": marks, "options": options, "k": analysis.k, "signs": SIGNS}


def _plain(action: ActionRecord | None) -> str:
    return f"{action.action} {action.choice}" if action is not None else "default"


def _estimate_note(estimate: list[tuple[int, float]] | None) -> str:
    if not estimate:
        return ""
    return (f' <span class="wc-an-estimate-note" style="color:{ESTIMATE_COLOUR}">The dashed grey line is the value '
            f"model's {ESTIMATE_LABEL}.</span>")


def analysis_card(analysis: Analysis, recording: Recording, estimate: list[tuple[int, float]] | None = None) -> str:
    """Pure: the whole card for one stored analysis of ``recording``, with the value model's ``estimate`` beside its
    line when given."""
    names = shown_names(recording)
    turning = "".join(f'<li data-index="{p.index}" style="cursor:pointer">turn {p.turn} (decision {p.index + 1}): p1 '
                      f"{p.before:.2f} → {p.after:.2f}</li>" for p in analysis.turning_points)
    mistakes = "".join(f'<li data-index="{m.index}" style="cursor:pointer">{m.side} turn {m.turn}: '
                       f"{_action(m.played)} (−{m.loss:.2f}; best {_action(m.best)})</li>" for m in analysis.mistakes)
    legend = (f'<span class="{SIDE_CLASS["p1"]}" style="color:{COLOUR["p1"]}">{escape(names["p1"])} (p1)</span>\'s '
              f"chance to win, with its 95 % band; {escape(names['p2'])} (p2) has the rest. The cursor is the shown "
              f"decision; click a mark ({SIGNS['turning']} turning point, {SIGNS['mistake']} mistake) or a line below to "
              "open it."
              + _estimate_note(estimate))
    return (f'<div class="wc-card wc-analysis"><div class="wc-subhead">Win probability ({escape(analysis.policy)} '
            f"rollouts, K = {analysis.k}, seed {analysis.seed}; the analysis "
            f"{'sees both teams' if analysis.sees == 'both teams' else 'starts ' + escape(analysis.sees)})</div>"
            f'<div class="wc-an-legend">{legend}</div>{chart_svg(analysis, names, estimate)}'
            f'<div class="wc-subhead">{SIGNS["turning"]} Turning points</div><ul class="wc-an-turning-list">{turning}</ul>'
            + (f'<div class="wc-subhead">{SIGNS["mistake"]} Mistakes (margin {analysis.margin:.2f})</div>'
               f'<ul class="wc-an-mistake-list">{mistakes or "<li>none found</li>"}</ul>'
               if any(d.options for d in analysis.decisions) else "")
            + (f'<div class="wc-muted">Step to a valued decision: its option table shows in the decision panel '
               f"beside the board ({sum(1 for d in analysis.decisions if d.options)} valued).</div>"
               if any(d.options for d in analysis.decisions) else "")
            + "</div>")


SEES_SHORT = ("what a spectator sees — HP, fainted and unrevealed Pokémon, statuses, boosts, hazards, the active "
              "Pokémon's species — not the hidden Pokémon, moves or items")
"""What the value model reads, in one line for its card (``analysis.value_model.SEES`` says it whole: the chart's
tooltip and docs/value-model.md)."""


def estimate_card(estimate: list[tuple[int, float]], recording: Recording) -> str:
    """Pure: the card of a replay with no stored analysis: the value model's line alone, named an estimate, saying
    what it sees and where rollouts refine it ('' for a battle with no decisions). Kept short: on a phone it follows
    the battle (app.css), on a wide screen it sits above it."""
    if not estimate:
        return ""
    names = shown_names(recording)
    legend = (f'<span class="{SIDE_CLASS["p1"]}" style="color:{COLOUR["p1"]}">{escape(names["p1"])} (p1)</span>\'s '
              f"chance to win ({escape(names['p2'])} has the rest) as a small model reads it from {SEES_SHORT}, "
              "learnt from heuristic-vs-heuristic battles. Refined by rollouts on request: <b>Analyse this battle</b> "
              "(in the controls).")
    return (f'<div class="wc-card wc-estimate" title="{escape(SEES)}"><div class="wc-subhead">Win probability: '
            f'{ESTIMATE_LABEL}</div><div class="wc-an-legend wc-muted">{legend}</div>'
            f"{chart_svg(None, names, estimate, [t.turn for t in recording.turns])}</div>")


def stored_view(recordings_dir: Path, recording: Recording,
                model: ValueModel | None = None) -> tuple[str, dict[str, Any] | None]:
    """The card and the viewer's part (``viewer_analysis``) of the best stored analysis of ``recording``, with
    ``model``'s estimate beside it; with no analysis, the estimate's card alone and None ('' and None when there is
    neither); reads files."""
    estimate = estimate_battle(model, recording) if model is not None else None
    found, _broken = load_analyses(recordings_dir, recording.id)
    analysis = pick_analysis(found)
    if analysis is None:
        return estimate_card(estimate or [], recording), None
    return analysis_card(analysis, recording, estimate), viewer_analysis(analysis)
