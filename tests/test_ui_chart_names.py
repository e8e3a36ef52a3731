"""Player names are text in every chart, never Plotly markup (an <a href> became a link; issue 8, item 11)."""

from __future__ import annotations

import json

from devkit.samples import sample_data
from wolfeclick.arena.charts import (
    battle_length_chart,
    illegal_actions_chart,
    ratings_chart,
    win_heatmap,
    win_rate_chart,
)
from wolfeclick.arena.stats import GameResult, summarize_pairings
from wolfeclick.battle.schema import Recording
from wolfeclick.ui.battle_panels import BattleView
from wolfeclick.ui.viewer_payload import charts_svg

EVIL = '<a href="https://evil.example/">click</a>'


def _texts(fig) -> list[str]:
    data = json.loads(fig.to_json())
    out = []
    for trace in data["data"]:
        out.append(str(trace.get("name", "")))
        out.extend(str(v) for v in trace.get("x", []) or [])
        out.extend(str(v) for v in trace.get("y", []) or [] if isinstance(v, str))
    return out


def test_arena_charts_escape_names():
    games = [GameResult(EVIL, "random", k, EVIL if k % 2 else "random") for k in range(6)]
    summaries = summarize_pairings(games)
    figures = [win_rate_chart(summaries), win_heatmap(summaries),
               ratings_chart({EVIL: (1010.0, 990.0, 1030.0), "random": (990.0, 970.0, 1010.0)}, 6),
               battle_length_chart({EVIL: [10, 12], "random": [11]}), illegal_actions_chart({EVIL: [0, 1]})]
    for fig in figures:
        texts = _texts(fig)
        assert not any("<a " in t for t in texts), texts
        assert any("&lt;a href" in t for t in texts)  # Plotly shows the entity as the character: the name as text


def test_battle_view_charts_escape_names():
    data = sample_data()
    data["players"]["p1"]["name"] = EVIL
    charts, _ = charts_svg(BattleView.of(Recording.model_validate(data)))
    assert "<a href" not in charts and "&lt;a href" in charts
