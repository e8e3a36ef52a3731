"""The simulator's startup snapshot (``wolfeclick/sim/snapshot.js``, ``snapshot.py``): a simulator started from it
plays the same bytes as one started plainly, in the formats the snapshot loaded and in one it did not; a blob is
built once and kept; a blob that will not start, or a build that fails, means plain starts (noted, not retried),
never a failure."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.helpers import identity
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.sim.process import SHOWDOWN_DIR, SimProcess, SimulatorError, node_executable
from wolfeclick.sim.snapshot import KEPT, blob_path, ensure_blob, failure_path


async def _battle(fmt: str, snapshot: bool | None, seed: int = 515151) -> tuple[str, str]:
    """(how a fresh simulator started, the identity of one seeded battle it played)."""
    process = SimProcess(snapshot=snapshot)
    await process.start()
    try:
        recording = await play_battle(make_policy("heuristic"), make_policy("maxdamage"), format_id=fmt, seed=seed,
                                      process=process)
    finally:
        await process.close()
    return process.info["start"], identity(recording)


@pytest.mark.parametrize("fmt", ["gen9randombattle", "gen4randombattle", "gen1randombattle"])
def test_a_simulator_started_from_the_snapshot_plays_the_same_battle_as_a_plain_one(fmt: str) -> None:
    """gen9 and gen4 are loaded into the snapshot; gen1 is not, and loads while the battle starts (through the
    snapshot's own module loader)."""
    snap, played = asyncio.run(_battle(fmt, True))
    plain, again = asyncio.run(_battle(fmt, False))
    assert (snap, plain) == ("snapshot", "plain")
    assert played == again


_PIKACHU = "Pikachu\nAbility: Static\nEVs: 4 HP\n- Thunderbolt\n- "
LEARNSET_TEAMS = {fmt: (_PIKACHU + "Spore", _PIKACHU + "Quick Attack") for fmt in ("gen9ou", "gen4ou", "gen3ou")}
"""A move Pikachu never learns, and a legal set: judged by the team validator from the species' learnsets, which
the snapshot does not hold (loaded on first use; gen3 is not in the snapshot and inherits gen4's)."""


async def _judgements(snapshot: bool) -> tuple[str, list[str]]:
    process = SimProcess(snapshot=snapshot)
    await process.start()
    said = []
    try:
        for fmt, teams in LEARNSET_TEAMS.items():
            for team in teams:
                try:
                    said.append(str((await process.call("validate-team", format=fmt, team=team))["team"]))
                except SimulatorError as exc:
                    said.append(str(exc))
        battle = await play_battle(make_policy("heuristic"), make_policy("maxdamage"), format_id="gen4randombattle",
                                   seed=515152, process=process)
        said.append(identity(battle))
    finally:
        await process.close()
    return process.info["start"], said


def test_the_team_validator_reads_the_same_learnsets_from_a_snapshot_as_from_a_plain_start() -> None:
    """The snapshot leaves the learnsets out (only the validator reads them); they load on first use, the same."""
    snap, from_snapshot = asyncio.run(_judgements(True))
    plain, from_plain = asyncio.run(_judgements(False))
    assert (snap, plain) == ("snapshot", "plain")
    assert from_snapshot == from_plain
    assert [("Spore" in said, "learn" in said) for said in from_plain[:6:2]] == [(True, True)] * 3
    assert not any("refused" in said for said in from_plain[1:6:2])


@pytest.fixture()
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WOLFECLICK_CACHE", str(tmp_path))
    monkeypatch.setenv("WOLFECLICK_SHOWDOWN", str(SHOWDOWN_DIR))
    return tmp_path


def test_the_blob_is_built_on_first_use_and_kept(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """And the older blobs of other Node, Showdown or source versions but the three newest are removed."""
    blob = blob_path(node_executable(), SHOWDOWN_DIR)
    assert blob.is_relative_to(own_cache) and not blob.exists()
    blob.parent.mkdir(parents=True)
    older = [blob.with_name(f"bridge-{n:024d}.blob") for n in range(5)]
    for age, old in enumerate(older):
        old.write_bytes(b"an older blob")
        os.utime(old, ns=(10**18 - age * 10**12, 10**18 - age * 10**12))  # older[0] the newest of them
    first = asyncio.run(_battle("gen9randombattle", None))
    assert first[0] == "snapshot" and blob.is_file()
    assert sorted(blob.parent.glob("bridge-*.blob")) == sorted([blob, *older[:KEPT - 1]])
    built = blob.stat().st_mtime_ns
    assert asyncio.run(_battle("gen9randombattle", None)) == first
    assert blob.stat().st_mtime_ns == built and not list(blob.parent.glob("*.tmp"))

    monkeypatch.setenv("WOLFECLICK_SIM_SNAPSHOT", "0")
    assert asyncio.run(_battle("gen9randombattle", None)) == ("plain", first[1])


def test_setup_builds_the_blob(own_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wolfeclick.cli import main

    assert main(["setup"]) == 0
    assert capsys.readouterr().out.strip() == str(SHOWDOWN_DIR)
    assert blob_path(node_executable(), SHOWDOWN_DIR).is_file()


def test_a_blob_that_will_not_start_means_plain_starts_from_then_on(own_cache: Path) -> None:
    blob = blob_path(node_executable(), SHOWDOWN_DIR)
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"not a V8 startup snapshot" * 100)
    start, played = asyncio.run(_battle("gen4randombattle", True))
    assert start == "plain"
    assert not blob.exists() and "would not start" in failure_path(blob).read_text()
    assert asyncio.run(_battle("gen4randombattle", True)) == ("plain", played)  # not built again
    assert not blob.exists()


def test_a_build_that_fails_is_noted_once_and_costs_nothing_but_speed(own_cache: Path, tmp_path: Path) -> None:
    broken = tmp_path / "builder.js"
    broken.write_text("throw new Error('no snapshot today');\n")
    node = node_executable()
    assert asyncio.run(ensure_blob(node, SHOWDOWN_DIR, builder=broken)) is None
    blob = blob_path(node, SHOWDOWN_DIR, builder=broken)
    assert "no snapshot today" in failure_path(blob).read_text()
    broken.write_text("throw new Error('tried again');\n")  # a changed builder is a new blob: tried once more
    assert asyncio.run(ensure_blob(node, SHOWDOWN_DIR, builder=broken)) is None
    assert "tried again" in failure_path(blob_path(node, SHOWDOWN_DIR, builder=broken)).read_text()
    assert "no snapshot today" in failure_path(blob).read_text()  # and the first failure is not retried
    assert not list(blob.parent.glob("*.blob")) and not list(blob.parent.glob("*.tmp"))
