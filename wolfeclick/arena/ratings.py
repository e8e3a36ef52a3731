"""Ratings for arena policies: Bradley–Terry (with bootstrap) and Glicko-2.

Bradley–Terry answers "how strong is each policy, given all games so far" and
is what the leaderboard shows; the bootstrap gives it honest error bars.
Glicko-2 answers "how did strength move from tournament to tournament".
All ratings use the Elo scale: 400 points per factor of 10 in odds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from wolfeclick.arena.stats import GameResult, pairing_key, score_for

__all__ = [
    "ELO_PER_NAT",
    "PRIOR_GAMES",
    "canonical_order",
    "bradley_terry",
    "bootstrap_ratings",
    "Glicko2Rating",
    "glicko2_update",
    "glicko2_run",
]

#: Elo points per natural-log unit of strength: 400 / ln 10.
ELO_PER_NAT = 400.0 / math.log(10.0)

#: Virtual games each player draws against a fixed "field" player of
#: strength 1 (rating `base`). Keeps undefeated/winless players finite and
#: pulls players with very few games gently towards the field.
PRIOR_GAMES = 1.0


def canonical_order(games: Iterable[GameResult]) -> list[GameResult]:
    """Games sorted by a key that ignores how they were listed.

    Resampling indexes into this list, so a fixed seed gives the same
    bootstrap however the caller ordered the games.
    """

    def key(g: GameResult) -> tuple[str, str, int, str, str, int, str]:
        lo, hi = pairing_key(g)
        return (lo, hi, g.pair_index, g.a, g.b, g.winner is None, g.winner or "")

    return sorted(games, key=key)


def _tally(
    games: Sequence[GameResult], players: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index arrays (i, j, score of i) for each game, i < j in `players`."""
    index = {p: k for k, p in enumerate(players)}
    i = np.empty(len(games), dtype=np.intp)
    j = np.empty(len(games), dtype=np.intp)
    s = np.empty(len(games), dtype=float)
    for k, g in enumerate(games):
        lo, hi = pairing_key(g)
        i[k], j[k], s[k] = index[lo], index[hi], score_for(g, lo)
    return i, j, s


def _fit_log_strengths(
    wins: np.ndarray, n: np.ndarray, prior: float = PRIOR_GAMES
) -> np.ndarray:
    """Maximise the BT log-likelihood over log-strengths by damped Newton.

    `wins[i]` is i's total score (ties half), `n[i, j]` games between i and
    j (symmetric). Each player also has `prior` virtual games, scored half,
    against a field player fixed at log-strength 0; this makes the objective
    strictly concave, so the maximum exists, is unique and Newton converges.
    """
    m = len(wins)
    theta = np.zeros(m)
    target = wins + 0.5 * prior

    def objective(t: np.ndarray) -> float:
        # Each unordered pair appears twice in the symmetric matrix: halve.
        pairs = 0.5 * float(np.sum(n * np.logaddexp(t[:, None], t[None, :])))
        field = prior * float(np.sum(np.logaddexp(t, 0.0)))
        return float(target @ t) - pairs - field

    value = objective(theta)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        pf = 1.0 / (1.0 + np.exp(-theta))
        grad = target - np.sum(n * p, axis=1) - prior * pf
        w = n * p * (1.0 - p)
        hess = w - np.diag(np.sum(w, axis=1) + prior * pf * (1.0 - pf))
        step = np.linalg.solve(hess, -grad)
        scale = 1.0
        while True:
            candidate = theta + scale * step
            cand_value = objective(candidate)
            if cand_value >= value - 1e-12 or scale < 1e-8:
                break
            scale *= 0.5
        theta, value = candidate, cand_value
        if float(np.max(np.abs(scale * step))) < 1e-12:
            break
    return theta


def _ratings_from_theta(
    players: Sequence[str],
    theta: np.ndarray,
    anchor: str | None,
    anchor_rating: float,
    base: float,
) -> np.ndarray:
    """Elo-scale ratings, shifted so anchor = anchor_rating, else mean = base."""
    r = theta * ELO_PER_NAT
    if anchor is not None and anchor in players:
        return r - r[list(players).index(anchor)] + anchor_rating
    return r - r.mean() + base


def bradley_terry(
    games: Iterable[GameResult],
    anchor: str | None = "random",
    anchor_rating: float = 1000.0,
    base: float = 1000.0,
) -> dict[str, float]:
    """Bradley–Terry ratings on the Elo scale, keyed by player name.

    P(i beats j) = 1 / (1 + 10^((r_j - r_i) / 400)); a tie counts as half a
    win to each side. Fitted by Newton's method on log-strengths with a small
    prior: every player draws `PRIOR_GAMES` virtual game(s) against a fixed
    field player, so a policy that never loses still gets a finite rating.
    If `anchor` is one of the players its rating is `anchor_rating` (by
    default the random policy sits at 1000); otherwise ratings average `base`.
    """
    ordered = canonical_order(games)
    players = sorted({p for g in ordered for p in (g.a, g.b)})
    if not players:
        return {}
    i, j, s = _tally(ordered, players)
    theta = _fit_log_strengths(*_aggregate(i, j, s, len(players)))
    r = _ratings_from_theta(players, theta, anchor, anchor_rating, base)
    return {p: float(v) for p, v in zip(players, r)}


def _aggregate(
    i: np.ndarray, j: np.ndarray, s: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray]:
    """Total score per player and symmetric game-count matrix."""
    wins = np.bincount(i, weights=s, minlength=m) + np.bincount(
        j, weights=1.0 - s, minlength=m
    )
    n = np.zeros((m, m))
    np.add.at(n, (i, j), 1.0)
    return wins, n + n.T


def bootstrap_ratings(
    games: Iterable[GameResult],
    rounds: int = 200,
    seed: int = 0,
    anchor: str | None = "random",
    anchor_rating: float = 1000.0,
    base: float = 1000.0,
    level: float = 0.95,
) -> dict[str, tuple[float, float, float]]:
    """Bradley–Terry ratings with percentile bootstrap intervals.

    Returns {player: (rating on all games, low, high)}. Each round resamples
    the games with replacement (numpy `default_rng(seed)`) and refits; the
    interval is the central `level` percentile range of those refits. Games
    are sorted canonically first, so the result depends only on the multiset
    of games and the seed, never on the order they were listed. The player
    set is fixed from the full data, so a player missing from a resample is
    rated by the prior alone rather than dropped.
    """
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    ordered = canonical_order(games)
    players = sorted({p for g in ordered for p in (g.a, g.b)})
    if not players:
        return {}
    m = len(players)
    i, j, s = _tally(ordered, players)
    point = _ratings_from_theta(
        players, _fit_log_strengths(*_aggregate(i, j, s, m)), anchor, anchor_rating, base
    )
    rng = np.random.default_rng(seed)
    samples = np.empty((rounds, m))
    for k in range(rounds):
        idx = rng.integers(0, len(ordered), size=len(ordered))
        theta = _fit_log_strengths(*_aggregate(i[idx], j[idx], s[idx], m))
        samples[k] = _ratings_from_theta(players, theta, anchor, anchor_rating, base)
    tail = (1.0 - level) / 2.0 * 100.0
    low = np.percentile(samples, tail, axis=0)
    high = np.percentile(samples, 100.0 - tail, axis=0)
    return {
        p: (float(point[k]), float(low[k]), float(high[k]))
        for k, p in enumerate(players)
    }


# --------------------------------------------------------------------------
# Glicko-2 (Glickman, "Example of the Glicko-2 system", 2013)
# --------------------------------------------------------------------------

_GLICKO_SCALE = 173.7178  # Glicko-2 internal scale factor, as in the paper.


@dataclass(frozen=True)
class Glicko2Rating:
    """A Glicko-2 rating on the public scale: rating, deviation, volatility."""

    rating: float = 1500.0
    rd: float = 350.0
    vol: float = 0.06


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _new_volatility(
    sigma: float, phi: float, v: float, delta: float, tau: float, eps: float = 1e-6
) -> float:
    """Step 5 of Glickman's paper: solve f(x) = 0 by the Illinois method."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        num = ex * (delta * delta - phi * phi - v - ex)
        den = 2.0 * (phi * phi + v + ex) ** 2
        return num / den - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    fa, fb = f(big_a), f(big_b)
    while abs(big_b - big_a) > eps:
        c = big_a + (big_a - big_b) * fa / (fb - fa)
        fc = f(c)
        if fc * fb <= 0:
            big_a, fa = big_b, fb
        else:
            fa /= 2.0
        big_b, fb = c, fc
    return math.exp(big_a / 2.0)


def glicko2_update(
    player: Glicko2Rating,
    results: list[tuple[Glicko2Rating, float]],
    tau: float = 0.5,
) -> Glicko2Rating:
    """One Glicko-2 rating period for `player`.

    `results` pairs each opponent's pre-period rating with the score (1 win,
    0.5 tie, 0 loss). With no games only the deviation grows, by the player's
    volatility, as the paper prescribes. `tau` limits volatility change.
    """
    mu = (player.rating - 1500.0) / _GLICKO_SCALE
    phi = player.rd / _GLICKO_SCALE
    sigma = player.vol
    if not results:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return Glicko2Rating(float(player.rating), phi_star * _GLICKO_SCALE, sigma)
    v_inv = 0.0
    delta_sum = 0.0
    for opp, score in results:
        mu_j = (opp.rating - 1500.0) / _GLICKO_SCALE
        g_j = _g(opp.rd / _GLICKO_SCALE)
        e_j = 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))
        v_inv += g_j * g_j * e_j * (1.0 - e_j)
        delta_sum += g_j * (score - e_j)
    v = 1.0 / v_inv
    delta = v * delta_sum
    sigma_new = _new_volatility(sigma, phi, v, delta, tau)
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * delta_sum
    return Glicko2Rating(
        rating=mu_new * _GLICKO_SCALE + 1500.0,
        rd=phi_new * _GLICKO_SCALE,
        vol=sigma_new,
    )


def glicko2_run(
    tournaments: list[list[GameResult]],
    initial: Mapping[str, Glicko2Rating] | None = None,
    tau: float = 0.5,
) -> dict[str, Glicko2Rating]:
    """Apply one Glicko-2 rating period per tournament, in the order given.

    Within a period every game is rated against the opponent's rating from
    before the period (as Glicko-2 requires), so game order inside a
    tournament does not matter. Players first seen in a tournament start at
    `initial` or the default 1500/350/0.06; known players who sit a
    tournament out only have their deviation grow.
    """
    ratings: dict[str, Glicko2Rating] = dict(initial or {})
    for games in tournaments:
        for g in games:
            for p in (g.a, g.b):
                ratings.setdefault(p, Glicko2Rating())
        before = dict(ratings)
        results: dict[str, list[tuple[Glicko2Rating, float]]] = {p: [] for p in before}
        for g in canonical_order(games):
            results[g.a].append((before[g.b], score_for(g, g.a)))
            results[g.b].append((before[g.a], score_for(g, g.b)))
        ratings = {
            p: glicko2_update(before[p], results[p], tau) for p in sorted(before)
        }
    return ratings
