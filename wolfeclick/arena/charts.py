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

from wolfeclick.arena.stats import PairingSummary

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


def _base_layout(fig: go.Figure, title: str) -> go.Figure:
    fig.update_layout(title={"text": title}, template="plotly_white")
    return fig


def win_rate_chart(
    summaries: Sequence[PairingSummary], n_battles: int | None = None
) -> go.Figure:
    """One bar per pairing: first-named policy's win rate with Wilson 95 % bars.

    `n_battles` defaults to the sum of games over the summaries.
    """
    rows = sorted(summaries, key=lambda s: (s.a, s.b))
    n = sum(s.games for s in rows) if n_battles is None else n_battles
    fig = go.Figure(
        go.Bar(
            name="win rate",
            x=[_label(f"{s.a} vs {s.b}") for s in rows],
            y=[s.win_rate_a for s in rows],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [s.ci_high - s.win_rate_a for s in rows],
                "arrayminus": [s.win_rate_a - s.ci_low for s in rows],
            },
            customdata=[[s.games, s.wins_a, s.wins_b, s.ties] for s in rows],
            hovertemplate=(
                "%{x}<br>win rate %{y:.3f}<br>games %{customdata[0]}: "
                "%{customdata[1]}-%{customdata[2]}-%{customdata[3]}<extra></extra>"
            ),
        )
    )
    fig.add_hline(y=0.5, line_dash="dot", line_color="grey")
    fig.update_yaxes(range=[0, 1], title_text="win rate of first policy (ties ½)")
    return _base_layout(fig, f"Win rate per pairing ({_battles(n)})")


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
    return _base_layout(fig, f"Head-to-head score, row vs column ({_battles(n)})")


def ratings_chart(
    ratings_with_intervals: Mapping[str, tuple[float, float, float]],
    n_battles: int,
) -> go.Figure:
    """Ratings as points with interval bars, strongest first.

    Takes `bootstrap_ratings` output ({name: (rating, low, high)}). The battle
    count cannot be recovered from ratings, so `n_battles` is required.
    """
    rows = sorted(ratings_with_intervals.items(), key=lambda kv: (-kv[1][0], kv[0]))
    fig = go.Figure(
        go.Scatter(
            name="rating",
            mode="markers",
            x=[_label(name) for name, _ in rows],
            y=[r for _, (r, _, _) in rows],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [hi - r for _, (r, _, hi) in rows],
                "arrayminus": [r - lo for _, (r, lo, _) in rows],
            },
            hovertemplate="%{x}: %{y:.0f}<extra></extra>",
        )
    )
    fig.update_yaxes(title_text="rating (Elo scale)")
    return _base_layout(fig, f"Ratings with 95% intervals ({_battles(n_battles)})")


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
    return _base_layout(fig, f"Battle length per policy ({_battles(n)})")


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
    return _base_layout(fig, f"Illegal actions per battle ({_battles(n)})")


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
    return _base_layout(fig, f"{_label(policy)}: Glicko-2 rating over time, 95% band ({_battles(n)})")
