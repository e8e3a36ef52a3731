"""The simulator's compile cache (``wolfeclick/sim/compile_cache.js``): a simulator process keeps V8's compiled code
for Showdown's modules on disk for the next one, which then compiles nothing it can read, and plays the same bytes.
A cache entry that does not fit (here: garbage) is rejected by V8, compiled afresh and rewritten."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.helpers import identity
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.sim.install import compile_cache_dir
from wolfeclick.sim.process import SHOWDOWN_DIR, SimProcess

pytestmark = pytest.mark.fresh_simulators  # each test reads what fresh processes compiled or read


async def _hello_and_battle() -> tuple[dict[str, int], str]:
    """A fresh simulator's compile-cache counts at ``hello`` and one seeded battle it plays (its recording but for
    the measured times)."""
    process = SimProcess(snapshot=False)  # the cache serves a plain start (a snapshot start loads no module files)
    await process.start()
    try:
        counts = dict(process.info["compile_cache"])
        recording = await play_battle(make_policy("heuristic"), make_policy("maxdamage"), format_id="gen9randombattle",
                                      seed=424242, process=process)
    finally:
        await process.close()  # a normal exit: the process writes the entries it compiled
    return counts, identity(recording)


def test_a_second_simulator_reads_the_first_ones_compiled_code_and_plays_the_same_battle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WOLFECLICK_CACHE", str(tmp_path))
    monkeypatch.setenv("WOLFECLICK_SHOWDOWN", str(SHOWDOWN_DIR))
    folder = compile_cache_dir()
    assert folder.is_relative_to(tmp_path)

    first, played = asyncio.run(_hello_and_battle())
    assert first["read"] == 0 and first["compiled"] > 10  # Showdown's modules, required before `hello`
    entries = sorted(folder.glob("*/*.bin"))
    assert len(entries) > first["compiled"]  # and the data modules the battle loaded later
    assert not list(folder.glob("*/*.tmp"))

    second, again = asyncio.run(_hello_and_battle())
    assert second == {"read": first["compiled"], "compiled": 0}
    assert again == played

    for entry in entries:  # garbage in every entry: V8 rejects each, the modules compile as usual
        entry.write_bytes(b"not V8's code cache" * 8)
    third, once_more = asyncio.run(_hello_and_battle())
    assert third == {"read": 0, "compiled": first["compiled"]}
    assert once_more == played
    assert all(entry.stat().st_size > 200 for entry in entries)  # rewritten at its exit

    fourth, _ = asyncio.run(_hello_and_battle())
    assert fourth["compiled"] == 0


def test_a_cache_folder_that_cannot_be_written_costs_nothing_but_speed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache's folder would be")
    monkeypatch.setenv("WOLFECLICK_CACHE", str(blocked))
    monkeypatch.setenv("WOLFECLICK_SHOWDOWN", str(SHOWDOWN_DIR))
    first, played = asyncio.run(_hello_and_battle())
    second, again = asyncio.run(_hello_and_battle())
    assert first["compiled"] > 10 and second == first and again == played
