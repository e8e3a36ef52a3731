"""Simulator processes lent between users (``wolfeclick.sim.lending``): a closed process is kept, emptied of its
battles, and lent to the next start of the same program under another event loop; it plays what a fresh process
plays; a kept process that died, or another program's, is never lent; without a keeper nothing is kept."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import psutil
import pytest

from tests.helpers import identity
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.sim.lending import SimKeeper, lending
from wolfeclick.sim.process import SimProcess, SimulatorError

pytestmark = pytest.mark.fresh_simulators  # each test installs a keeper of its own

FORMAT = "gen9randombattle"
START = [f'>start {{"formatid": "{FORMAT}", "seed": [1, 2, 3, 4]}}',
         '>player p1 {"name": "a", "seed": [5, 6, 7, 8]}', '>player p2 {"name": "b", "seed": [9, 10, 11, 12]}']


@pytest.fixture()
def keeper() -> Iterator[SimKeeper]:
    own = SimKeeper(keep=2)
    token = lending.set(own)
    try:
        yield own
    finally:
        lending.reset(token)
        own.close()


async def _battle(seed: int, snapshot: bool | None = None) -> tuple[int, str]:
    """(the pid of the process it played on, the battle's identity)."""
    process = SimProcess(snapshot=snapshot)
    await process.start()
    pid = process.pid
    assert pid is not None
    try:
        recording = await play_battle(make_policy("heuristic"), make_policy("maxdamage"), format_id=FORMAT, seed=seed,
                                      process=process)
    finally:
        await process.close()
    return pid, identity(recording)


def test_a_closed_process_is_lent_to_the_next_start_under_another_loop_and_plays_the_same_bytes(
        keeper: SimKeeper) -> None:
    first_pid, first = asyncio.run(_battle(61))
    assert len(keeper.idle) == 1 and psutil.pid_exists(first_pid)
    again_pid, again = asyncio.run(_battle(61))
    other_pid, other = asyncio.run(_battle(62))
    assert again_pid == other_pid == first_pid and keeper.lent == 2
    assert again == first and other != first
    token = lending.set(None)
    try:
        fresh_pid, fresh = asyncio.run(_battle(62))
    finally:
        lending.reset(token)
    assert fresh_pid != first_pid and fresh == other


def test_a_lent_process_holds_no_battle_of_its_last_user(keeper: SimKeeper) -> None:
    async def leave_one_open() -> int:
        process = SimProcess()
        await process.start()
        await process.call("start", battle="left", format=FORMAT, lines=START)
        await process.call("snapshot", battle="left", snapshot="kept")
        await process.close()
        return process.info["pid"]

    async def next_user() -> tuple[int | None, list[str]]:
        process = SimProcess()
        await process.start()
        refused = []
        for op, fields in (("write", {"battle": "left", "lines": [">p1 move 1"]}),
                           ("fork", {"snapshot": "kept", "battle": "copy", "lines": []})):
            with pytest.raises(SimulatorError) as caught:
                await process.call(op, **fields)
            refused.append(str(caught.value))
        dropped = await process.call("reset")
        await process.close()
        return process.info["pid"], refused + [str({k: dropped[k] for k in ("battles", "snapshots")})]

    pid = asyncio.run(leave_one_open())
    again, said = asyncio.run(next_user())
    assert again == pid
    assert said == ["simulator refused write: no battle left", "simulator refused fork: no snapshot kept",
                    "{'battles': 0, 'snapshots': 0}"]


def test_another_programs_process_and_a_dead_one_are_never_lent(keeper: SimKeeper) -> None:
    snapshot_pid, played = asyncio.run(_battle(63, snapshot=True))
    plain_pid, plain = asyncio.run(_battle(63, snapshot=False))
    assert plain_pid != snapshot_pid and plain == played and len(keeper.idle) == 2
    os.kill(snapshot_pid, signal.SIGKILL)
    psutil.Process(snapshot_pid).wait(10)
    after_pid, after = asyncio.run(_battle(63, snapshot=True))
    assert after_pid not in (snapshot_pid, plain_pid) and after == played


def test_without_a_keeper_a_closed_process_ends_and_a_keeper_ends_what_it_kept() -> None:
    assert lending.get() is None
    pid, _ = asyncio.run(_battle(64))
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    own = SimKeeper()
    token = lending.set(own)
    try:
        kept_pid, _ = asyncio.run(_battle(64))
    finally:
        lending.reset(token)
    assert psutil.pid_exists(kept_pid)
    own.close()
    assert own.idle == [] and not psutil.pid_exists(kept_pid)


def test_where_there_is_no_pidfd_a_thread_sees_the_process_end(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(pid: int) -> int:
        raise OSError("pidfd_open refused here")

    monkeypatch.setattr(os, "pidfd_open", refused)

    async def killed() -> tuple[str, int | None]:
        process = SimProcess()
        await process.start()
        process.kill()
        with pytest.raises(SimulatorError) as caught:
            await asyncio.wait_for(process.call("format", format=FORMAT), 30)
        await process.close()
        return str(caught.value), process._proc.returncode if process._proc else None

    said, code = asyncio.run(killed())
    assert said.startswith("simulator process exited (code -9)") and code == -signal.SIGKILL


def test_a_process_that_ended_is_read_once_not_polled_for_ever(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ended process's pidfd stays readable: the loop must stop watching it once read. It did not at first, and
    the search's own loop (which keeps its killed processes) spun on one for as long as the Python process lived."""
    from wolfeclick.sim import lending as lending_module

    calls = []
    reap = lending_module.Attached._reap
    monkeypatch.setattr(lending_module.Attached, "_reap", lambda self: (calls.append(1), reap(self))[1])

    async def killed_and_left() -> int:
        process = SimProcess()
        await process.start()
        assert process._proc is not None
        process.kill()
        await process._proc.wait()
        for _ in range(200):  # many turns of the loop while the dead process is not closed yet
            await asyncio.sleep(0)
        seen = len(calls)
        await process.close()
        return seen

    assert asyncio.run(killed_and_left()) == 1
