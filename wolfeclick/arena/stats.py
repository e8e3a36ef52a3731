"""Win-rate statistics for arena results.

Everything here is a pure function of finished games. Two views are offered:

* per game (`summarize_pairings`): wins, losses and ties with a Wilson interval,
  which behaves well near 0 and 1 and for small samples, unlike the plain
  normal interval;
* per pair (`pair_scores`, `paired_summary`): the arena plays every seed twice
  with seats swapped, so the two games of a pair share luck (team draw, RNG).
  Scoring the pair as a unit (0, ½, 1, 1½ or 2 for A, the "pentanomial" view
  used by engine testers) removes that shared noise from the variance. Its
  interval is Student's t with the variance regularised by one virtual pair,
  so a short run of identical pairs never gives a zero-width interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from wolfeclick.arena.distributions import t_ppf

__all__ = [
    "Z95",
    "WILSON",
    "T_VIRTUAL_PAIR",
    "VIRTUAL_PAIR",
    "GameResult",
    "PairingSummary",
    "PairedSummary",
    "PAIR_OUTCOMES",
    "wilson_interval",
    "pairing_key",
    "score_for",
    "summarize_pairings",
    "pair_scores",
    "paired_summary",
]

#: Two-sided 95 % standard-normal quantile.
Z95 = 1.959963984540054

#: The five possible pair scores for A, in the order `PairedSummary.counts` uses.
PAIR_OUTCOMES: tuple[float, float, float, float, float] = (0.0, 0.5, 1.0, 1.5, 2.0)

#: `interval_method` names, as `summary.json` reports them.
WILSON = "wilson"
T_VIRTUAL_PAIR = "student-t-virtual-pair"

#: The regularising virtual pair of `paired_summary`: half a pair scored 0 and
#: half scored 2 (per-game 0 and 1), i.e. the widest-spread pair there is.
VIRTUAL_PAIR: tuple[tuple[float, float], ...] = ((0.0, 0.5), (2.0, 0.5))


@dataclass(frozen=True)
class GameResult:
    """One finished battle, as the tournament layer records it.

    `a` and `b` are the policy names in the seats they played (`a` is seat 1);
    the statistics normalise the order themselves, so either order is fine.
    `pair_index` groups the two games of one seed played with seats swapped:
    within one unordered pairing, games sharing a `pair_index` form a pair.
    `winner` is `a`, `b`, or None for a tie (ties count half to each side).
    """

    a: str
    b: str
    pair_index: int
    winner: str | None

    def __post_init__(self) -> None:
        if self.a == self.b:
            raise ValueError(f"a policy cannot play itself: {self.a!r}")
        if self.winner is not None and self.winner not in (self.a, self.b):
            raise ValueError(
                f"winner {self.winner!r} is neither {self.a!r} nor {self.b!r}"
            )


@dataclass(frozen=True)
class PairingSummary:
    """Per-game record of one unordered pairing; `a` sorts before `b`.

    `win_rate_a` counts ties as half a win; `ci_low`/`ci_high` are the Wilson
    interval of that rate (`interval_method`).
    """

    a: str
    b: str
    games: int
    wins_a: int
    wins_b: int
    ties: int
    win_rate_a: float
    ci_low: float
    ci_high: float
    interval_method: str = WILSON


@dataclass(frozen=True)
class PairedSummary:
    """Pentanomial summary of pair scores for A.

    `counts[k]` is how many pairs scored `PAIR_OUTCOMES[k]` (0, ½, 1, 1½, 2).
    `mean` is A's score per game (pair score / 2); `ci_low`/`ci_high` are the
    interval of `paired_summary` on it (`interval_method`); `sd` is the
    regularised standard deviation of one pair's per-game score, which the
    "how many more pairs?" calculation uses (0.5 when nothing is known).
    """

    pairs: int
    counts: tuple[int, int, int, int, int]
    mean: float
    ci_low: float
    ci_high: float
    sd: float = 0.5
    interval_method: str = T_VIRTUAL_PAIR


def wilson_interval(
    successes: float, n: int, z: float = Z95
) -> tuple[float, float]:
    """Wilson score interval for a proportion; ties may be passed as x.5.

    Chosen over the normal interval because it never leaves [0, 1] and stays
    sensible at 0/n and n/n. With no games nothing is known: (0.0, 1.0).
    """
    if n < 0:
        raise ValueError("n must be non-negative")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n], got {successes} of {n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # At 0/n and n/n the bound is exactly 0 or 1; avoid rounding residue.
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (lo, hi)


def pairing_key(game: GameResult) -> tuple[str, str]:
    """The unordered pairing of a game, as (first, second) in sorted order."""
    return (game.a, game.b) if game.a < game.b else (game.b, game.a)


def score_for(game: GameResult, player: str) -> float:
    """`player`'s score in `game`: 1 win, 0.5 tie, 0 loss."""
    if game.winner is None:
        return 0.5
    return 1.0 if game.winner == player else 0.0


def summarize_pairings(games: Iterable[GameResult]) -> list[PairingSummary]:
    """One `PairingSummary` per unordered pairing, sorted by (a, b)."""
    tallies: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for g in games:
        key = pairing_key(g)
        t = tallies[key]
        if g.winner is None:
            t[2] += 1
        elif g.winner == key[0]:
            t[0] += 1
        else:
            t[1] += 1
    out: list[PairingSummary] = []
    for (a, b), (wa, wb, ties) in sorted(tallies.items()):
        n = wa + wb + ties
        score = wa + 0.5 * ties
        lo, hi = wilson_interval(score, n)
        out.append(
            PairingSummary(
                a=a,
                b=b,
                games=n,
                wins_a=wa,
                wins_b=wb,
                ties=ties,
                win_rate_a=score / n,
                ci_low=lo,
                ci_high=hi,
            )
        )
    return out


def pair_scores(games: Iterable[GameResult]) -> dict[tuple[str, str], list[float]]:
    """Pair scores (0..2) for the first-sorted policy of each pairing.

    Games are grouped by (unordered pairing, `pair_index`); a group counts only
    when it holds exactly two games with the seats swapped, since a half-played
    or malformed pair would break the shared-luck cancellation. Scores are
    listed in `pair_index` order; pairings with no complete pair are omitted.
    """
    groups: dict[tuple[str, str], dict[int, list[GameResult]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for g in games:
        groups[pairing_key(g)][g.pair_index].append(g)
    out: dict[tuple[str, str], list[float]] = {}
    for key in sorted(groups):
        a = key[0]
        scores: list[float] = []
        for idx in sorted(groups[key]):
            pair = groups[key][idx]
            if len(pair) != 2 or pair[0].a == pair[1].a:
                continue
            scores.append(score_for(pair[0], a) + score_for(pair[1], a))
        if scores:
            out[key] = scores
    return out


def _outcome_index(score: float) -> int:
    """Index of a pair score in `PAIR_OUTCOMES`; rejects anything else."""
    k = score * 2
    if k != int(k) or not 0 <= k <= 4:
        raise ValueError(f"pair score must be one of {PAIR_OUTCOMES}, got {score}")
    return int(k)


def paired_summary(scores: list[float], level: float = 0.95) -> PairedSummary:
    """Pentanomial summary of pair scores (each 0, 0.5, 1, 1.5 or 2).

    Interval: Student's t on the per-game pair means x_i = s_i / 2, with the
    variance regularised by `VIRTUAL_PAIR` (weight ½ at x = 0 and ½ at x = 1):

        v = (sum (x_i - m)^2 + sum_virtual w (x - m)^2) / (n + 1 - 1),
        m ± t_{n-1}((1 + level) / 2) * sqrt(v / n), clipped to [0, 1],

    m being the observed mean. The plain sample variance is zero whenever every
    pair had the same score (4 pairs all 2-0 gave [1, 1]); the virtual pair
    keeps it honest (4 pairs all 2-0: [0.44, 1], near the Clopper–Pearson
    [0.40, 1] on pairs won) and its weight fades as pairs accumulate. The t
    quantile, not the normal one, accounts for v being estimated from few
    pairs. With fewer than two pairs the interval is (0, 1); with none, the
    mean is 0.5.
    """
    counts = [0, 0, 0, 0, 0]
    for s in scores:
        counts[_outcome_index(s)] += 1
    n = len(scores)
    if n == 0:
        return PairedSummary(0, (0, 0, 0, 0, 0), 0.5, 0.0, 1.0)
    xs = [s / 2 for s in scores]
    mean = sum(xs) / n
    spread = sum((x - mean) ** 2 for x in xs) + sum(w * (s / 2 - mean) ** 2 for s, w in VIRTUAL_PAIR)
    weight = sum(w for _, w in VIRTUAL_PAIR)
    var = spread / (n + weight - 1)
    if n == 1:
        lo, hi = 0.0, 1.0
    else:
        half = t_ppf((1.0 + level) / 2.0, n - 1) * math.sqrt(var / n)
        lo, hi = max(0.0, mean - half), min(1.0, mean + half)
    return PairedSummary(
        pairs=n,
        counts=(counts[0], counts[1], counts[2], counts[3], counts[4]),
        mean=mean,
        ci_low=lo,
        ci_high=hi,
        sd=math.sqrt(var),
    )
