"""Bradley–Terry ratings for arena policies, and how sure we are of them.

Bradley–Terry answers "how strong is each policy, given all games so far" and
is what the leaderboard shows; the bootstrap, the separation check and the
profile likelihood give it honest error bars (one idea: the fit and its
intervals share the likelihood). Glicko-2, which follows strength from
tournament to tournament, is ``wolfeclick.arena.glicko``.
All ratings use the Elo scale: 400 points per factor of 10 in odds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from wolfeclick.arena.stats import GameResult, pairing_key, score_for

__all__ = [
    "ELO_PER_NAT",
    "PRIOR_GAMES",
    "canonical_order",
    "bradley_terry",
    "bootstrap_ratings",
    "Separation",
    "separation",
    "reference_field",
    "ModelFit",
    "model_fit",
    "profile_intervals",
    "BOOTSTRAP_PAIRS",
    "PROFILE_LIKELIHOOD",
    "RatingInterval",
    "rating_intervals",
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
    theta, _ = _newton_ascent(np.zeros(len(wins)), wins, n, prior, lambda hess, grad: np.linalg.solve(hess, -grad),
                              tol=1e-12)
    return theta


def _objective(theta: np.ndarray, wins: np.ndarray, n: np.ndarray, prior: float = PRIOR_GAMES) -> float:
    """The prior-penalised Bradley–Terry log-likelihood that `_fit_log_strengths` maximises."""
    target = wins + 0.5 * prior
    pairs = 0.5 * float(np.sum(n * np.logaddexp(theta[:, None], theta[None, :])))
    return float(target @ theta) - pairs - prior * float(np.sum(np.logaddexp(theta, 0.0)))


def _newton_ascent(
    theta: np.ndarray, wins: np.ndarray, n: np.ndarray, prior: float,
    solve: Callable[[np.ndarray, np.ndarray], np.ndarray], *, tol: float,
) -> tuple[np.ndarray, float]:
    """Damped Newton ascent of `_objective` from ``theta``; returns the maximiser and its value.

    ``solve(hessian, gradient)`` gives the Newton step (plain for the fit, kept on a constraint for the profile
    likelihood); a halving line search keeps the objective rising. Stops when a step moves θ by less than ``tol``.
    """
    target = wins + 0.5 * prior
    value = _objective(theta, wins, n, prior)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        pf = 1.0 / (1.0 + np.exp(-theta))
        grad = target - np.sum(n * p, axis=1) - prior * pf
        w = n * p * (1.0 - p)
        step = solve(w - np.diag(np.sum(w, axis=1) + prior * pf * (1.0 - pf)), grad)
        scale = 1.0
        while True:
            candidate = theta + scale * step
            cand_value = _objective(candidate, wins, n, prior)
            if cand_value >= value - 1e-12 or scale < 1e-8:
                break
            scale *= 0.5
        theta, value = candidate, cand_value
        if float(np.max(np.abs(scale * step))) < tol:
            break
    return theta, value


def _ratings_from_theta(
    players: Sequence[str],
    theta: np.ndarray,
    anchor: str | None,
    anchor_rating: float,
    base: float,
) -> np.ndarray:
    """Elo-scale ratings, shifted so anchor = anchor_rating, else mean = base."""
    r: np.ndarray = theta * ELO_PER_NAT
    shifted: np.ndarray = (r - r[list(players).index(anchor)] + anchor_rating if anchor is not None and anchor in players
                           else r - r.mean() + base)
    return shifted


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


def _clusters(games: Sequence[GameResult]) -> tuple[np.ndarray, int]:
    """Cluster number of each game (its `pair_index`, densely renumbered) and the number of clusters.

    A pair index names one battle seed, which every pairing of a tournament plays, so a cluster holds all the
    games dealt from that seed: the unit that is independent of the others.
    """
    keys = sorted({g.pair_index for g in games})
    number = {k: c for c, k in enumerate(keys)}
    return np.array([number[g.pair_index] for g in games], dtype=np.intp), len(keys)


def _cluster_tallies(
    i: np.ndarray, j: np.ndarray, s: np.ndarray, cluster: np.ndarray, k: int, m: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cluster: each player's score, the game-count matrix, and who took points off whom.

    Shapes (k, m), (k, m, m) and (k, m, m); ``took[c, a, b]`` counts a's wins + ties against b in cluster c.
    """
    wins = np.zeros((k, m))
    np.add.at(wins, (cluster, i), s)
    np.add.at(wins, (cluster, j), 1.0 - s)
    n = np.zeros((k, m, m))
    np.add.at(n, (cluster, i, j), 1.0)
    took = np.zeros((k, m, m))
    np.add.at(took, (cluster[s > 0], i[s > 0], j[s > 0]), 1.0)
    np.add.at(took, (cluster[s < 1], j[s < 1], i[s < 1]), 1.0)
    return wins, n + np.transpose(n, (0, 2, 1)), took


def bootstrap_ratings(
    games: Iterable[GameResult],
    rounds: int = 200,
    seed: int = 0,
    anchor: str | None = "random",
    anchor_rating: float = 1000.0,
    base: float = 1000.0,
    level: float = 0.95,
) -> dict[str, tuple[float, float, float]]:
    """Bradley–Terry ratings with percentile bootstrap intervals, resampled by pair.

    Returns {player: (rating on all games, low, high)}. Each round draws the pair indices (the clusters of
    `_clusters`) with replacement (numpy `default_rng(seed)`), takes every game of each drawn pair, and
    refits; the interval is the central `level` percentile range of those refits. Resampling whole pairs keeps
    the two seat-swapped games of a deal together, and the deal shared by every pairing, as the data were made.
    Games are sorted canonically first, so the result depends only on the multiset of games and the seed. The
    player set is fixed from the full data, so a player missing from a resample is rated by the prior alone.
    Under separation (see `separation`) every resample is separated too and these intervals are meaningless;
    `rating_intervals` checks for that and falls back to the profile likelihood.
    """
    plan = _Resampling(games, rounds, seed)
    if not plan.players:
        return {}
    point = plan.point(anchor, anchor_rating, base)
    samples = plan.refits(anchor, anchor_rating, base)
    tail = (1.0 - level) / 2.0 * 100.0
    low = np.percentile(samples, tail, axis=0)
    high = np.percentile(samples, 100.0 - tail, axis=0)
    return {p: (float(point[k]), float(low[k]), float(high[k])) for k, p in enumerate(plan.players)}


class _Resampling:
    """The games of a bootstrap by pair, tallied per cluster, with the resampling weights drawn up front."""

    def __init__(self, games: Iterable[GameResult], rounds: int, seed: int) -> None:
        if rounds < 1:
            raise ValueError("rounds must be at least 1")
        ordered = canonical_order(games)
        self.players = sorted({p for g in ordered for p in (g.a, g.b)})
        m = len(self.players)
        i, j, s = _tally(ordered, self.players)
        self.wins, self.n = _aggregate(i, j, s, m)
        cluster, k = _clusters(ordered)
        self.wins_c, self.n_c, took_c = _cluster_tallies(i, j, s, cluster, k, m)
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, k, size=(rounds, k)) if k else np.zeros((rounds, 0), dtype=np.intp)
        self.weights = np.stack([np.bincount(row, minlength=k) for row in draws]).astype(float)
        self.took = np.tensordot(self.weights, took_c, axes=1) > 0  # (rounds, m, m)

    def point(self, anchor: str | None, anchor_rating: float, base: float) -> np.ndarray:
        theta = _fit_log_strengths(self.wins, self.n)
        return _ratings_from_theta(self.players, theta, anchor, anchor_rating, base)

    def separated_share(self) -> float:
        """Share of resamples whose win graph is not strongly connected."""
        return float(np.mean([not _strongly_connected(edges) for edges in self.took]))

    def refits(self, anchor: str | None, anchor_rating: float, base: float) -> np.ndarray:
        samples = np.empty((len(self.weights), len(self.players)))
        for r, weight in enumerate(self.weights):
            theta = _fit_log_strengths(weight @ self.wins_c, np.tensordot(weight, self.n_c, axes=1))
            samples[r] = _ratings_from_theta(self.players, theta, anchor, anchor_rating, base)
        return samples


# --------------------------------------------------------------------------
# Separation: when the win graph is not strongly connected
# --------------------------------------------------------------------------


def _reach(edges: np.ndarray) -> np.ndarray:
    """Transitive-reflexive closure of a boolean adjacency matrix (repeated squaring)."""
    reach = edges | np.eye(len(edges), dtype=bool)
    while True:
        nxt = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if np.array_equal(nxt, reach):
            return reach
        reach = nxt


def _strongly_connected(edges: np.ndarray) -> bool:
    return bool(np.all(_reach(edges)))


@dataclass(frozen=True)
class Separation:
    """How the "took points off" graph (an edge a → b when a won or tied a game against b) falls apart.

    The Bradley–Terry maximum-likelihood estimate exists, without a prior, exactly when this graph is strongly
    connected (Zermelo 1929; Hunter 2004, condition A). `groups` are its strongly connected components, listed
    in player order of their first member. `field` is the set of players the intervals are placed against
    (`reference_field`; every player unless told otherwise), and `open` maps each player to the side of its
    rating relative to the field's mean that the data leave unbounded: "above" unless every field member reaches
    it along the graph (took points off someone who took points off … it), "below" unless it reaches every field
    member, "both" when neither holds, None when both do. (Unbounded exactly then: pushing the players that do
    not reach it down, or those it does not reach up, breaks no game's result.)
    """

    groups: tuple[tuple[str, ...], ...]
    open: dict[str, str | None]
    field: tuple[str, ...] = ()

    @property
    def separated(self) -> bool:
        return len(self.groups) > 1


def _win_graph(ordered: Sequence[GameResult], players: Sequence[str]) -> np.ndarray:
    """The "took points off" adjacency matrix over `players`."""
    m = len(players)
    edges = np.zeros((m, m), dtype=bool)
    if ordered:
        i, j, s = _tally(ordered, players)
        edges[i[s > 0], j[s > 0]] = True
        edges[j[s < 1], i[s < 1]] = True
    return edges


def _groups(reach: np.ndarray, players: Sequence[str]) -> list[tuple[str, ...]]:
    same = reach & reach.T
    groups: list[tuple[str, ...]] = []
    seen: set[int] = set()
    for a in range(len(players)):
        if a not in seen:
            members = [b for b in range(len(players)) if same[a, b]]
            seen.update(members)
            groups.append(tuple(players[b] for b in members))
    return groups


def reference_field(games: Iterable[GameResult], anchor: str | None = None) -> tuple[str, ...]:
    """The players a table's intervals are placed against: the established, connected core of the field.

    The scale a table shows is anchored (``anchor`` = 1000) or, without the anchor, centred on the field. A
    policy the rest never took a point off (a newcomer that won its one game) has no upper bound from the data;
    if the field's mean included it, every other rating relative to that mean would lose its lower bound too,
    though the data bound them all relative to the anchor. So the field is the strongly connected group of the
    anchor when that group has two or more players; failing that, the group with the most games played inside
    it, when one has strictly the most and two or more players; failing that (every player apart: 8-0 between
    two), everyone, as when nothing is separated.
    """
    ordered = canonical_order(games)
    players = sorted({p for g in ordered for p in (g.a, g.b)})
    groups = _groups(_reach(_win_graph(ordered, players)), players)
    if len(groups) <= 1:
        return tuple(players)
    for group in groups:
        if anchor in group and len(group) >= 2:
            return group
    inside = [sum(1 for g in ordered if g.a in group and g.b in group) for group in groups]
    best = max(inside)
    top = [group for group, n in zip(groups, inside) if n == best]
    if len(top) == 1 and len(top[0]) >= 2:
        return top[0]
    return tuple(players)


def separation(games: Iterable[GameResult], field: Sequence[str] | None = None) -> Separation:
    """The strongly connected components of the win graph of `games`, and which sides of each rating relative
    to `field`'s mean (default: every player) the data leave open."""
    ordered = canonical_order(games)
    players = sorted({p for g in ordered for p in (g.a, g.b)})
    reach = _reach(_win_graph(ordered, players))
    groups = _groups(reach, players)
    chosen = tuple(players) if field is None else tuple(p for p in players if p in set(field))
    inside = np.array([p in set(chosen) for p in players], dtype=bool)
    opened: dict[str, str | None] = {}
    for a in range(len(players)):
        bounded_above = bool(np.all(reach[inside, a]))  # every field member reaches a
        bounded_below = bool(np.all(reach[a, inside]))  # a reaches every field member
        opened[players[a]] = (None if bounded_above and bounded_below else "above" if bounded_below
                              else "below" if bounded_above else "both")
    return Separation(tuple(groups), opened, chosen)


# --------------------------------------------------------------------------
# Goodness of fit: does one strength per player explain the results?
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFit:
    """Pearson's X² of the Bradley–Terry fit over pairings, its degrees of freedom and p-value (None when
    ``df`` < 1: with no more pairings than strengths to fit, nothing is left to test)."""

    statistic: float
    df: int
    p_value: float | None

    @property
    def fits(self) -> bool:
        """False when the p-value is below 0.05: some pairings go against any one-strength-per-player order."""
        return self.p_value is None or self.p_value >= 0.05

    def text(self) -> str:
        """The table's word on it, e.g. "Bradley–Terry does not fit these results (X² = 60.0 on 1 df, …)"."""
        if self.p_value is None:
            return ""
        p = "p < 0.001" if self.p_value < 0.001 else f"p = {self.p_value:.3f}"
        if self.fits:
            return f"Bradley–Terry fits these results (X² = {self.statistic:.1f} on {self.df} df, {p})."
        return (f"Bradley–Terry does not fit these results (X² = {self.statistic:.1f} on {self.df} df, {p}): "
                "some pairings go against the ratings' order (a cycle, or strength that depends on the "
                "opponent), so read each pairing's own verdict, not the order of the ratings.")


def model_fit(games: Iterable[GameResult]) -> ModelFit:
    """Pearson's goodness-of-fit test of Bradley–Terry: over every pairing played, (score − n p)² / (n p (1 − p))
    with p from the fitted ratings (ties half), on (pairings − players + 1) degrees of freedom.

    A cycle — A beats B, B beats C, C beats A, each 20-0 — fits every player at the same rating and predicts ½
    everywhere: X² = 60 on 1 df. The χ² reference is rough when pairings have few games; the word is a warning,
    not a verdict.
    """
    from wolfeclick.arena.distributions import chi2_sf

    ordered = canonical_order(games)
    players = sorted({p for g in ordered for p in (g.a, g.b)})
    if not players:
        return ModelFit(0.0, 0, None)
    i, j, s = _tally(ordered, players)
    theta = _fit_log_strengths(*_aggregate(i, j, s, len(players)))
    score = np.zeros((len(players), len(players)))
    count = np.zeros_like(score)
    np.add.at(score, (i, j), s)
    np.add.at(count, (i, j), 1.0)
    played = count > 0
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    expected = count * p
    statistic = float(np.sum((score[played] - expected[played]) ** 2 / (expected * (1.0 - p))[played]))
    df = int(played.sum()) - (len(players) - 1)
    return ModelFit(statistic, df, chi2_sf(statistic, df) if df >= 1 else None)


# --------------------------------------------------------------------------
# Profile likelihood
# --------------------------------------------------------------------------


def _constrained_max(
    wins: np.ndarray, n: np.ndarray, a: np.ndarray, c: float, start: np.ndarray, prior: float = PRIOR_GAMES
) -> float:
    """max of `_objective` subject to a·θ = c, by Newton's method on the KKT system from a feasible start.

    The objective is strictly concave (the prior sees to that) and the constraint linear, so the maximum is
    unique; every Newton step keeps a·θ = c, and a halving line search keeps the objective rising.
    """
    theta = start + (c - float(a @ start)) * a / float(a @ a)
    m = len(wins)
    kkt = np.zeros((m + 1, m + 1))
    kkt[:m, m] = a
    kkt[m, :m] = a

    def on_constraint(hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
        kkt[:m, :m] = hess
        return np.linalg.solve(kkt, np.concatenate([-grad, [0.0]]))[:m]

    _, value = _newton_ascent(theta, wins, n, prior, on_constraint, tol=1e-11)
    return value


def profile_intervals(
    games: Iterable[GameResult], level: float = 0.95, base: float = 1000.0, field: Sequence[str] | None = None
) -> dict[str, tuple[float, float, float]]:
    """Bradley–Terry ratings relative to the field (`field`'s mean = `base`; default every player) with
    profile-likelihood intervals.

    For each player p the interval is every c with 2 (ℓ(θ̂) − max{ℓ(θ) : θ_p − mean_field(θ) = c}) ≤ χ²₁(level),
    where ℓ is the prior-penalised log-likelihood of the point estimate (the log posterior under its prior:
    `PRIOR_GAMES` virtual half-won games against a fixed field player). Unlike a bootstrap, this does not
    collapse when a player never lost or never won: the data then bound only one side, and the other is set
    by the prior alone (`Separation.open` says which). Found by bisection to 1e-9 of a log-strength unit.
    Returns {player: (rating, low, high)} on the Elo scale.
    """
    ordered = canonical_order(games)
    players = sorted({p for g in ordered for p in (g.a, g.b)})
    if not players:
        return {}
    m = len(players)
    wins, n = _aggregate(*_tally(ordered, players), m)
    theta = _fit_log_strengths(wins, n)
    best = _objective(theta, wins, n)
    drop = _chi2_1(level) / 2.0
    members = np.array([field is None or p in set(field) for p in players], dtype=float)
    out: dict[str, tuple[float, float, float]] = {}
    for k, p in enumerate(players):
        a = -members / members.sum()
        a[k] += 1.0
        centre = float(a @ theta)
        low, high = (_profile_end(wins, n, a, theta, best - drop, direction) for direction in (-1.0, 1.0))
        out[p] = (centre * ELO_PER_NAT + base, low * ELO_PER_NAT + base, high * ELO_PER_NAT + base)
    return out


def _profile_end(
    wins: np.ndarray, n: np.ndarray, a: np.ndarray, theta: np.ndarray, floor: float, direction: float
) -> float:
    """Where the profile of a·θ, walking from a·θ̂ in ``direction``, falls to ``floor``.

    The profile is concave and falls without bound either way (the prior sees to that), so doubling steps
    bracket the crossing and bisection narrows it to 1e-9.
    """
    centre = float(a @ theta)

    def above(c: float) -> bool:
        return _constrained_max(wins, n, a, c, theta) > floor

    inner, width = centre, 0.5
    while above(centre + direction * width):
        inner, width = centre + direction * width, 2.0 * width
    outer = centre + direction * width
    while abs(outer - inner) > 1e-9:
        mid = 0.5 * (inner + outer)
        inner, outer = (mid, outer) if above(mid) else (inner, mid)
    return 0.5 * (inner + outer)


def _chi2_1(level: float) -> float:
    """The `level` quantile of χ² with one degree of freedom: the squared normal quantile."""
    from statistics import NormalDist

    return NormalDist().inv_cdf((1.0 + level) / 2.0) ** 2


# --------------------------------------------------------------------------
# The intervals the tables show
# --------------------------------------------------------------------------

BOOTSTRAP_PAIRS = "bootstrap-pairs"
PROFILE_LIKELIHOOD = "profile-likelihood"


@dataclass(frozen=True)
class RatingInterval:
    """A rating with its interval and how it was made.

    `interval_method` is `BOOTSTRAP_PAIRS` or `PROFILE_LIKELIHOOD`; `open` is "above", "below", "both" or None:
    the side the data leave unbounded (the number there is then the prior's, not the data's).
    """

    rating: float
    low: float
    high: float
    interval_method: str
    open: str | None = None


def rating_intervals(
    games: Iterable[GameResult], rounds: int = 1000, seed: int = 0, base: float = 1000.0, level: float = 0.95,
    anchor: str | None = None,
) -> dict[str, RatingInterval]:
    """Ratings relative to the field (mean `base`) with intervals that stay honest under separation.

    * Separated data — the win graph is not strongly connected, or at least (1 − level) / 2 of the bootstrap
      resamples are (then the tail percentile is itself a separated refit, capped by the prior: 7-1 would get
      the 8-0 value as its upper end) — get the profile-likelihood interval (`profile_intervals`), with the
      sides the data leave open marked (`separation`). `interval_method` is `PROFILE_LIKELIHOOD`. The field
      is then `reference_field(games, anchor)`: the connected core around the scale's ``anchor``, so that a
      newcomer the others never beat opens its own interval, not everybody's (its mean is `base`).
    * Otherwise each end is the wider of the percentile bootstrap by pair (`bootstrap_ratings`) and the
      profile likelihood. A bootstrap over a few pairs has few distinct resamples, and none at all when every
      pair went the same way (a 1-1 in every pair bootstraps to a zero-width interval); the profile likelihood
      is the floor under it. `interval_method` is `BOOTSTRAP_PAIRS` or `PROFILE_LIKELIHOOD` when both ends came
      from one of them, else both names joined by "+".
    """
    ordered = canonical_order(games)
    if not ordered:
        return {}
    field = reference_field(ordered, anchor)
    split = separation(ordered, field)
    profile = profile_intervals(ordered, level, base, field)
    plan = _Resampling(ordered, rounds, seed) if not split.separated else None
    if plan is None or plan.separated_share() >= (1.0 - level) / 2.0:
        return {p: RatingInterval(r, lo, hi, PROFILE_LIKELIHOOD, split.open[p])
                for p, (r, lo, hi) in profile.items()}
    samples = plan.refits(None, base, base)
    tail = (1.0 - level) / 2.0 * 100.0
    boot_low = np.percentile(samples, tail, axis=0)
    boot_high = np.percentile(samples, 100.0 - tail, axis=0)
    out: dict[str, RatingInterval] = {}
    for k, p in enumerate(plan.players):
        rating, prof_low, prof_high = profile[p]
        low_from = BOOTSTRAP_PAIRS if boot_low[k] <= prof_low else PROFILE_LIKELIHOOD
        high_from = BOOTSTRAP_PAIRS if boot_high[k] >= prof_high else PROFILE_LIKELIHOOD
        method = low_from if low_from == high_from else f"{BOOTSTRAP_PAIRS}+{PROFILE_LIKELIHOOD}"
        out[p] = RatingInterval(rating, min(float(boot_low[k]), prof_low), max(float(boot_high[k]), prof_high),
                                method)
    return out
