"""Verdicts per pairing and what summary.json / the CLI table say about them (issue 10). Pure: rows are built."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolfeclick.arena.schedule import TournamentConfig, build_schedule
from wolfeclick.arena.standings import format_table, summary_from_rows
from wolfeclick.arena.stats import paired_summary
from wolfeclick.arena.verdicts import (
    MAX_MORE_PAIRS,
    more_pairs_needed,
    pairing_verdict,
    pairs_for_power,
    plug_in_probs,
    verdict_rows,
)


def _rows(config: TournamentConfig, winner: dict[int, str | None]) -> list[dict[str, Any]]:
    """One row per scheduled battle whose pair number is in ``winner``: that spec wins (None: a tie)."""
    rows = []
    for b in build_schedule(config):
        if b.pair not in winner:
            continue
        w = winner[b.pair]
        side = None if w is None else "p1" if b.p1 == w else "p2"
        rows.append({"tournament": config.id, "index": b.index, "pairing": b.pairing, "pair": b.pair,
                     "game": b.game, "seed": b.seed, "p1": b.p1, "p2": b.p2, "winner": w, "winner_side": side,
                     "reason": "win" if w else "tie", "turns": 20, "rewards": {}, "decisions": {"p1": 9, "p2": 9},
                     "illegal": {"p1": 0, "p2": 0}, "recording": b.battle_id, "error": None})
    return rows


EIGHT_NIL = TournamentConfig(players=("random", "heuristic"), pairs=4, format="gen9randombattle", seed=2718)


def test_eight_nil_is_open_ended_and_not_yet_a_verdict() -> None:
    """Issue 10's example: `bench --players random,heuristic --pairs 4` with heuristic winning all 8."""
    summary = summary_from_rows(_rows(EIGHT_NIL, {k: "heuristic" for k in range(4)}), EIGHT_NIL)
    heuristic = next(row for row in summary.table if row.policy == "heuristic")
    assert heuristic.rating == pytest.approx(1547.3, abs=0.1)  # the point estimate is unchanged
    assert heuristic.rating_open == "above" and heuristic.rating_method == "profile-likelihood"
    assert heuristic.rating_high - heuristic.rating_low > 100
    (pairing,) = summary.pairings
    assert pairing.pairs.ci_high - pairing.pairs.ci_low > 0.5  # was [1.000, 1.000]
    assert pairing.verdict.kind == "not_separable" and pairing.verdict.favoured == "heuristic"
    table = format_table(summary)
    assert "1547 [1350, open]" in table and "1000 [open, 1197]" in table
    # Issue 29: "about 1 more pair" came from a normal power calculation that ignored the t quantile and the
    # virtual pair; the estimate now is the power of the interval itself, at the outcomes seen plus that pair.
    more = pairing.verdict.more_pairs
    assert more is not None and more >= 1 and f"not separable yet — about {more} more pair" in table
    data = summary.to_dict()
    row = next(r for r in data["table"] if r["policy"] == "heuristic")
    assert row["rating_high"] is None and row["rating_interval"]["open"] == "above"
    assert data["pairings"][0]["elo_interval"]["high"] is None  # an Elo gap with no upper bound
    assert data["pairings"][0]["elo_interval"]["low"] < 0  # …nor yet a lower one above 0


def test_three_nil_is_not_significant() -> None:
    three = paired_summary([2.0] * 3)
    assert three.ci_low < 0.5 and pairing_verdict("a", "b", three).kind == "not_separable"
    games_only = paired_summary([2.0])  # three games won, one complete pair among them
    assert pairing_verdict("a", "b", games_only).kind == "not_separable"


def test_stronger_when_the_pair_interval_leaves_out_a_half() -> None:
    five = paired_summary([2.0] * 5)
    verdict = pairing_verdict("heuristic", "random", five)
    assert five.ci_low > 0.5
    assert verdict.to_dict() == {"kind": "stronger", "text": "heuristic is stronger (95%)", "more_pairs": None,
                                 "favoured": "heuristic"}
    losing = pairing_verdict("heuristic", "random", paired_summary([0.0, 0.5] * 10))
    assert (losing.kind, losing.favoured, losing.text) == ("stronger", "random", "random is stronger (95%)")


def test_no_detectable_difference_and_more_pairs() -> None:
    # Issue 29: 18 pairs with mean ½ (an interval of about ±70 Elo) used to read "no detectable difference";
    # that needs the equivalence test now, so it is "not separable yet".
    even = pairing_verdict("a", "b", paired_summary([1.0, 0.5, 1.5] * 6))
    assert even.kind == "not_separable" and even.favoured is None and even.more_pairs is None
    # A small edge: 0.55 per game over 20 pairs. The estimate is the power of the paired interval itself.
    scores = [1.0, 1.5, 0.5, 1.0, 2.0, 0.0, 1.5, 1.0, 1.0, 1.5] * 2
    paired = paired_summary(scores)
    verdict = pairing_verdict("a", "b", paired)
    need, power = pairs_for_power(plug_in_probs(paired), 20)
    assert verdict.kind == "not_separable" and verdict.favoured == "a"
    assert verdict.more_pairs == more_pairs_needed(paired) == need - 20 and power >= 0.8
    assert verdict.text == f"not separable yet — about {need - 20} more pairs"
    tiny = paired_summary([1.0] * 399 + [1.5])  # an edge of 1/1600 per game: far beyond any arena
    assert more_pairs_needed(tiny) is None
    tiny_verdict = pairing_verdict("a", "b", tiny)  # 400 pairs that do place the gap within ±50 Elo
    assert tiny_verdict.kind == "no_difference" and "±50 Elo" in tiny_verdict.text
    spread = paired_summary([0.0, 2.0] * 40 + [1.5])  # a small edge on 81 wildly split pairs: neither
    assert more_pairs_needed(spread) is None
    assert f"over {MAX_MORE_PAIRS}" in pairing_verdict("a", "b", spread).text
    assert pairing_verdict("a", "b", paired_summary([])).kind == "not_separable"


@settings(deadline=None)  # the first verdict computes t quantiles for the further-pairs estimate (issue 29)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]), max_size=40))
def test_an_interval_covering_a_half_is_never_a_win(scores: list[float]) -> None:
    paired = paired_summary(scores)
    verdict = pairing_verdict("a", "b", paired)
    assert (verdict.kind == "stronger") == (paired.ci_low > 0.5 or paired.ci_high < 0.5)
    if verdict.kind == "stronger":
        assert verdict.favoured == ("a" if paired.mean > 0.5 else "b")


def _intervals(data: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    if isinstance(data, dict):
        found = [(path, data)] if {"low", "high"} <= data.keys() else []
        return found + [x for k, v in data.items() for x in _intervals(v, f"{path}.{k}")]
    if isinstance(data, list):
        return [x for i, v in enumerate(data) for x in _intervals(v, f"{path}[{i}]")]
    return []


def test_summary_json_names_every_interval_method_and_verdict() -> None:
    config = TournamentConfig(players=("random", "maxdamage", "heuristic"), pairs=6, format="gen9randombattle",
                              seed=1)
    winners = {k: None for k in range(6)}
    rows = [r for r in _rows(config, winners)]
    for r in rows:  # a mixed record: heuristic wins game 0 of its pairs, the first-seated side elsewhere
        r["winner_side"] = "p1" if r["game"] == 0 else ("p2" if r["pair"] % 3 == 0 else None)
        r["winner"] = r.get(r["winner_side"]) if r["winner_side"] else None
        r["reason"] = "win" if r["winner"] else "tie"
    summary = summary_from_rows(rows, config)
    data = json.loads(summary.to_json())
    found = _intervals(data)
    assert len(found) == 3 * 2 + 3 * 3  # per policy: win rate, rating; per pairing: games, pairs, Elo
    for path, interval in found:
        assert interval["interval_method"], path
        assert interval["level"] == 0.95
    for p in data["pairings"]:
        assert set(p["verdict"]) == {"kind", "text", "more_pairs", "favoured"}
        assert p["verdict"]["kind"] in ("stronger", "not_separable", "no_difference")
    rows_out = verdict_rows(data)
    assert verdict_rows(summary) == rows_out
    assert [r["pairing"] for r in rows_out] == [f"{p['a']} vs {p['b']}" for p in data["pairings"]]
    assert set(rows_out[0]) == {"pairing", "record", "pairs", "score", "elo", "verdict", "kind", "more_pairs",
                                "favoured"}
    # Byte-identical for the same rows, in any order.
    assert summary_from_rows(list(reversed(rows)), config).to_json() == summary.to_json()
