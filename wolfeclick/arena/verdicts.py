"""Plain-words verdicts per pairing: "B is stronger (95%)", "not separable yet — about N more pairs", "no
detectable difference — within ±50 Elo". Pure functions of the paired statistics; no I/O.

Each verdict says no more than its test supports:

* "stronger" when the paired (pentanomial) interval of `stats.paired_summary`, A's score per game with pairs as
  the unit, leaves out ½ (an Elo difference of 0);
* "no detectable difference" only from an equivalence test: two one-sided tests (TOST) at level α against the
  margin ±δ Elo (`EQUIVALENCE_ELO`), i.e. the (1 − 2α) paired interval lies inside (s(−δ), s(+δ)). An edge of
  zero seen in one pair, or in 30 pairs that still allow ±107 Elo, is not evidence of no difference;
* otherwise "not separable yet", with the further pairs that would likely separate it if the distribution of
  pair outcomes seen so far is the true one (`pairs_for_power`: the power of the very interval the verdict
  reads — Student's t, the virtual pair, discrete pair outcomes — exact for up to `EXACT_PAIRS` pairs).

A verdict is a fixed-sample test: it holds when read once, at a number of pairs chosen in advance. Reading it
after every pair and stopping at the first "stronger" makes false calls far likelier (`REPEATED_LOOKS`); the
SPRT (`sprt.py`) is the test built for that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from wolfeclick.arena.distributions import norm_cdf, t_ppf
from wolfeclick.arena.sprt import elo_to_score
from wolfeclick.arena.stats import PAIR_OUTCOMES, VIRTUAL_PAIR, PairedSummary, paired_summary

__all__ = [
    "POWER",
    "MAX_MORE_PAIRS",
    "EQUIVALENCE_ELO",
    "EXACT_PAIRS",
    "REPEATED_LOOKS",
    "Verdict",
    "equivalent",
    "separation_power",
    "pairs_for_power",
    "plug_in_probs",
    "more_pairs_needed",
    "pairing_verdict",
    "score_to_elo",
    "verdict_rows",
]

POWER = 0.8
"""Chance the further pairs separate the pairing, if the pair outcomes seen so far are the truth."""
MAX_MORE_PAIRS = 1000
"""Beyond this many further pairs the estimate is not given: "more than 1000 more pairs"."""
EQUIVALENCE_ELO = 50.0
"""δ of the equivalence test: "no detectable difference" means the data place the gap within ±δ Elo."""
EXACT_PAIRS = 50
"""Up to this many pairs the power is exact (summed over every possible outcome); beyond, the normal approximation."""
REPEATED_LOOKS = ("Verdicts are fixed-sample tests (95%): valid read once, at a number of pairs chosen in "
                  "advance. Checking after every pair and stopping at the first \"stronger\" calls a difference "
                  "that is not there far more often (about 1 run in 4 over 100 looks); use --sprt to stop early.")
"""The note shown beside fixed-sample verdicts (docs/tournaments.md gives the simulated rates)."""

VerdictKind = Literal["stronger", "not_separable", "no_difference"]


@dataclass(frozen=True)
class Verdict:
    """One pairing's verdict. `favoured` is the stronger policy (kind "stronger"), the one ahead so far (kind
    "not_separable", when either is), or None; `more_pairs` is the estimate of further pairs (kind
    "not_separable" only, when one is given)."""

    kind: VerdictKind
    text: str
    more_pairs: int | None
    favoured: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "more_pairs": self.more_pairs, "favoured": self.favoured}


def _scores_of(counts: Sequence[int]) -> list[float]:
    return [score for score, k in zip(PAIR_OUTCOMES, counts) for _ in range(k)]


def equivalent(paired: PairedSummary, margin: float = EQUIVALENCE_ELO, alpha: float = 0.05) -> bool:
    """TOST: both one-sided tests at ``alpha`` reject a gap beyond ±``margin`` Elo, i.e. the (1 − 2 alpha)
    paired interval lies strictly inside (s(−margin), s(margin)), s the logistic expected score."""
    if paired.pairs < 2:
        return False
    inner = paired_summary(_scores_of(paired.counts), level=1.0 - 2.0 * alpha)
    return elo_to_score(-margin) < inner.ci_low and inner.ci_high < elo_to_score(margin)


def _t_quantile(level: float, df: int) -> float:
    return t_ppf((1.0 + level) / 2.0, df)


@lru_cache(maxsize=None)
def _separating(n: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Which sums separate: over the grid a = Σ k_i (0..4n), b = Σ k_i² (0..16n), k_i = 4 x_i the pair's score
    in quarter points, whether `paired_summary`'s ``level`` interval on n pairs with those sums leaves out ½
    upwards / downwards. The interval depends on the pairs only through these two sums, so this is its formula,
    vectorised (unreachable cells are computed too; they carry no probability)."""
    a = np.arange(4 * n + 1, dtype=float)[:, None]
    b = np.arange(16 * n + 1, dtype=float)[None, :]
    mean = a / (4.0 * n)
    spread = np.maximum(0.0, b / 16.0 - n * mean * mean)  # sum (x_i - m)^2
    for score, weight in VIRTUAL_PAIR:
        spread = spread + weight * (score / 2.0 - mean) ** 2
    var = spread / (n + sum(w for _, w in VIRTUAL_PAIR) - 1.0)
    half = _t_quantile(level, n - 1) * np.sqrt(var / n)
    return np.maximum(0.0, mean - half) > 0.5, np.minimum(1.0, mean + half) < 0.5


def _exact_powers(p: np.ndarray, first: int, last: int, level: float, upward: bool) -> dict[int, float]:
    """`separation_power` for every n in first..last at once: the distribution of (Σ k, Σ k²) after n pairs,
    built one pair at a time (each pair adds k and k² with probability p_k), summed over the separating cells."""
    out: dict[int, float] = {}
    pmf = np.ones((1, 1))
    for n in range(1, last + 1):
        new = np.zeros((4 * n + 1, 16 * n + 1))
        for k in range(5):
            if p[k] > 0:
                new[k: k + pmf.shape[0], k * k: k * k + pmf.shape[1]] += p[k] * pmf
        pmf = new
        if n >= max(first, 2):
            up, down = _separating(n, level)
            out[n] = float(pmf[up if upward else down].sum())
    return out


def separation_power(probs: Sequence[float], pairs: int, level: float = 0.95, upward: bool = True) -> float:
    """The chance that ``pairs`` pairs drawn from ``probs`` (the five pair outcomes 0, ½, 1, 1½, 2 for A) give a
    paired ``level`` interval that leaves out ½ on the ``upward`` side (A stronger) or the other.

    Up to `EXACT_PAIRS` pairs: exact, summed over the distribution of the two sums the interval depends on
    (`_exact_powers`; the interval has no spread to speak of below two pairs, so one pair never separates).
    Beyond: the normal approximation for the mean, with the interval's own half-width (Student's t, the virtual
    pair) at the expected spread, widened for the half-width's own spread as the noncentral t's normal
    approximation is (it misses the skew of the pair outcomes: about 2 points too hopeful at p = 0.65 and 43
    pairs, which is why the exact range reaches past that).
    """
    p = np.asarray(probs, dtype=float)
    p = p / p.sum()
    if pairs < 2:
        return 0.0
    if pairs <= EXACT_PAIRS:
        return _exact_powers(p, pairs, pairs, level, upward)[pairs]
    return _normal_power(p, pairs, level, upward)


def _normal_power(p: np.ndarray, pairs: int, level: float, upward: bool) -> float:
    """`separation_power` by the normal approximation (see there)."""
    xs = np.array(PAIR_OUTCOMES) / 2.0
    mu = float(p @ xs)
    sigma2 = float(p @ (xs - mu) ** 2)
    virtual = sum(w * (score / 2.0 - mu) ** 2 for score, w in VIRTUAL_PAIR)
    weight = sum(w for _, w in VIRTUAL_PAIR)
    var = ((pairs - 1) * sigma2 + virtual) / (pairs + weight - 1.0)
    t = _t_quantile(level, pairs - 1)
    half = t * math.sqrt(var / pairs)
    if sigma2 == 0.0:
        return 1.0 if (mu - half > 0.5 if upward else mu + half < 0.5) else 0.0
    edge = (mu - 0.5) if upward else (0.5 - mu)
    # The half-width is estimated too: its spread widens the normal approximation of the noncentral t.
    spread = math.sqrt(1.0 + t * t * var / sigma2 / (2.0 * (pairs - 1)))
    return norm_cdf((edge - half) / math.sqrt(sigma2 / pairs) / spread)


def pairs_for_power(probs: Sequence[float], played: int = 0, level: float = 0.95, power: float = POWER,
                    limit: int = MAX_MORE_PAIRS) -> tuple[int, float] | None:
    """(total pairs N, its power): the fewest pairs N > ``played`` (and at least 2) at which `separation_power`
    in the direction ``probs`` lean reaches ``power``; None when no edge leans either way, or not by
    ``played + limit`` pairs. The search runs N upwards through the exact range, then by doubling and bisection
    (the normal approximation's power rises with N)."""
    p = np.asarray(probs, dtype=float)
    p = p / p.sum()
    mu = float(p @ (np.array(PAIR_OUTCOMES) / 2.0))
    if abs(mu - 0.5) < 1e-12:
        return None
    upward = mu > 0.5
    ceiling = played + limit
    start = max(played + 1, 2)
    top = min(EXACT_PAIRS, ceiling)
    # Summing every outcome is the slow part: skip it when even its last N is far short (the two methods differ
    # by a few points there), as it is for any edge that needs hundreds of pairs.
    if start <= top and _normal_power(p, top, level, upward) >= power - 0.1:
        for n, got in _exact_powers(p, start, top, level, upward).items():
            if got >= power:
                return n, got
    low = max(start, EXACT_PAIRS + 1)
    if low > ceiling or separation_power(p, ceiling, level, upward) < power:
        return None
    high = low
    while separation_power(p, high, level, upward) < power:
        low, high = high + 1, min(ceiling, 2 * high)
    while low < high:
        mid = (low + high) // 2
        low, high = (mid + 1, high) if separation_power(p, mid, level, upward) < power else (low, mid)
    return high, separation_power(p, high, level, upward)


def plug_in_probs(paired: PairedSummary) -> np.ndarray:
    """The pair-outcome distribution seen so far, with the interval's virtual pair added (½ pair scored 0, ½
    scored 2): the "if what we have seen is the truth" that the estimate of further pairs assumes."""
    counts = np.array(paired.counts, dtype=float)
    for score, weight in VIRTUAL_PAIR:
        counts[PAIR_OUTCOMES.index(score)] += weight
    probs: np.ndarray = counts / counts.sum()
    return probs


def more_pairs_needed(paired: PairedSummary, level: float = 0.95, power: float = POWER) -> int | None:
    """Further pairs after which a ``level`` interval would leave out ½ with chance ``power``, if the pair
    outcomes seen so far (`plug_in_probs`) are the truth (`pairs_for_power`); None when nothing leans either
    way or it would take more than `MAX_MORE_PAIRS`."""
    if paired.pairs == 0 or paired.mean == 0.5:
        return None
    found = pairs_for_power(plug_in_probs(paired).tolist(), paired.pairs, level, power)
    return None if found is None else found[0] - paired.pairs


def pairing_verdict(a: str, b: str, paired: PairedSummary, level: float = 0.95,
                    margin: float = EQUIVALENCE_ELO, estimate: bool = True) -> Verdict:
    """The verdict on A (`a`, whose score `paired` holds) against B; ``margin`` is the equivalence test's δ.
    ``estimate=False`` leaves out the further-pairs estimate (the kind is the same; simulations want only it)."""
    if paired.pairs == 0:
        return Verdict("not_separable", "not separable yet — no complete pair played", None, None)
    ahead = a if paired.mean > 0.5 else b if paired.mean < 0.5 else None
    if paired.ci_low > 0.5 or paired.ci_high < 0.5:
        return Verdict("stronger", f"{ahead} is stronger ({level:.0%})", None, ahead)
    if equivalent(paired, margin, 1.0 - level):  # TOST at 5 %: the 90 % interval inside ±margin
        return Verdict("no_difference", f"no detectable difference — within ±{margin:g} Elo (equivalence test, "
                                        f"{level:.0%})", None, None)
    if ahead is None:
        return Verdict("not_separable", "not separable yet — no edge either way so far", None, None)
    if not estimate:
        return Verdict("not_separable", "not separable yet", None, ahead)
    more = more_pairs_needed(paired, level)
    if more is None:
        return Verdict("not_separable", f"not separable yet — the edge so far would take over {MAX_MORE_PAIRS} "
                                        "more pairs to show", None, ahead)
    unit = "pair" if more == 1 else "pairs"
    return Verdict("not_separable", f"not separable yet — about {more} more {unit}", more, ahead)


def score_to_elo(score: float) -> float | None:
    """Elo difference of a per-game score under the logistic model; None at 0 or 1 (unbounded)."""
    if score <= 0.0 or score >= 1.0:
        return None
    return 400.0 * math.log10(score / (1.0 - score))


def _signed(elo: float | None, open_text: str) -> str:
    return open_text if elo is None else f"{elo:+.0f}"


def verdict_rows(summary: Any) -> list[dict[str, Any]]:
    """One display row per pairing, from a `TournamentSummary` or its `summary.json` data.

    Keys: ``pairing`` ("a vs b"), ``record`` (a's W-L-T over games), ``pairs``, ``score`` (a's score per game
    with its paired interval), ``elo`` (the same as an Elo difference for a), ``verdict`` (the plain words),
    ``kind``, ``more_pairs`` and ``favoured`` (as in the pairing's ``verdict``).
    """
    data: Mapping[str, Any] = summary.to_dict() if hasattr(summary, "to_dict") else summary
    rows = []
    for p in data.get("pairings", []):
        interval = p["pair_interval"]
        elo = p["elo_interval"]
        verdict = p["verdict"]
        rows.append({
            "pairing": f"{p['a']} vs {p['b']}",
            "record": f"{p['wins_a']}-{p['wins_b']}-{p['ties']}",
            "pairs": p["pairs"],
            "score": f"{p['pair_mean_a']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]",
            "elo": f"{_signed(p['elo_a'], 'n/a')} [{_signed(elo['low'], 'open')}, {_signed(elo['high'], 'open')}]",
            "verdict": verdict["text"],
            "kind": verdict["kind"],
            "more_pairs": verdict["more_pairs"],
            "favoured": verdict["favoured"],
        })
    return rows
