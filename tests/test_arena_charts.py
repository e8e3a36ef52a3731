"""Tests for wolfeclick.arena.charts: trace types, data, titles, determinism."""

from __future__ import annotations

import pytest

from wolfeclick.arena.charts import (
    battle_length_chart,
    illegal_actions_chart,
    ratings_chart,
    win_heatmap,
    win_rate_chart,
)
from wolfeclick.arena.stats import GameResult, summarize_pairings


def _games() -> list[GameResult]:
    games = []
    for k in range(10):
        games.append(GameResult("random", "greedy", k, "greedy" if k < 8 else "random"))
        games.append(GameResult("llm", "greedy", k, None if k < 2 else "llm"))
    games.append(GameResult("llm", "random", 0, "llm"))
    return games  # 21 battles


def test_win_rate_chart() -> None:
    summaries = summarize_pairings(_games())
    fig = win_rate_chart(summaries)
    assert "21 battles" in fig.layout.title.text
    (bar,) = fig.data
    assert bar.type == "bar"
    assert list(bar.x) == ["greedy vs llm", "greedy vs random", "llm vs random"]
    assert list(bar.y) == pytest.approx([0.1, 0.8, 1.0])
    s = summaries[1]
    assert bar.error_y.array[1] == pytest.approx(s.ci_high - s.win_rate_a)
    assert bar.error_y.arrayminus[1] == pytest.approx(s.win_rate_a - s.ci_low)
    assert "7 battles" in win_rate_chart(summaries, n_battles=7).layout.title.text


def test_the_win_rate_bars_show_the_paired_interval_the_verdict_uses() -> None:
    """Issue 47 (8): per-battle Wilson bars sat clear of ½ while the verdict said "not separable yet". With the
    pairs (same teams, seats swapped) each bar is the paired score and interval the verdict reads."""
    from wolfeclick.arena.stats import paired_summary
    from wolfeclick.arena.verdicts import pairing_verdict

    # 40 battles in 20 pairs, A wins 28 (Wilson clear of ½) as 14 pairs won twice and 6 lost twice: the team deal
    # decides much of each pair, so the paired interval (20 observations) still holds ½
    games = [GameResult("a", "b", k, "a" if k < 28 else "b") for k in range(40)]
    (games_summary,) = summarize_pairings(games)
    assert games_summary.ci_low > 0.5
    pair_scores = [2.0] * 14 + [0.0] * 6  # A's score in each pair (two battles)
    paired = paired_summary(pair_scores)
    assert paired.ci_low < 0.5 and "stronger" not in pairing_verdict("a", "b", paired).text
    fig = win_rate_chart([games_summary], paired={("a", "b"): paired})
    (bar,) = fig.data
    assert bar.y[0] == pytest.approx(paired.mean)
    assert bar.y[0] - bar.error_y.arrayminus[0] == pytest.approx(paired.ci_low) and paired.ci_low < 0.5
    assert bar.y[0] + bar.error_y.array[0] == pytest.approx(paired.ci_high)
    assert "paired" in fig.layout.yaxis.title.text


def test_win_heatmap() -> None:
    summaries = summarize_pairings(_games())
    players = ["llm", "greedy", "random"]
    fig = win_heatmap(summaries, players)
    (hm,) = fig.data
    assert hm.type == "heatmap"
    assert hm.zmid == 0.5
    assert list(hm.x) == players and list(hm.y) == players
    z = [list(row) for row in hm.z]
    assert z[0][1] == pytest.approx(0.9)  # llm vs greedy
    assert z[1][0] == pytest.approx(0.1)
    assert z[1][2] == pytest.approx(0.8)  # greedy vs random
    assert z[0][0] is None
    assert hm.text[1][2] == "0.80"
    assert hm.texttemplate == "%{text}"
    assert "21 battles" in fig.layout.title.text


def test_ratings_chart_sorted_with_intervals() -> None:
    ratings = {"random": (1000.0, 1000.0, 1000.0), "llm": (1400.0, 1300.0, 1550.0), "greedy": (1200.0, 1100.0, 1290.0)}
    fig = ratings_chart(ratings, n_battles=21)
    (pts,) = fig.data
    assert pts.type == "scatter" and pts.mode == "markers"
    assert list(pts.x) == ["llm", "greedy", "random"]
    assert list(pts.y) == [1400.0, 1200.0, 1000.0]
    assert list(pts.error_y.array) == [150.0, 90.0, 0.0]
    assert list(pts.error_y.arrayminus) == [100.0, 100.0, 0.0]
    assert "21 battles" in fig.layout.title.text


def test_battle_length_and_illegal_charts() -> None:
    lengths = {"random": [20, 25, 31], "llm": [18, 40]}
    fig = battle_length_chart(lengths)
    assert [t.type for t in fig.data] == ["box", "box"]
    assert [t.name for t in fig.data] == ["llm", "random"]
    assert "5 battles" in fig.layout.title.text
    assert "3 battles" in battle_length_chart(lengths, n_battles=3).layout.title.text

    illegal = {"llm": [0, 0, 1, 3], "random": [0]}
    fig = illegal_actions_chart(illegal, n_battles=1)
    assert [t.type for t in fig.data] == ["histogram", "histogram"]
    assert list(fig.data[0].x) == [0, 0, 1, 3]
    assert "1 battle<" in fig.layout.title.text


def test_charts_are_deterministic() -> None:
    summaries = summarize_pairings(_games())
    builders = [
        lambda: win_rate_chart(summaries),
        lambda: win_heatmap(summaries, None),
        lambda: ratings_chart({"a": (1.0, 0.0, 2.0)}, n_battles=4),
        lambda: battle_length_chart({"a": [1, 2]}),
        lambda: illegal_actions_chart({"a": [0, 1]}),
    ]
    for build in builders:
        assert build().to_json() == build().to_json()


def test_charts_handle_empty_input() -> None:
    assert "0 battles" in win_rate_chart([]).layout.title.text
    assert "0 battles" in win_heatmap([], None).layout.title.text
    assert "0 battles" in battle_length_chart({}).layout.title.text
