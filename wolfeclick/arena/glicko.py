"""Glicko-2 ratings (Glickman, "Example of the Glicko-2 system", 2013): how a policy's strength moved from
tournament to tournament, each tournament one rating period. Pure.

Bradley–Terry (``wolfeclick.arena.ratings``) fits all battles at once and is what the leaderboard ranks by;
Glicko-2 depends on the order of its periods, which ``GLICKO_ORDER_NOTE`` tells the reader.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from wolfeclick.arena.ratings import canonical_order
from wolfeclick.arena.stats import GameResult, score_for

__all__ = ["GLICKO_ORDER_NOTE", "Glicko2Rating", "glicko2_update", "glicko2_run"]


_GLICKO_SCALE = 173.7178  # Glicko-2 internal scale factor, as in the paper.

GLICKO_ORDER_NOTE = ("Glicko-2 follows the rating periods in the order they were played: the same battles in "
                     "another order give other Glicko-2 numbers (Bradley–Terry, fitted to all battles at once, "
                     "does not depend on order).")
"""What the tables say about Glicko-2's dependence on the order of its rating periods."""


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

    The order of the periods does matter: Glicko-2 updates one period at a
    time, so the same tournaments in another order give other ratings
    (`GLICKO_ORDER_NOTE`); Bradley–Terry, fitted to all games at once, does not.
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
