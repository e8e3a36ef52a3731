"""Sequential probability ratio test on pair scores: the exact pentanomial LLR of the logistic Elo model.

Answers "is A at least `elo1` stronger than B, or at most `elo0`?" while games are still being played, stopping
as soon as the evidence is strong enough, with error rates alpha (false H1) and beta (false H0).

Method: the generalised SPRT on pentanomial pair counts, as Fishtest's live tests compute it (Michel Van den
Bergh, "Comments on normalized Elo" / "A pentanomial model for engine testing"). Each pair (same seed, seats
swapped) gives A a per-game score a_k in (0, ¼, ½, ¾, 1); after N pairs the empirical distribution over those
five cells is p̂. Under the logistic Elo model a strength difference e means an expected per-game score
s(e) = 1 / (1 + 10^(-e / 400)). For each hypothesis the distribution of largest likelihood whose mean is s is

    p_k = p̂_k / (1 + λ (a_k - s)),   λ the root of   sum_k p̂_k (a_k - s) / (1 + λ (a_k - s)) = 0

(the "secular equation"; its left side falls monotonically in λ on the interval where every denominator is
positive, so the root is unique and bisection finds it). The log-likelihood ratio is

    LLR = N * sum_k p̂_k * log(p1_k / p0_k),

with p0, p1 the maximising distributions for s(elo0) and s(elo1). Empty cells are set to 1e-3 of a pair first
(Fishtest's regularisation), so a run of identical pairs has a finite LLR that grows by a fixed step per pair:
with elo0 = 0 and elo1 = 100, a pair won 2-0 adds 0.247, and it takes 12 such pairs to pass Wald's 2.94.

An earlier version used the normal approximation LLR ≈ N (s1 - s0)(2 m - s0 - s1) / (2 v) with one virtual
pair; Fishtest uses that only in its analytics. On all-2-0 runs it stopped after 5 pairs, and its false-H1 rate
was above the nominal alpha.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "SPRT_METHOD",
    "CELL_SCORES",
    "EMPTY_CELL",
    "SprtResult",
    "elo_to_score",
    "sprt_bounds",
    "pair_counts",
    "pentanomial_llr",
    "sprt",
]

#: How `summary.json` names the test.
SPRT_METHOD = "gsprt-pentanomial-logistic"

#: Per-game score of A in each pentanomial cell (pair score 0, ½, 1, 1½, 2 divided by two).
CELL_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])

#: What an empty cell counts as (in pairs) before the LLR is taken: Fishtest's regularisation.
EMPTY_CELL = 1e-3


@dataclass(frozen=True)
class SprtResult:
    """Outcome of the test after `pairs` pairs.

    `llr` is compared with `lower` = log(beta / (1 - alpha)) and `upper` =
    log((1 - beta) / alpha). `decision` is 'H1', 'H0' or None (keep playing);
    `message` says what a decision guarantees, and no more: accepting H1 is
    evidence the edge is above elo0 (wrongly so at most about alpha of the
    time when it is elo0 or less), not that it is elo1; accepting H0 is
    evidence it is below elo1 (wrongly so at most about beta of the time when
    it is elo1 or more), not that it is at most elo0. Between elo0 and elo1
    either outcome can happen, in any share of runs. `pairs` is how many pairs were used: the test stops at
    the first pair where the LLR leaves (lower, upper), later pairs are ignored.
    """

    llr: float
    lower: float
    upper: float
    decision: Literal["H1", "H0"] | None
    message: str
    pairs: int


def elo_to_score(elo: float) -> float:
    """Expected per-game score for an Elo advantage (logistic model)."""
    return float(1.0 / (1.0 + 10.0 ** (-elo / 400.0)))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's stopping bounds (lower, upper) for the LLR."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must lie in (0, 1)")
    return (math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))


def pair_counts(scores: list[float]) -> np.ndarray:
    """Cumulative pentanomial counts: row k holds the five cell counts after k + 1 pairs."""
    cells = np.zeros((len(scores), 5))
    for k, s in enumerate(scores):
        if s not in (0.0, 0.5, 1.0, 1.5, 2.0):
            raise ValueError(f"pair score must be 0, 0.5, 1, 1.5 or 2, got {s}")
        cells[k, int(2 * s)] = 1.0
    return np.cumsum(cells, axis=0)


def _constrained_mle(p: np.ndarray, score: float) -> np.ndarray:
    """The distribution over the five cells nearest ``p`` (max likelihood) with mean ``score``.

    ``p`` has shape (..., 5), rows summing to 1, every cell positive. The secular equation f(λ) = 0 is the
    stationarity condition of the convex dual φ(λ) = -sum_k p_k log(1 + λ (a_k - score)), defined where every
    1 + λ (a_k - score) is positive. Newton steps on φ from λ = 0, each cut to at most 90 % of the way to the
    edge of that domain (as interior-point methods do), stay inside it and converge in 10-25 steps even when
    the root hugs the edge (a run of identical pairs).
    """
    d = CELL_SCORES - score  # both signs occur, since 0 < score < 1
    lo, hi = -1.0 / d.max(), -1.0 / d.min()
    lam = np.zeros(p.shape[:-1])
    for _ in range(200):
        den = 1.0 + lam[..., None] * d
        f = np.sum(p * d / den, axis=-1)
        curvature = np.sum(p * d * d / (den * den), axis=-1)
        new = np.clip(lam + f / curvature, lam + 0.9 * (lo - lam), lam + 0.9 * (hi - lam))
        done = np.abs(new - lam) <= 1e-14 * (1.0 + np.abs(lam))
        lam = new
        if bool(np.all(done)):
            break
    return p / (1.0 + lam[..., None] * d)


def pentanomial_llr(counts: np.ndarray, elo0: float, elo1: float) -> np.ndarray:
    """Exact pentanomial LLR of elo1 against elo0 for pair counts of shape (..., 5) (see the module docstring).

    Vectorised over the leading axes, so a whole run (cumulative counts) or many simulated runs are one call.
    """
    counts = np.asarray(counts, dtype=float)
    if counts.shape[-1:] != (5,):
        raise ValueError("pentanomial counts need 5 cells")
    reg = np.where(counts > 0, counts, EMPTY_CELL)
    n = reg.sum(axis=-1)
    p = reg / n[..., None]
    p0 = _constrained_mle(p, elo_to_score(elo0))
    p1 = _constrained_mle(p, elo_to_score(elo1))
    llr: np.ndarray = n * np.sum(p * np.log(p1 / p0), axis=-1)
    return llr


def sprt(
    scores: list[float],
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> SprtResult:
    """Run the SPRT over pair scores for A (each 0, 0.5, 1, 1.5 or 2), in order.

    Tests H1 "A is elo1 stronger than B" against H0 "A is elo0 stronger"
    (elo0 < elo1; elo0 = 0, elo1 = 50 is a typical choice); see `SprtResult`
    for what a decision does and does not show. Pairs are taken
    in the order given and the test stops at the first crossing, as a live
    SPRT would; with no crossing the LLR over all pairs is reported.
    """
    if not elo0 < elo1:
        raise ValueError(f"need elo0 < elo1, got {elo0} and {elo1}")
    counts = pair_counts(scores)
    lower, upper = sprt_bounds(alpha, beta)
    if not scores:
        return SprtResult(
            0.0, lower, upper, None, "No pairs played yet: keep playing.", 0
        )
    path = pentanomial_llr(counts, elo0, elo1)
    crossed = np.flatnonzero((path >= upper) | (path <= lower))
    stop = int(crossed[0]) if crossed.size else len(path) - 1
    llr = float(path[stop])
    pairs = stop + 1
    if llr >= upper:
        decision: Literal["H1", "H0"] | None = "H1"
        message = (
            f"Stopped after {pairs} pairs: accept H1 — A is stronger than B by more than {elo0:g} Elo. "
            f"What that guarantees: were the edge {elo0:g} Elo or less, a test like this would end this way in "
            f"at most about {alpha:.0%} of runs. It does not show an edge of {elo1:g} Elo "
            f"(LLR {llr:.2f} reached the upper bound {upper:.2f})."
        )
    elif llr <= lower:
        decision = "H0"
        message = (
            f"Stopped after {pairs} pairs: accept H0 — A is not {elo1:g} Elo stronger than B: its edge is below {elo1:g}. "
            f"What that guarantees: were the edge {elo1:g} Elo or more, a test like this would end this way in "
            f"at most about {beta:.0%} of runs. It does not show the edge is at most {elo0:g} Elo "
            f"(LLR {llr:.2f} reached the lower bound {lower:.2f})."
        )
    else:
        decision = None
        message = (
            f"No decision after {pairs} pairs: LLR {llr:.2f} is between "
            f"{lower:.2f} and {upper:.2f}; keep playing."
        )
    return SprtResult(llr, lower, upper, decision, message, pairs)
