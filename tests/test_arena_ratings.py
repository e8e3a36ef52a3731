"""Tests for wolfeclick.arena.ratings: Bradley–Terry, bootstrap and Glicko-2."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolfeclick.arena.glicko import Glicko2Rating, glicko2_run, glicko2_update
from wolfeclick.arena.ratings import (
    BOOTSTRAP_PAIRS,
    ELO_PER_NAT,
    PROFILE_LIKELIHOOD,
    bootstrap_ratings,
    bradley_terry,
    profile_intervals,
    rating_intervals,
    separation,
)
from wolfeclick.arena.stats import GameResult

PLAYERS = ["random", "alpha", "beta", "gamma"]
SEATINGS = [(a, b) for a in PLAYERS for b in PLAYERS if a != b]


@st.composite
def game_lists(draw: st.DrawFn) -> list[GameResult]:
    """Random small game lists over a fixed player pool (ties included)."""
    raw = draw(
        st.lists(
            st.tuples(
                st.sampled_from(SEATINGS),
                st.integers(0, 5),
                st.sampled_from(["a", "b", "tie"]),
            ),
            min_size=1,
            max_size=30,
        )
    )
    games = []
    for (a, b), idx, outcome in raw:
        winner = {"a": a, "b": b, "tie": None}[outcome]
        games.append(GameResult(a, b, idx, winner))
    return games


def _swap(g: GameResult) -> GameResult:
    winner = None if g.winner is None else (g.b if g.winner == g.a else g.a)
    return GameResult(g.a, g.b, g.pair_index, winner)


def _synthetic(strengths: dict[str, float], games_per_pairing: int, seed: int) -> list[GameResult]:
    rng = random.Random(seed)
    names = sorted(strengths)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = 1 / (1 + 10 ** ((strengths[b] - strengths[a]) / 400))
            for k in range(games_per_pairing):
                first, second = (a, b) if k % 2 == 0 else (b, a)
                out.append(GameResult(first, second, k // 2, a if rng.random() < p else b))
    return out


# ---------------------------------------------------------------- Bradley–Terry


def test_bt_anchor_and_mean() -> None:
    games = _synthetic({"random": 0, "weak": 100, "strong": 400}, 40, seed=1)
    anchored = bradley_terry(games)
    assert anchored["random"] == pytest.approx(1000.0)
    free = bradley_terry(games, anchor=None, base=1500.0)
    assert sum(free.values()) / 3 == pytest.approx(1500.0)
    # Same differences either way: the anchor only shifts.
    assert anchored["strong"] - anchored["weak"] == pytest.approx(free["strong"] - free["weak"])
    # Missing anchor falls back to the mean.
    absent = bradley_terry(games, anchor="nobody")
    assert sum(absent.values()) / 3 == pytest.approx(1000.0)


def test_bt_two_players_matches_logit() -> None:
    # 30-10 with the prior (one virtual tie each vs a field at 0) is close to
    # the plain logit estimate 400*log10(3) ≈ 190.8 but shrunk slightly.
    games = [GameResult("x", "y", k, "x" if k < 30 else "y") for k in range(40)]
    r = bradley_terry(games, anchor=None)
    diff = r["x"] - r["y"]
    assert 170 < diff < 190.9


def test_bt_undefeated_is_finite() -> None:
    games = [GameResult("random", "champ", k, "champ") for k in range(50)]
    r = bradley_terry(games)
    assert 1000 < r["champ"] < 3000


def test_bt_strong_medium_weak_ordering() -> None:
    games = _synthetic({"weak": 0, "medium": 200, "strong": 400}, 60, seed=7)
    r = bradley_terry(games, anchor="weak")
    assert r["strong"] > r["medium"] > r["weak"] == pytest.approx(1000.0)
    assert 100 < r["medium"] - r["weak"] < 320
    assert 280 < r["strong"] - r["weak"] < 560


def test_bt_empty() -> None:
    assert bradley_terry([]) == {}
    assert bootstrap_ratings([]) == {}


@settings(max_examples=60, deadline=None)
@given(game_lists(), st.randoms(use_true_random=False))
def test_bt_independent_of_order(games: list[GameResult], rnd: random.Random) -> None:
    shuffled = list(games)
    rnd.shuffle(shuffled)
    a, b = bradley_terry(games), bradley_terry(shuffled)
    assert a.keys() == b.keys()
    for p in a:
        assert a[p] == pytest.approx(b[p], abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(game_lists())
def test_bt_swapping_winners_mirrors(games: list[GameResult]) -> None:
    swapped = [_swap(g) for g in games]
    a, b = bradley_terry(games, anchor=None), bradley_terry(swapped, anchor=None)
    for p in a:
        assert b[p] == pytest.approx(2 * 1000.0 - a[p], abs=1e-6)
    a, b = bradley_terry(games, anchor="alpha"), bradley_terry(swapped, anchor="alpha")
    ref = "alpha" if "alpha" in a else min(a)
    for p in a:
        assert b[p] - b[ref] == pytest.approx(-(a[p] - a[ref]), abs=1e-6)


# ----------------------------------------------------------------- bootstrap


@settings(max_examples=15, deadline=None)
@given(game_lists(), st.randoms(use_true_random=False))
def test_bootstrap_independent_of_order(games: list[GameResult], rnd: random.Random) -> None:
    shuffled = list(games)
    rnd.shuffle(shuffled)
    a = bootstrap_ratings(games, rounds=20, seed=3)
    b = bootstrap_ratings(shuffled, rounds=20, seed=3)
    assert a.keys() == b.keys()
    for p in a:
        assert a[p] == pytest.approx(b[p], abs=1e-9)


def test_bootstrap_deterministic_and_brackets_point() -> None:
    games = _synthetic({"random": 0, "medium": 200, "strong": 400}, 30, seed=2)
    first = bootstrap_ratings(games, rounds=100, seed=11)
    assert first == bootstrap_ratings(games, rounds=100, seed=11)
    assert first != bootstrap_ratings(games, rounds=100, seed=12)
    point = bradley_terry(games)
    for p, (r, lo, hi) in first.items():
        assert r == pytest.approx(point[p])
        assert lo <= r <= hi
    assert first["random"] == pytest.approx((1000.0, 1000.0, 1000.0))
    assert first["strong"][2] - first["strong"][1] > 10


# ------------------------------------------------------------------ Glicko-2


def test_glicko2_glickman_worked_example() -> None:
    player = Glicko2Rating(1500, 200, 0.06)
    results = [
        (Glicko2Rating(1400, 30), 1.0),
        (Glicko2Rating(1550, 100), 0.0),
        (Glicko2Rating(1700, 300), 0.0),
    ]
    new = glicko2_update(player, results, tau=0.5)
    assert new.rating == pytest.approx(1464.06, abs=0.02)
    assert new.rd == pytest.approx(151.52, abs=0.02)
    assert new.vol == pytest.approx(0.05999, abs=0.00002)


def test_glicko2_no_games_grows_rd_only() -> None:
    player = Glicko2Rating(1600, 100, 0.06)
    new = glicko2_update(player, [])
    assert new.rating == 1600
    assert new.vol == 0.06
    assert new.rd == pytest.approx((100**2 + (0.06 * 173.7178) ** 2) ** 0.5)


def test_glicko2_run_periods() -> None:
    t1 = [GameResult("a", "b", k, "a") for k in range(5)]
    t2 = [GameResult("a", "c", k, "a") for k in range(5)]
    out = glicko2_run([t1, t2])
    assert set(out) == {"a", "b", "c"}
    assert out["a"].rating > 1500 > out["b"].rating
    assert out["c"].rating < 1500
    # b sat out the second tournament: its deviation grew after period 1.
    after_one = glicko2_run([t1])
    assert out["b"].rating == after_one["b"].rating
    assert out["b"].rd > after_one["b"].rd
    # Order of games inside a tournament does not matter.
    assert glicko2_run([list(reversed(t1)), t2]) == out


# ------------------------------------------------- honest intervals (issue 10)


def _head_to_head(wins: int, losses: int, winner: str = "heuristic", loser: str = "random") -> list[GameResult]:
    """``wins``-``losses`` for ``winner``, played as pairs with seats swapped (pair k = games 2k, 2k + 1)."""
    outcomes = [winner] * wins + [loser] * losses
    return [GameResult(*((loser, winner) if k % 2 == 0 else (winner, loser)), k // 2, w)
            for k, w in enumerate(outcomes)]


def test_separation_finds_groups_and_open_sides() -> None:
    games = [
        *_head_to_head(4, 0, "heuristic", "maxdamage"),
        *_head_to_head(4, 0, "heuristic", "random"),
        *_head_to_head(3, 1, "maxdamage", "random"),
    ]
    split = separation(games)
    assert split.separated
    assert split.groups == (("heuristic",), ("maxdamage", "random"))
    assert split.open == {"heuristic": "above", "maxdamage": "below", "random": "below"}
    assert separation(_head_to_head(0, 8)).open == {"heuristic": "below", "random": "above"}
    connected = separation(_head_to_head(7, 1))
    assert not connected.separated and set(connected.open.values()) == {None}
    ties_connect = [GameResult("a", "b", 0, "a"), GameResult("b", "a", 0, None)]
    assert not separation(ties_connect).separated


def test_undefeated_record_gets_an_open_profile_interval_not_zero_width() -> None:
    """Issue 10: 8-0 printed [1547, 1547]. Now the data's lower bound, and no upper bound from the data."""
    eight = _head_to_head(8, 0)
    old_style = bootstrap_ratings(eight, rounds=200, anchor=None)
    assert old_style["heuristic"][1] == pytest.approx(old_style["heuristic"][2])  # the collapse, as it was
    out = rating_intervals(eight, rounds=200)
    h, r = out["heuristic"], out["random"]
    assert (h.interval_method, h.open, r.open) == (PROFILE_LIKELIHOOD, "above", "below")
    # Two players: heuristic sits half the gap above the mean, so the gap's lower bound is 2 (low - 1000).
    gap_low = 2 * (h.low - 1000.0)
    assert 100 < gap_low < 230  # "at least about +100 to +230 at 95 %" (Clopper–Pearson … likelihood)
    assert h.high - h.low > 100 and r.high - r.low > 100
    # Three straight wins do not separate the two: the interval reaches below the field's mean.
    three = rating_intervals([GameResult("random", "heuristic", k, "heuristic") for k in range(3)])
    assert three["heuristic"].low < 1000.0 < three["heuristic"].rating


def test_near_separation_is_not_capped_at_the_undefeated_value() -> None:
    """7-1 in 4 pairs: a third of the resamples are 8-0, so the bootstrap's upper end was the 8-0 refit."""
    seven = _head_to_head(7, 1)
    eight_point = bradley_terry(_head_to_head(8, 0), anchor=None)["heuristic"]
    boot = bootstrap_ratings(seven, rounds=400, anchor=None)
    assert boot["heuristic"][2] == pytest.approx(eight_point)  # capped, as it was
    honest = rating_intervals(seven, rounds=400)["heuristic"]
    assert honest.interval_method == PROFILE_LIKELIHOOD and honest.open is None
    assert honest.high > eight_point + 50


def _penalised(theta: tuple[float, float], games: list[GameResult]) -> float:
    """The prior-penalised two-player log-likelihood, written out (one half-won virtual game each vs 0)."""
    value = 0.0
    for g in games:
        t_a = theta[0] if g.a == "heuristic" else theta[1]
        t_b = theta[1] if g.a == "heuristic" else theta[0]
        s = 0.5 if g.winner is None else 1.0 if g.winner == g.a else 0.0
        value += s * t_a + (1 - s) * t_b - math.log(math.exp(t_a) + math.exp(t_b))
    for t in theta:
        value += 0.5 * t - math.log(1 + math.exp(t))
    return value


def _golden_max(f, lo: float, hi: float) -> float:  # type: ignore[no-untyped-def]
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        lo, hi = (lo, b) if f(a) > f(b) else (a, hi)
    return f((lo + hi) / 2)


@pytest.mark.parametrize(("wins", "losses"), [(8, 0), (7, 1), (5, 3)])
def test_profile_interval_ends_are_where_the_likelihood_ratio_is_chi2(wins: int, losses: int) -> None:
    games = _head_to_head(wins, losses)
    rating, low, high = profile_intervals(games)["heuristic"]
    # With two players, heuristic's rating relative to the mean is c = (θ_h − θ_r) / 2; profile over θ_h + θ_r.
    def profile(c_elo: float) -> float:
        c = (c_elo - 1000.0) / ELO_PER_NAT
        return _golden_max(lambda m: _penalised((m + c, m - c), games), -20, 20)

    best = profile(rating)
    for end in (low, high):
        assert 2 * (best - profile(end)) == pytest.approx(1.959963984540054**2, abs=1e-6)


def test_bootstrap_resamples_whole_pairs() -> None:
    """Every pair split 1-1: resampling pairs (the unit) always gives 12-12; resampling games would not."""
    split_pairs = [GameResult(*(("x", "y") if k % 2 == 0 else ("y", "x")), k // 2, "x") for k in range(24)]
    boot = bootstrap_ratings(split_pairs, rounds=200, anchor=None)
    assert boot["x"][1] == pytest.approx(boot["x"][2])
    # The table's interval does not take that zero width at face value: the profile likelihood is its floor.
    honest = rating_intervals(split_pairs, rounds=200)["x"]
    assert honest.high - honest.low > 100
    assert honest.interval_method == PROFILE_LIKELIHOOD


def test_rating_intervals_use_the_pair_bootstrap_when_it_is_wider() -> None:
    games = _synthetic({"random": 0, "medium": 200, "strong": 400}, 40, seed=5)
    out = rating_intervals(games, rounds=300, seed=1)
    boot = bootstrap_ratings(games, rounds=300, seed=1, anchor=None)
    profile = profile_intervals(games)
    for p, r in out.items():
        assert r.low == pytest.approx(min(boot[p][1], profile[p][1]))
        assert r.high == pytest.approx(max(boot[p][2], profile[p][2]))
        assert r.interval_method in (BOOTSTRAP_PAIRS, PROFILE_LIKELIHOOD, f"{BOOTSTRAP_PAIRS}+{PROFILE_LIKELIHOOD}")
        assert r.open is None
