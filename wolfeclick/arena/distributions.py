"""The few distribution functions the arena's intervals need, written out so scipy is not a dependency.

Pure functions of floats: the regularised incomplete beta function (Lentz's continued fraction), its inverse by
bisection, Student's t quantile (through the beta function) and the normal quantile (from the standard library).
Accuracy is far beyond what a 95 % interval printed to three decimals needs (about 1e-12 in the tests).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

__all__ = ["norm_ppf", "norm_cdf", "betainc", "beta_ppf", "t_ppf", "chi2_sf"]

_TINY = 1e-300


def norm_ppf(q: float) -> float:
    """Standard-normal quantile: ``norm_ppf(0.975)`` ≈ 1.96."""
    return NormalDist().inv_cdf(q)


def norm_cdf(x: float) -> float:
    """Standard-normal distribution function."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def chi2_sf(x: float, df: int) -> float:
    """P(χ²_df > x) for a whole number of degrees of freedom, from the closed forms of the regularised gamma
    function: for even df, e^(−x/2) Σ_{i<df/2} (x/2)^i / i!; for odd df, 2 (1 − Φ(√x)) plus
    e^(−x/2) Σ_{i<(df−1)/2} (x/2)^(i+½) / Γ(i + 3/2)."""
    if df < 1 or int(df) != df:
        raise ValueError("chi-squared degrees of freedom must be a positive whole number")
    if x <= 0:
        return 1.0
    half = x / 2.0
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, int(df) // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    total = math.erfc(math.sqrt(half))
    for i in range((int(df) - 1) // 2):
        total += math.exp(-half + (i + 0.5) * math.log(half) - math.lgamma(i + 1.5))
    return min(1.0, total)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b), evaluated by the modified Lentz method."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b): the CDF of Beta(a, b) at ``x``."""
    if a <= 0 or b <= 0:
        raise ValueError("beta parameters must be positive")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    # The fraction converges fast only below the mean; use I_x(a, b) = 1 - I_{1-x}(b, a) above it.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def beta_ppf(q: float, a: float, b: float) -> float:
    """Quantile of Beta(a, b): the ``x`` with I_x(a, b) = q, by bisection (the CDF is monotone)."""
    if not 0.0 <= q <= 1.0:
        raise ValueError("a quantile's probability must lie in [0, 1]")
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@lru_cache(maxsize=4096)
def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t with ``df`` degrees of freedom (``t_ppf(0.975, 3)`` ≈ 3.182).

    For t > 0, P(T > t) = I_{df/(df+t²)}(df/2, 1/2) / 2, so the quantile comes from the beta quantile. Cached:
    every interval of n pairs asks for the same quantile, and the bisection is the slow part.
    """
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if not 0.0 < q < 1.0:
        raise ValueError("a t quantile's probability must lie in (0, 1)")
    if q == 0.5:
        return 0.0
    tail = 2.0 * min(q, 1.0 - q)
    x = beta_ppf(tail, df / 2.0, 0.5)
    t = math.sqrt(df * (1.0 - x) / x) if x > 0 else math.inf
    return t if q > 0.5 else -t
