"""Sequential probability ratio test on pair scores.

Answers "is A at least `elo1` stronger than B, or at most `elo0`?" while
games are still being played, stopping as soon as the evidence is strong
enough, with error rates alpha (false H1) and beta (false H0).

Method: the generalised SPRT with a normal approximation on pentanomial pair
scores, as engine-testing frameworks such as Fishtest use. Each pair (same
seed, seats swapped) gives A a per-game score x = pair score / 2. Under the
logistic (Elo) model, strength difference e means an expected per-game score
s(e) = 1 / (1 + 10^(-e / 400)). Treating the sample mean of N pair scores as
normal with the observed variance v, the log-likelihood ratio of s1 = s(elo1)
against s0 = s(elo0) is

    LLR = N * (s1 - s0) * (2 * mean - s0 - s1) / (2 * v).

Variance is measured across pairs, so the luck a pair's two games share does
not count as noise, which makes the test stop sooner than a per-game one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["SprtResult", "elo_to_score", "sprt_bounds", "sprt", "PRIOR_PAIR"]

#: Regulariser: one virtual pair, half of it scored 0 and half scored 2.
#: Without it a short all-wins run has zero variance and an infinite LLR;
#: with it, it takes several straight wins before the test can stop.
PRIOR_PAIR: tuple[tuple[float, float], ...] = ((0.0, 0.5), (2.0, 0.5))


@dataclass(frozen=True)
class SprtResult:
    """Outcome of the test after `pairs` pairs.

    `llr` is compared with `lower` = log(beta / (1 - alpha)) and `upper` =
    log((1 - beta) / alpha). `decision` is 'H1' (A is at least elo1 stronger),
    'H0' (A is at most elo0 stronger) or None (keep playing); `message` says
    the same in words. `pairs` is how many pairs were used: the test stops at
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
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's stopping bounds (lower, upper) for the LLR."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must lie in (0, 1)")
    return (math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))


def _llr_path(scores: list[float], elo0: float, elo1: float) -> np.ndarray:
    """LLR after each prefix of `scores` (entry k: after k + 1 pairs)."""
    x = np.asarray(scores, dtype=float) / 2.0
    prior_w = sum(w for _, w in PRIOR_PAIR)
    prior_s = sum(w * s / 2.0 for s, w in PRIOR_PAIR)
    prior_s2 = sum(w * (s / 2.0) ** 2 for s, w in PRIOR_PAIR)
    n = np.arange(1, len(x) + 1, dtype=float)
    total = n + prior_w
    mean = (np.cumsum(x) + prior_s) / total
    var = (np.cumsum(x * x) + prior_s2) / total - mean * mean
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)


def sprt(
    scores: list[float],
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> SprtResult:
    """Run the SPRT over pair scores for A (each 0, 0.5, 1, 1.5 or 2), in order.

    Tests H1 "A is elo1 stronger than B" against H0 "A is elo0 stronger"
    (elo0 < elo1; elo0 = 0, elo1 = 50 is a typical choice). Pairs are taken
    in the order given and the test stops at the first crossing, as a live
    SPRT would; with no crossing the LLR over all pairs is reported.
    """
    if not elo0 < elo1:
        raise ValueError(f"need elo0 < elo1, got {elo0} and {elo1}")
    for s in scores:
        if s not in (0.0, 0.5, 1.0, 1.5, 2.0):
            raise ValueError(f"pair score must be 0, 0.5, 1, 1.5 or 2, got {s}")
    lower, upper = sprt_bounds(alpha, beta)
    if not scores:
        return SprtResult(
            0.0, lower, upper, None, "No pairs played yet: keep playing.", 0
        )
    path = _llr_path(scores, elo0, elo1)
    crossed = np.flatnonzero((path >= upper) | (path <= lower))
    stop = int(crossed[0]) if crossed.size else len(path) - 1
    llr = float(path[stop])
    pairs = stop + 1
    hyp = f"A is at least {elo1:g} Elo stronger than B"
    if llr >= upper:
        decision: Literal["H1", "H0"] | None = "H1"
        message = (
            f"Stopped after {pairs} pairs: accept H1 — {hyp} "
            f"(LLR {llr:.2f} reached the upper bound {upper:.2f})."
        )
    elif llr <= lower:
        decision = "H0"
        message = (
            f"Stopped after {pairs} pairs: accept H0 — A is not shown to be "
            f"{elo1:g} Elo stronger; its edge is at most about {elo0:g} Elo "
            f"(LLR {llr:.2f} reached the lower bound {lower:.2f})."
        )
    else:
        decision = None
        message = (
            f"No decision after {pairs} pairs: LLR {llr:.2f} is between "
            f"{lower:.2f} and {upper:.2f}; keep playing."
        )
    return SprtResult(llr, lower, upper, decision, message, pairs)
