"""Racing's stopping rule, pure over counts (no simulator; issue 48)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wolfeclick.analysis.racing import Tally, band, interval, leader, next_round, settled, still_racing, uniform_width


def _overlaps_leader(tallies: list[Tally], live: list[bool], i: int) -> bool:
    top = leader(tallies, live)
    assert top is not None
    return interval(tallies[i])[1] >= interval(tallies[top])[0]


def test_an_option_stops_only_when_its_interval_lies_wholly_below_the_leaders() -> None:
    tallies = [Tally(8, 8), Tally(0, 8), Tally(5, 8), Tally(2, 8)]
    assert interval(tallies[3])[1] < interval(tallies[0])[0]  # 2/8 reaches 0.59, 8/8 starts at 0.68
    assert still_racing(tallies, [True] * 4) == [True, False, True, False]
    assert still_racing(tallies, [True, True, False, True]) == [True, False, False, False]  # stopped stays stopped


def test_the_leader_is_the_best_live_mean_and_never_stops() -> None:
    tallies = [Tally(3, 8), Tally(7.5, 8), Tally(7.5, 8)]
    assert leader(tallies, [True] * 3) == 1 and leader(tallies, [True, False, True]) == 2
    assert leader(tallies, [False] * 3) is None
    assert still_racing([Tally(0, 8)], [True]) == [True]


def test_rounds_give_live_options_a_batch_up_to_the_budget_and_end_with_one_left() -> None:
    tallies = [Tally(30, 60), Tally(28, 60), Tally(0, 8)]
    assert next_round(tallies, [True, True, False], budget=64, batch=8) == [4, 4, 0]
    assert next_round(tallies, [True, False, False], budget=64) == [0, 0, 0]
    assert next_round([Tally(1, 8)], [True], budget=16) == [8]  # a lone legal option is valued to the budget
    assert next_round([Tally(1, 16)], [True], budget=16) == [0]


def test_a_spread_ends_the_race_once_every_live_interval_fits_in_it_and_drops_nothing() -> None:
    lost = [Tally(0, 32), Tally(1, 32), Tally(0, 32)]
    assert band(lost, [True] * 3) < 0.16 and band([Tally(0, 0)], [True]) == 1.0
    assert next_round(lost, [True] * 3, budget=64, spread=0.16) == [0, 0, 0]
    assert next_round(lost, [True] * 3, budget=64, spread=0.0) == [8, 8, 8]
    assert next_round([Tally(0, 8), Tally(8, 8)], [True, True], budget=64, spread=0.15) == [8, 8]


def test_a_win_probability_settles_at_the_target_width_or_the_budget() -> None:
    width = uniform_width(64)
    assert 0.23 < width < 0.24
    assert settled(Tally(16, 16), width, 64) and not settled(Tally(8, 16), width, 64)
    assert settled(Tally(32, 64), width, 64) and not settled(Tally(0, 0), width, 64)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=64, max_size=64), min_size=1, max_size=9),
       st.integers(1, 16), st.integers(1, 64), st.sampled_from([0.0, 0.15, 0.3]))
def test_racing_over_any_outcomes_never_stops_an_option_that_overlaps_the_leader(
        outcomes: list[list[float]], batch: int, budget: int, spread: float) -> None:
    """Run whole races over random outcome sequences: every stop is justified at the moment it happens."""
    n = len(outcomes)
    tallies = [Tally(0, 0)] * n
    live = [True] * n
    while True:
        plan = next_round(tallies, live, budget, batch, spread)
        if not any(plan):
            break
        tallies = [Tally(sum(outcomes[i][:t.n + more]), t.n + more) for i, (t, more) in enumerate(zip(tallies, plan))]
        after = still_racing(tallies, live)
        for i in range(n):
            if live[i] and not after[i]:
                assert not _overlaps_leader(tallies, live, i)
            if live[i] and _overlaps_leader(tallies, live, i):
                assert after[i]
        assert after[leader(tallies, live)]  # type: ignore[index]
        live = after
    assert sum(live) >= 1 and all(t.n <= budget for t in tallies)
