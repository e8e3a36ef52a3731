"""The same battle played again keeps its id, in Live too (README, "Recordings never replace a different battle").

Live saves a battle as it goes (a checkpoint every few turns, marked interrupted); the first save claims the id. A
checkpoint of a battle is not the finished recording of that battle, so a replay of a seed that was played before
used to move to ``<id>-2`` at its first checkpoint, although its recording came out the same. Real battles on the
simulator, saved by the app's own saver."""

from __future__ import annotations

import asyncio
from pathlib import Path

from wolfeclick.battle.live_battles import PolicyCache, play_live
from wolfeclick.battle.store import RecordingSaver, load_recording, parse_recording, same_battle

SEED = 42  # long enough to be checkpointed (at least ten turn records) in the default format


async def _live(directory: Path, *, max_turns: int = 200) -> tuple[str, int]:
    """One Live battle (heuristic vs random, the walker's seed) saved into ``directory``: its id and turn records."""
    saver = RecordingSaver(directory)
    done = [event async for event in play_live("heuristic", "random", cache=PolicyCache(), saver=saver, seed=SEED,
                                               max_turns=max_turns) if event.kind == "done"]
    assert len(done) == 1 and not done[0].message, done
    recording = done[0].recording
    assert recording is not None
    return recording.id, len(recording.turns)


def test_live_plays_the_same_battle_again_under_its_own_id(tmp_path: Path) -> None:
    first, turns = asyncio.run(_live(tmp_path))
    assert turns >= 10, "the battle must be long enough to be checkpointed for this test to mean anything"
    before = (tmp_path / f"{first}.json").read_bytes()
    again, _ = asyncio.run(_live(tmp_path))
    assert again == first
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{first}.json"]
    # refreshed in place: the same battle, written again (its write time and measured latencies aside)
    assert same_battle(load_recording(tmp_path / f"{first}.json"), parse_recording(before))


def test_a_different_battle_under_that_id_still_moves_to_the_next_one(tmp_path: Path) -> None:
    """The first run stops at a turn limit past the first checkpoint: the second, whole battle starts as the first
    did (its checkpoint is the first's beginning) but ends otherwise, so it takes ``<id>-2`` and the first file is
    left as it was."""
    first, short = asyncio.run(_live(tmp_path, max_turns=12))
    assert short >= 10
    before = (tmp_path / f"{first}.json").read_bytes()
    again, turns = asyncio.run(_live(tmp_path))
    assert turns > short
    assert again == f"{first}-2"
    assert (tmp_path / f"{first}.json").read_bytes() == before
    assert load_recording(tmp_path / f"{again}.json").result.reason == "win"

