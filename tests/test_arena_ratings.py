"""Tests for wolfeclick.arena.ratings: Bradley–Terry, bootstrap and Glicko-2."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolfeclick.arena.ratings import (
    Glicko2Rating,
    bootstrap_ratings,
    bradley_terry,
    glicko2_run,
    glicko2_update,
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
