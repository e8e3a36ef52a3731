"""Tests for wolfeclick.arena.sprt."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wolfeclick.arena.sprt import elo_to_score, pentanomial_llr, sprt, sprt_bounds


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


def _reference_llr(counts: list[float], elo0: float, elo1: float) -> float:
    """The pentanomial LLR written out plainly, scalar by scalar: regularise empty cells to 1e-3, then for each
    hypothesis solve the secular equation by plain bisection and compare the two constrained fits."""
    cells = [0.0, 0.25, 0.5, 0.75, 1.0]
    reg = [c if c > 0 else 1e-3 for c in counts]
    total = sum(reg)
    phat = [c / total for c in reg]

    def fit(score: float) -> list[float]:
        d = [a - score for a in cells]
        lo, hi = -1 / max(d), -1 / min(d)
        for _ in range(300):
            mid = (lo + hi) / 2
            if sum(p * x / (1 + mid * x) for p, x in zip(phat, d)) > 0:
                lo = mid
            else:
                hi = mid
        return [p / (1 + mid * x) for p, x in zip(phat, d)]

    p0, p1 = fit(elo_to_score(elo0)), fit(elo_to_score(elo1))
    return total * sum(p * math.log(b / a) for p, a, b in zip(phat, p0, p1))


@pytest.mark.parametrize("counts", [[1, 3, 9, 4, 2], [0, 0, 0, 0, 5], [7, 0, 1, 0, 0], [0, 2, 30, 2, 0],
                                    [12, 40, 95, 51, 14]])
def test_llr_is_the_exact_pentanomial_one(counts: list[float]) -> None:
    for elo0, elo1 in [(0, 100), (-20, 70), (0, 5)]:
        got = float(pentanomial_llr(np.array(counts, dtype=float), elo0, elo1))
        assert got == pytest.approx(_reference_llr(counts, elo0, elo1), rel=1e-9, abs=1e-9)
        # Seen from B: cells reversed and the Elo differences negated give the same likelihood ratio.
        assert float(pentanomial_llr(np.array(counts[::-1], dtype=float), -elo0, -elo1)) == pytest.approx(got)


def test_all_two_nil_needs_twelve_pairs_as_in_fishtest() -> None:
    """Issue 10: the normal approximation accepted H1 after 5 pairs of 2-0 (LLR 3.18); the exact LLR is 1.24."""
    five = sprt([2.0] * 5, 0, 100)
    assert five.llr == pytest.approx(1.2352, abs=1e-4) and five.decision is None
    assert sprt([2.0] * 11, 0, 100).decision is None
    twelve = sprt([2.0] * 30, 0, 100)
    assert twelve.decision == "H1" and twelve.pairs == 12


def _pentanomial_probs(elo: float, draw: float) -> np.ndarray:
    """Pair-score probabilities (0, ½, 1, 1½, 2 for A) from two independent games of the logistic Elo model,
    each a draw with probability ``draw`` and otherwise won with the rest of the expected score."""
    s = elo_to_score(elo)
    game = np.array([1 - s - draw / 2, draw, s - draw / 2])  # per-game score 0, ½, 1
    return np.convolve(game, game)


def _simulate(elo: float, elo0: float, elo1: float, draw: float, runs: int, max_pairs: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Decisions (+1 H1, -1 H0, 0 none) and pairs used, for ``runs`` sequential tests at true strength ``elo``."""
    cells = rng.choice(5, size=(runs, max_pairs), p=_pentanomial_probs(elo, draw))
    lower, upper = sprt_bounds(0.05, 0.05)
    counts = np.zeros((runs, 5))
    active = np.arange(runs)
    decision = np.zeros(runs, dtype=int)
    used = np.full(runs, max_pairs)
    for t in range(max_pairs):
        counts[active, cells[active, t]] += 1
        llr = pentanomial_llr(counts[active], elo0, elo1)
        up, down = llr >= upper, llr <= lower
        decision[active[up]], decision[active[down]] = 1, -1
        used[active[up | down]] = t + 1
        active = active[~(up | down)]
        if not active.size:
            break
    return decision, used


@pytest.mark.parametrize(("elo0", "elo1", "draw"), [(0, 100, 0.0), (0, 150, 0.3), (-50, 50, 0.1)])
def test_error_rates_within_nominal_by_simulation(elo0: float, elo1: float, draw: float) -> None:
    """Operating characteristics of the live test, alpha = beta = 0.05, 4000 simulated runs per hypothesis.

    At elo0 the share of runs accepting H1 (false H1), at elo1 the share accepting H0 (false H0), must stay
    within the nominal 0.05 plus three Monte-Carlo standard errors. Seeded, so the test is deterministic.
    """
    rng = np.random.default_rng([elo0 + 1000, elo1 + 1000, int(draw * 10)])
    runs, nominal = 4000, 0.05
    tolerance = nominal + 3 * math.sqrt(nominal * (1 - nominal) / runs)
    at_h0, used0 = _simulate(elo0, elo0, elo1, draw, runs, 600, rng)
    at_h1, used1 = _simulate(elo1, elo0, elo1, draw, runs, 600, rng)
    assert np.mean(at_h0 == 0) < 0.005 and np.mean(at_h1 == 0) < 0.005  # (nearly) every run decided
    assert np.mean(at_h0 == 1) <= tolerance
    assert np.mean(at_h1 == -1) <= tolerance
    # It does decide, not just stall: the right answer most of the time, in a few dozen pairs.
    assert np.mean(at_h0 == -1) > 0.9 and np.mean(at_h1 == 1) > 0.9
    assert used0.mean() < 60 and used1.mean() < 60


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        sprt([1.0], elo0=50, elo1=0)
    with pytest.raises(ValueError):
        sprt([0.3], elo0=0, elo1=50)
