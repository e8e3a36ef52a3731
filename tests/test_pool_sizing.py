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


# --- the sizer's measurement: when it reads the CPU, and over how much -------------------------------------------
class FakePool:
    """What ``PoolSizer`` asks of a pool: its processes, their CPU, and growing."""

    def __init__(self) -> None:
        self.processes = [object()]
        self.grown: list[int] = []

    def cpu(self) -> float:  # read through the sizer's _now, which the test drives
        raise AssertionError("not read here")

    async def grow(self, size: int) -> None:
        self.grown.append(size)
        self.processes = [object()] * size


def drive(monkeypatch, battles: int, python_s, simulator_s, in_flight: int = 16, cores: int = 2):
    """Finish ``battles`` battles, battle i costing ``python_s(i)`` of this process's CPU and ``simulator_s(i)`` of
    the simulator's; return the pool (what it grew to) and the battle at which the sizer decided (None: never)."""
    import asyncio

    from wolfeclick.battle import batch

    monkeypatch.setattr(batch.os, "cpu_count", lambda: cores)
    pool = FakePool()
    sizer = batch.PoolSizer(pool, in_flight)  # type: ignore[arg-type]
    clock = [0.0, 0.0]
    monkeypatch.setattr(sizer, "_now", lambda: (clock[0], clock[1]))

    async def run() -> int | None:
        for i in range(battles):
            clock[0] += python_s(i)
            clock[1] += simulator_s(i)
            if await sizer.finished():
                return i
        return None

    return pool, asyncio.run(run())


def test_a_cold_simulator_does_not_win_a_second_process(monkeypatch) -> None:
    """A fresh simulator's first battles cost it two or three times the CPU of later ones (V8 still compiling
    Showdown): measured over battles 32-36 at 16 in flight (about 0.1 s of CPU, ten clock ticks), Python read as
    0.40-0.64 of the simulator against about 0.9 warm, and on this 2-core machine the pool grew to two simulators
    in 2 of 6 fresh starts, 14% slower than one. Here the first 100 battles are cold (Python a third of the
    simulator) and the rest warm (0.86): one simulator is right, and the sizer must keep it."""
    pool, decided = drive(monkeypatch, 600, lambda i: 0.012, lambda i: 0.036 if i < 100 else 0.014)
    assert pool.grown == [] and decided is not None and decided > 100


def test_a_cheap_python_side_still_gets_its_second_simulator_once_measured(monkeypatch) -> None:
    """Where Python costs a fifth of the simulator throughout, a second simulator is worth it: the sizer still
    grows the pool, after a window long enough to read (whole seconds of the simulator's CPU)."""
    pool, decided = drive(monkeypatch, 600, lambda i: 0.005, lambda i: 0.025)
    assert pool.grown == [2] and decided is not None
    assert decided * 0.025 >= 3.0  # not on a few ticks of CPU


def test_a_batch_too_short_to_measure_keeps_one_simulator(monkeypatch) -> None:
    pool, decided = drive(monkeypatch, 60, lambda i: 0.005, lambda i: 0.025)
    assert pool.grown == [] and decided is None
