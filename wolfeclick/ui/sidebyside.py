"""Two recordings of the same battle start (same seed and format) side by side: one step cursor for both, the
first decision where they part marked, and both battles' team HP and cumulative reward overlaid. Pure; no Gradio.

The same seed and format give the same teams only with the same seats: a tournament pair (one seed, seats and so
teams swapped) is two different battles and is refused. A branch and its parent, or two policies' battles against
one opponent on one seed, are the pairs this view is for.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from wolfeclick.battle.schema import Recording, TurnRecord
from wolfeclick.sides import SIDES, Side
from wolfeclick.ui.battle_panels import SIDE_COLORS, BattleView, esc
from wolfeclick.ui.presentation import InputError
from wolfeclick.ui.viewer_payload import TEXT_LIMIT, nice_ticks

__all__ = ["PairError", "check_pair", "divergence", "overlay_charts", "pair_html"]

W, H = 460, 210
LEFT, RIGHT, TOP, BOTTOM = 44, W - 12, 26, H - 28
DASH = {"a": "", "b": ' stroke-dasharray="6 4"'}


class PairError(InputError):
    """Two recordings that are not the same battle start; one line."""


def check_pair(a: Recording, b: Recording) -> None:
    """Raise PairError unless ``a`` and ``b`` start as the same battle (seed, format, seats)."""
    if a.seed is None or b.seed is None or a.seed != b.seed or a.format != b.format:
        raise PairError(f"these two battles did not start alike: {a.format} seed {a.seed} vs {b.format} seed "
                        f"{b.seed} (pick two recordings with the same seed and format)")
    specs_a = (a.players["p1"].policy, a.players["p2"].policy)
    specs_b = (b.players["p1"].policy, b.players["p2"].policy)
    if specs_a != specs_b and specs_a == specs_b[::-1]:
        raise PairError("the seats are swapped (a tournament pair): same seed, but each side had the other's team, "
                        "so it is a different battle")


def _choices(record: TurnRecord) -> dict[str, str | None]:
    """What each side chose at a decision point: the command the simulator got (``move 1``, ``switch 3``)."""
    return {side: decision.command for side, decision in sorted(record.decisions.items())}


def _events(record: TurnRecord, names: Mapping[Side, str]) -> list[str]:
    """The protocol lines that followed, with the players' names written as their seats (``|player|p1|heuristic``
    and ``|win|maxdamage`` say who played, not what happened) and timestamps dropped."""
    by_name = {name: side for side, name in names.items() if name}
    out = []
    for line in record.events:
        parts = line.split("|")
        if len(parts) > 1 and parts[1] in ("t:", "j", "J", "l", "L", "c", "c:", "chat", "raw", "html"):
            continue
        parts = [by_name.get(part, part) for part in parts]
        line = "|".join(parts)
        for side, name in names.items():  # "|-sidestart|p1: heuristic|…": a side told by its player's name
            if name:
                line = line.replace(f"{side}: {name}", side)
        out.append(line)
    return out


def divergence(a: Recording, b: Recording) -> int | None:
    """The first decision where the two battles part: the first whose chosen actions differ or, where both sides
    chose alike, whose resulting events differ — with the players' names left out (the same move by two policies
    of different names is the same battle). None: identical throughout."""
    names_a = {side: player.name for side, player in a.players.items()}
    names_b = {side: player.name for side, player in b.players.items()}
    turns_a, turns_b = a.turns, b.turns

    def events_differ(index: int) -> bool:
        return _events(turns_a[index], names_a) != _events(turns_b[index], names_b)

    for index in range(max(len(turns_a), len(turns_b))):
        if index >= len(turns_a) or index >= len(turns_b):  # one ended after the decision before: its outcome
            return max(0, index - 1)
        if index == 0 and events_differ(0):  # not even the same start (teams, leads)
            return 0
        if _choices(turns_a[index]) != _choices(turns_b[index]):
            return index
        if index + 1 < min(len(turns_a), len(turns_b)) and events_differ(index + 1):  # same choices, other outcome
            return index
    return None


def _overlay(key: str, title: str, series: Mapping[str, Mapping[str, Any]], fixed: tuple[float, float] | None,
             mark: int | None, cursor: int) -> str:
    """One SVG chart: both sides of both battles (A solid, B dashed) by decision step, the divergence and cursor
    as vertical lines."""
    steps = max((len(s["x"]) for s in series.values()), default=0)
    if not steps:
        return f'<div class="wc-chart wc-muted">{esc(title)}: no data.</div>'
    values = [v for s in series.values() for side in SIDES for v in s[key][side]]
    low, high = fixed or (min(values + [0.0]), max(values + [0.0]))
    if high - low < 1e-9:
        high = low + 1
    sx = lambda i: round(LEFT + i * (RIGHT - LEFT) / max(1, steps - 1), 1)  # noqa: E731
    sy = lambda v: round(BOTTOM - (v - low) * (BOTTOM - TOP) / (high - low), 1)  # noqa: E731
    parts = [f'<svg class="wc-svg" viewBox="0 0 {W} {H}" role="img" aria-label="{esc(title)}">',
             f'<text x="{LEFT}" y="16" class="wc-svg-title">{esc(title)}</text>']
    for tick in nice_ticks(low, high, 4):
        parts.append(f'<line x1="{LEFT}" x2="{RIGHT}" y1="{sy(tick)}" y2="{sy(tick)}" class="wc-grid"/>'
                     f'<text x="{LEFT - 4}" y="{sy(tick) + 4}" class="wc-tick" text-anchor="end">{tick:g}</text>')
    parts.append(f'<text x="{RIGHT}" y="{BOTTOM + 22}" class="wc-tick" text-anchor="end">decision</text>')
    for name, data in series.items():
        for side in SIDES:
            ys = data[key][side]
            points = " ".join(f"{sx(i)},{sy(v)}" for i, v in enumerate(ys))
            parts.append(f'<polyline class="wc-ov-{name}-{side}" fill="none" stroke="{SIDE_COLORS[side]}" '
                         f'stroke-width="2"{DASH[name]} points="{points}"><title>{name.upper()} · {side}</title>'
                         f'</polyline>')
    if mark is not None:
        parts.append(f'<line class="wc-divergence-line" x1="{sx(mark)}" x2="{sx(mark)}" y1="{TOP}" y2="{BOTTOM}" '
                     f'stroke="#f59e0b" stroke-width="2"/>')
    parts.append(f'<line class="wc-mark" x1="{sx(cursor)}" x2="{sx(cursor)}" y1="{TOP}" y2="{BOTTOM}"/></svg>')
    legend = "".join(f'<span class="wc-legend" style="color:{SIDE_COLORS[s]}">{"━" if n == "a" else "╍"} '
                     f'{n.upper()} {s}</span>' for n in series for s in SIDES)
    return f'<div class="wc-chart" data-chart="{key}">{"".join(parts)}<div class="wc-legends">{legend}</div></div>'


def overlay_charts(a: BattleView, b: BattleView, mark: int | None, cursor: int) -> str:
    """Team HP and cumulative reward of both battles in one pair of charts."""
    series = {"a": a.series(), "b": b.series()}
    return (f'<div class="wc-charts">{_overlay("hp", "Team HP, A solid · B dashed", series, (0, 100), mark, cursor)}'
            f'{_overlay("reward", "Cumulative reward, A solid · B dashed", series, None, mark, cursor)}</div>')


def _banner(mark: int | None, a: BattleView, b: BattleView, step: int) -> str:
    if mark is None:
        return '<div class="wc-card wc-divergence-none">The two battles are identical, decision by decision.</div>'
    turn = a.turns[mark].turn if mark < len(a.turns) else b.turns[mark].turn if mark < len(b.turns) else "?"
    here = " — <b>you are here</b>" if step == mark else ""
    return (f'<div class="wc-card wc-divergence" data-divergence="{mark}">⚑ First divergence: decision {mark + 1} '
            f'(turn {esc(turn)}){here}. Everything before it is the same in both.</div>')


def pair_html(a: BattleView, b: BattleView, ids: Sequence[str], step: int, mark: int | None) -> str:
    """Both battles at decision ``step`` (one cursor), the divergence banner, and the overlaid charts."""
    columns = []
    for name, view, replay_id in (("A", a, ids[0]), ("B", b, ids[1])):
        here = min(step, view.steps - 1) if view.steps else 0
        flag = (' <span class="wc-badge wc-illegal">diverged</span>' if mark is not None and step >= mark
                else ' <span class="wc-badge wc-legal">same so far</span>')
        columns.append(f'<div class="wc-pair-col" data-pair="{name.lower()}"><div class="wc-subhead">{name}: '
                       f'<code>{esc(replay_id)}</code>{flag}</div>{view.html(here, "p1", text_limit=TEXT_LIMIT)}'
                       f'</div>')
    return (f'<div class="wc-pair" data-step="{step}">{_banner(mark, a, b, step)}'
            f'<div class="wc-pair-cols">'
            f'{"".join(columns)}</div>{overlay_charts(a, b, mark, step)}</div>')
