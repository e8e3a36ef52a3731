"""Tests for wolfeclick.arena.sprt."""

from __future__ import annotations

import math

import pytest

from wolfeclick.arena.sprt import elo_to_score, sprt, sprt_bounds


def test_bounds() -> None:
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944, abs=1e-3)
    assert upper == pytest.approx(2.944, abs=1e-3)
    assert lower == pytest.approx(math.log(0.05 / 0.95))


def test_elo_to_score() -> None:
    assert elo_to_score(0) == 0.5
    assert elo_to_score(400) == pytest.approx(10 / 11)
    assert elo_to_score(-50) == pytest.approx(1 - elo_to_score(50))


def test_long_run_of_twos_accepts_h1() -> None:
    res = sprt([2.0] * 200, elo0=0, elo1=50)
    assert res.decision == "H1"
    assert res.llr >= res.upper
    assert res.pairs < 200  # stopped early, at the first crossing
    assert "H1" in res.message and "stronger" in res.message


def test_zeros_and_ones_accept_h0() -> None:
    res = sprt([0.0, 1.0] * 200, elo0=0, elo1=50)
    assert res.decision == "H0"
    assert res.llr <= res.lower
    assert "H0" in res.message


def test_even_scores_around_half_accept_h0() -> None:
    res = sprt([0.5, 1.0, 1.5, 1.0, 2.0, 0.0] * 300, elo0=0, elo1=50)
    assert res.decision == "H0"


def test_few_pairs_give_no_decision() -> None:
    res = sprt([2.0, 1.0], elo0=0, elo1=50)
    assert res.decision is None
    assert res.lower < res.llr < res.upper
    assert "keep playing" in res.message
    empty = sprt([], elo0=0, elo1=50)
    assert empty.decision is None and empty.llr == 0.0 and empty.pairs == 0


def test_llr_matches_normal_formula_on_mixed_data() -> None:
    scores = [1.0, 1.5, 0.5, 1.0, 2.0, 1.0, 1.5, 0.5]
    res = sprt(scores, elo0=0, elo1=50)
    # Recompute with the documented prior pair (half 0, half 2).
    xs = [s / 2 for s in scores]
    total = len(xs) + 1
    mean = (sum(xs) + 0.5) / total
    var = (sum(x * x for x in xs) + 0.5) / total - mean**2
    s0, s1 = elo_to_score(0), elo_to_score(50)
    expected = len(xs) * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert res.decision is None
    assert res.llr == pytest.approx(expected)


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        sprt([1.0], elo0=50, elo1=0)
    with pytest.raises(ValueError):
        sprt([0.3], elo0=0, elo1=50)
