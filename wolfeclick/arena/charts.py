"""Plotly charts for arena results.

Pure functions from summarised data to `plotly.graph_objects.Figure`; no I/O.
Every title states how many battles the chart rests on, so a chart screenshot
cannot hide a tiny sample. Traces are built in sorted order and no ids are
generated, so `fig.to_json()` is identical for identical input.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from wolfeclick.arena.stats import PairedSummary, PairingSummary

__all__ = [
    "win_rate_chart",
    "win_heatmap",
    "ratings_chart",
    "battle_length_chart",
    "illegal_actions_chart",
    "rating_history_chart",
]


def _label(name: str) -> str:
    """A player name as Plotly text: Plotly renders a subset of HTML in trace names and tick labels (an
    ``<a href>`` in a name becomes a clickable link), so names are escaped; Plotly shows the entities as text."""
    return html.escape(str(name), quote=False)


def _battles(n: int) -> str:
    return f"{n} battle" if n == 1 else f"{n} battles"


def _base_layout(fig: go.Figure, title: str, basis: str) -> go.Figure:
    """The title on one line and what the chart rests on (its battle count) on a second, smaller one: SVG text does
    not wrap, and one long line was cut by the chart's edge at phone width (414 px)."""
    fig.update_layout(title={"text": f"{title}<br><sup>{basis}</sup>"}, template="plotly_white")
    return fig


def win_rate_chart(
    summaries: Sequence[PairingSummary], n_battles: int | None = None,
    paired: Mapping[tuple[str, str], PairedSummary] | None = None,
) -> go.Figure:
    """One bar per pairing: the first-named policy's score per game (ties ½) and its 95 % interval.

    With ``paired`` (by ``(a, b)``), a pairing's bar and interval are the paired ones its verdict rests on (pairs of
    battles on the same teams with seats swapped): per-battle Wilson bars read surer than the verdict, which counts
    a pair as one observation. Without it (or for a pairing it lacks), the per-battle Wilson interval.
    `n_battles` defaults to the sum of games over the summaries.
    """
    rows = sorted(summaries, key=lambda s: (s.a, s.b))
    n = sum(s.games for s in rows) if n_battles is None else n_battles
    by_pair = [(paired or {}).get((s.a, s.b)) for s in rows]
    value = [p.mean if p is not None and p.pairs else s.win_rate_a for s, p in zip(rows, by_pair)]
    low = [p.ci_low if p is not None and p.pairs else s.ci_low for s, p in zip(rows, by_pair)]
    high = [p.ci_high if p is not None and p.pairs else s.ci_high for s, p in zip(rows, by_pair)]
    basis = ["paired: the verdict's interval" if p is not None and p.pairs else "per battle (Wilson)"
             for p in by_pair]
    fig = go.Figure(
        go.Bar(
            name="score per game",
            x=[_label(f"{s.a} vs {s.b}") for s in rows],
            y=value,
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [h - v for h, v in zip(high, value)],
                "arrayminus": [v - lo for v, lo in zip(value, low)],
            },
            customdata=[[s.games, s.wins_a, s.wins_b, s.ties, lo, h, b]
                        for s, lo, h, b in zip(rows, low, high, basis)],
            hovertemplate=(
                "%{x}<br>score per game %{y:.3f} [%{customdata[4]:.3f}, %{customdata[5]:.3f}], "
                "%{customdata[6]}<br>games %{customdata[0]}: "
                "%{customdata[1]}-%{customdata[2]}-%{customdata[3]}<extra></extra>"
            ),
        )
    )
    fig.add_hline(y=0.5, line_dash="dot", line_color="grey")
    title = ("score of first policy per game, 95 % paired interval" if any(b.startswith("paired") for b in basis)
             else "win rate of first policy (ties ½)")
    fig.update_yaxes(range=[0, 1], title_text=title)
    return _base_layout(fig, "Win rate per pairing", _battles(n))


def win_heatmap(
    summaries: Sequence[PairingSummary],
    players: Sequence[str] | None = None,
    n_battles: int | None = None,
) -> go.Figure:
    """Score fraction of the row policy against the column policy (ties ½).

    Diverging colours centred at 0.5 so an even matchup is neutral; values are
    written in the cells. Unplayed pairings and the diagonal are blank.
    `players` fixes the row/column order (default: sorted names).
    """
    names = (
        list(players)
        if players is not None
        else sorted({p for s in summaries for p in (s.a, s.b)})
    )
    pos = {p: k for k, p in enumerate(names)}
    size = len(names)
    z: list[list[float | None]] = [[None] * size for _ in range(size)]
    text: list[list[str]] = [[""] * size for _ in range(size)]
    counted = 0
    for s in summaries:
        if s.a not in pos or s.b not in pos:
            continue
        counted += s.games
        i, j = pos[s.a], pos[s.b]
        z[i][j], z[j][i] = s.win_rate_a, 1.0 - s.win_rate_a
        text[i][j] = f"{s.win_rate_a:.2f}"
        text[j][i] = f"{1.0 - s.win_rate_a:.2f}"
    n = counted if n_battles is None else n_battles
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[_label(n) for n in names],
            y=[_label(n) for n in names],
            text=text,
            texttemplate="%{text}",
            colorscale="RdBu",
            zmin=0.0,
            zmax=1.0,
            zmid=0.5,
            hoverongaps=False,
            colorbar={"title": {"text": "row score"}},
            hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", title_text="row policy")
    fig.update_xaxes(title_text="column policy")
    return _base_layout(fig, "Head-to-head score, row vs column", _battles(n))


def ratings_chart(
    ratings_with_intervals: Mapping[str, tuple[float, float, float]],
    n_battles: int,
    open_sides: Mapping[str, str | None] | None = None,
    order: Sequence[str] | None = None,
) -> go.Figure:
    """Ratings as points with interval bars, strongest first.

    Takes {name: (rating, low, high)} and, in ``open_sides``, the side of each interval the data leave open
    (`intervals`). An open end gets no bar: the number the fit has there is the prior's, so an arrow from the
    point says "no bound this way" instead, and the hover text reads "open", as the tables do. The battle count
    cannot be recovered from ratings, so `n_battles` is required. ``order`` (the table's) overrides the
    strongest-first order.
    """
    from wolfeclick.arena.intervals import bounds_text, open_high, open_low

    sides = open_sides or {}
    rows = sorted(ratings_with_intervals.items(), key=lambda kv: (-kv[1][0], kv[0]))
    if order is not None:  # the table's order: a policy with too few battles is not drawn first
        place = {name: k for k, name in enumerate(order)}
        rows.sort(key=lambda kv: place.get(kv[0], len(place)))
    names = [_label(name) for name, _ in rows]
    fig = go.Figure(
        go.Scatter(
            name="rating",
            mode="markers",
            x=names,
            y=[r for _, (r, _, _) in rows],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [0.0 if open_high(sides.get(name)) else hi - r for name, (r, _, hi) in rows],
                "arrayminus": [0.0 if open_low(sides.get(name)) else r - lo for name, (r, lo, _) in rows],
            },
            customdata=[[bounds_text(lo, hi, sides.get(name))] for name, (_, lo, hi) in rows],
            hovertemplate="%{x}: %{y:.0f} %{customdata[0]}<extra></extra>",
        )
    )
    for label, (name, (r, _, _)) in zip(names, rows):
        for is_open, up in ((open_high(sides.get(name)), True), (open_low(sides.get(name)), False)):
            if is_open:  # an arrow from the point, 45 px long, pointing the way the data set no bound
                fig.add_annotation(x=label, y=r, ax=0, ay=-45 if up else 45, showarrow=True, arrowside="start",
                                   arrowhead=2, arrowwidth=1.5, arrowcolor="grey", text="",
                                   hovertext=f"{'upper' if up else 'lower'} end open: no bound from the data")
    fig.update_yaxes(title_text="rating (Elo scale)")
    note = "; arrows: no bound from the data" if any(open_high(v) or open_low(v) for v in sides.values()) else ""
    return _base_layout(fig, "Ratings with 95% intervals", f"{_battles(n_battles)}{note}")


def _count_entries(by_policy: Mapping[str, Sequence[int]]) -> int:
    return sum(len(v) for v in by_policy.values())


def battle_length_chart(
    lengths_by_policy: Mapping[str, Sequence[int]], n_battles: int | None = None
) -> go.Figure:
    """Box plot of battle length (turns) per policy.

    A battle usually appears under both of its policies, so pass `n_battles`;
    the fallback counts every listed length as one battle.
    """
    n = _count_entries(lengths_by_policy) if n_battles is None else n_battles
    fig = go.Figure(
        [
            go.Box(name=_label(name), y=list(lengths_by_policy[name]), boxpoints="outliers")
            for name in sorted(lengths_by_policy)
        ]
    )
    fig.update_layout(showlegend=False)
    fig.update_yaxes(title_text="turns")
    return _base_layout(fig, "Battle length per policy", _battles(n))


def illegal_actions_chart(
    illegal_by_policy: Mapping[str, Sequence[int]], n_battles: int | None = None
) -> go.Figure:
    """Histogram of illegal actions per battle, one bar group per policy.

    Unit-width bins, because counts are small integers and mostly zero. As
    with `battle_length_chart`, the fallback battle count is the number of
    listed values.
    """
    n = _count_entries(illegal_by_policy) if n_battles is None else n_battles
    fig = go.Figure(
        [
            go.Histogram(
                name=_label(name),
                x=list(illegal_by_policy[name]),
                xbins={"start": -0.5, "size": 1},
            )
            for name in sorted(illegal_by_policy)
        ]
    )
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="illegal actions in a battle", dtick=1)
    fig.update_yaxes(title_text="battles")
    return _base_layout(fig, "Illegal actions per battle", _battles(n))


def rating_history_chart(policy: str, points: Sequence[Any], z: float = 1.96) -> go.Figure:
    """One policy's Glicko-2 rating after each rating period, with the band rating ± ``z``·RD (95 %).

    ``points`` are `leaderboard.GlickoPoint`s (anything with ``period``, ``rating``, ``rd``, ``battles``). The x
    axis is the period's ordinal (periods are tournaments or days, ordered by their first battle), labelled with
    the period's name; the title counts the policy's battles over them.
    """
    xs = list(range(1, len(points) + 1))
    labels = [_label(p.period) for p in points]
    upper = [p.rating + z * p.rd for p in points]
    lower = [p.rating - z * p.rd for p in points]
    n = sum(p.battles for p in points)
    fig = go.Figure(
        [
            go.Scatter(
                name="95% band",
                x=xs + xs[::-1],
                y=upper + lower[::-1],
                fill="toself",
                fillcolor="rgba(99,102,241,0.18)",
                line={"width": 0},
                hoverinfo="skip",
                showlegend=True,
            ),
            go.Scatter(
                name=_label(policy),
                x=xs,
                y=[p.rating for p in points],
                mode="lines+markers",
                line={"color": "rgb(79,70,229)"},
                customdata=[[lbl, p.rd, p.battles] for lbl, p in zip(labels, points)],
                hovertemplate=(
                    "%{customdata[0]}<br>rating %{y:.0f} (RD %{customdata[1]:.0f})"
                    "<br>battles in period %{customdata[2]}<extra></extra>"
                ),
            ),
        ]
    )
    fig.update_xaxes(title_text="rating period", tickmode="array", tickvals=xs, ticktext=labels)
    fig.update_yaxes(title_text="Glicko-2 rating")
    return _base_layout(fig, "Glicko-2 rating over time", f"{_label(policy)}, 95% band; {_battles(n)}")
