"""Tests for wolfeclick.arena.stats: reference Wilson values and pairing maths."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wolfeclick.arena.distributions import beta_ppf, betainc, norm_ppf, t_ppf
from wolfeclick.arena.stats import (
    GameResult,
    PairedSummary,
    pair_scores,
    paired_summary,
    summarize_pairings,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [(60, 100, (0.5020, 0.6906)), (30, 50, (0.4618, 0.7239)), (0, 10, (0.0, 0.2775))],
)
def test_wilson_reference_values(successes: float, n: int, expected: tuple[float, float]) -> None:
    lo, hi = wilson_interval(successes, n)
    assert round(lo, 4) == expected[0]
    assert round(hi, 4) == expected[1]


def test_wilson_empty_and_half_successes() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(2.5, 5)
    assert lo < 0.5 < hi
    assert math.isclose(lo + hi, 1.0)  # symmetric around one half


@given(st.integers(1, 500), st.data())
def test_wilson_contains_estimate(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, 2 * n)) / 2
    lo, hi = wilson_interval(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_game_result_validates_winner() -> None:
    with pytest.raises(ValueError):
        GameResult("a", "b", 0, "c")
    with pytest.raises(ValueError):
        GameResult("a", "a", 0, None)


def test_summarize_pairings_normalizes_order_and_counts_ties_half() -> None:
    games = [
        GameResult("zeta", "alpha", 0, "zeta"),
        GameResult("alpha", "zeta", 0, "alpha"),
        GameResult("zeta", "alpha", 1, None),
        GameResult("alpha", "zeta", 1, "alpha"),
        GameResult("alpha", "mid", 0, "mid"),
    ]
    out = summarize_pairings(games)
    assert [(s.a, s.b) for s in out] == [("alpha", "mid"), ("alpha", "zeta")]
    az = out[1]
    assert (az.games, az.wins_a, az.wins_b, az.ties) == (4, 2, 1, 1)
    assert az.win_rate_a == pytest.approx(2.5 / 4)
    assert (az.ci_low, az.ci_high) == pytest.approx(wilson_interval(2.5, 4))


def test_pair_scores_groups_swapped_seats_and_skips_incomplete() -> None:
    games = [
        GameResult("b", "a", 0, "a"),
        GameResult("a", "b", 0, "a"),  # pair 0: a scores 2
        GameResult("a", "b", 1, None),
        GameResult("b", "a", 1, "b"),  # pair 1: a scores 0.5
        GameResult("a", "b", 2, "a"),  # pair 2: only one game -> skipped
        GameResult("a", "b", 3, "a"),
        GameResult("a", "b", 3, "b"),  # pair 3: seats not swapped -> skipped
    ]
    assert pair_scores(games) == {("a", "b"): [2.0, 0.5]}


def test_paired_summary_counts_and_interval() -> None:
    scores = [0, 0.5, 1, 1, 1.5, 2, 2, 2]
    out = paired_summary(scores)
    assert isinstance(out, PairedSummary)
    assert out.pairs == 8
    assert out.counts == (1, 1, 2, 1, 3)
    xs = [s / 2 for s in scores]
    mean = sum(xs) / 8
    # The documented regulariser: one virtual pair, weight 1/2 at 0 and 1/2 at 1, over n + 1 - 1 = 8.
    var = (sum((x - mean) ** 2 for x in xs) + 0.5 * mean**2 + 0.5 * (1 - mean) ** 2) / 8
    t7 = 2.3646242515927849  # Student's t, 7 degrees of freedom, 0.975 (tables)
    assert out.mean == pytest.approx(mean)
    assert out.sd == pytest.approx(math.sqrt(var))
    assert out.ci_low == pytest.approx(mean - t7 * math.sqrt(var / 8))
    assert out.ci_high == pytest.approx(min(1.0, mean + t7 * math.sqrt(var / 8)))
    assert out.interval_method == "student-t-virtual-pair"


def test_paired_interval_never_collapses_on_identical_pairs() -> None:
    """Issue 10: 4 pairs all 2-0 gave [1.000, 1.000]. Now: about Clopper–Pearson's [0.40, 1] on 4/4 pairs won."""
    four = paired_summary([2.0] * 4)
    clopper_pearson_low = 0.025 ** (1 / 4)  # the 4/4 lower bound: p^4 = 0.025
    assert four.ci_high == 1.0
    assert clopper_pearson_low - 0.02 < four.ci_low < 0.5  # so 4-0 in pairs does not separate
    assert four.ci_low == pytest.approx(1 - 3.182446305284263 * math.sqrt(0.125 / 4))
    three_each_way = paired_summary([1.0] * 6)  # every pair split 1-1: zero sample variance as well
    assert three_each_way.ci_low < 0.5 - 0.05 and three_each_way.ci_high > 0.5 + 0.05


@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]), min_size=2, max_size=60))
def test_paired_interval_has_width_and_holds_the_mean(scores: list[float]) -> None:
    out = paired_summary(scores)
    assert 0.0 <= out.ci_low <= out.mean <= out.ci_high <= 1.0
    assert out.ci_high - out.ci_low > 0.01


def test_paired_summary_edges() -> None:
    assert paired_summary([]) == PairedSummary(0, (0, 0, 0, 0, 0), 0.5, 0.0, 1.0)
    one = paired_summary([2.0])
    assert (one.mean, one.ci_low, one.ci_high) == (1.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        paired_summary([0.7])


# --- the distribution functions behind the intervals (checked against mpmath) --------------------------------


@pytest.mark.parametrize(("a", "b"), [(0.5, 0.5), (2.0, 3.0), (4.0, 1.0), (30.0, 0.5), (0.3, 12.0)])
def test_betainc_matches_mpmath(a: float, b: float) -> None:
    for x in (1e-6, 0.01, 0.2, 0.5, 0.77, 0.999):
        expected = float(mpmath.betainc(a, b, 0, x, regularized=True))
        assert betainc(a, b, x) == pytest.approx(expected, rel=1e-11, abs=1e-14)
        # Inverse: exact in probability (in x it is ill-conditioned where the CDF is flat).
        assert betainc(a, b, beta_ppf(expected, a, b)) == pytest.approx(expected, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize(("df", "expected"), [(1, 12.706204736174704), (2, 4.302652729749464),
                                              (3, 3.182446305284263), (10, 2.2281388519862744),
                                              (100, 1.9839715184496334)])
def test_t_quantiles_match_tables(df: int, expected: float) -> None:
    assert t_ppf(0.975, df) == pytest.approx(expected, rel=1e-10)
    assert t_ppf(0.025, df) == pytest.approx(-expected, rel=1e-10)
    assert norm_ppf(0.975) == pytest.approx(1.959963984540054, rel=1e-12)
