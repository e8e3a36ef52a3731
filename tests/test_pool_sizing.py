"""The rule that sizes a batch's simulator pool from measured CPU per turn (issue 49): pure, so no timing here."""

from __future__ import annotations

from wolfeclick.sim.process import processes_for


def test_one_battle_in_flight_never_gets_a_second_simulator() -> None:
    assert processes_for(2, 0.5, 3.0, in_flight=1) == 1
    assert processes_for(16, 0.5, 3.0, in_flight=1) == 1


def test_a_cheap_python_side_on_two_cores_gets_the_second_core() -> None:
    # one simulator caps at 1000/3.1 = 323 turns/s; two, 25% slower each, still reach 2000/(1.0 + 3.9) = 408
    assert processes_for(2, 1.0, 3.1, in_flight=16) == 2


def test_an_expensive_python_side_keeps_one_simulator() -> None:
    # issue 17's figures: 3.4 ms of Python a turn leaves the second core no room (the rate would fall)
    assert processes_for(2, 3.4, 4.4, in_flight=16) == 1


def test_a_small_gain_is_not_worth_a_process() -> None:
    # two would give 2000/(1.65 + 3.875) = 362 turns/s against 323: under the 15% asked
    assert processes_for(2, 1.65, 3.1, in_flight=16) == 1
    assert processes_for(2, 1.65, 3.1, in_flight=16, gain_needed=1.05) == 2


def test_many_cores_stop_where_python_can_feed_no_more() -> None:
    # Python caps at 1000/1.0 = 1000 turns/s: three simulators of 3 ms reach it, a fourth adds nothing
    assert processes_for(16, 1.0, 3.0, in_flight=16) == 3
    assert processes_for(16, 1.0, 3.0, in_flight=2) == 2


def test_only_the_ratio_of_the_two_figures_matters() -> None:
    assert processes_for(2, 1.0, 3.1, in_flight=16) == processes_for(2, 10.0, 31.0, in_flight=16)
    assert processes_for(2, 3.4, 4.4, in_flight=16) == processes_for(2, 0.34, 0.44, in_flight=16)


def test_nothing_measured_means_one_simulator() -> None:
    assert processes_for(2, 0.0, 3.0, in_flight=16) == 1
    assert processes_for(2, 1.0, 0.0, in_flight=16) == 1
