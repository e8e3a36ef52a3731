"""What the public-log import's speed work rests on (issue 63, item 4): one import leaves no cyclic garbage, so the
cyclic collector can stay off while a file is imported; the reward view made from a snapshot's reading of the team
is the view read off the battle itself; the views a caller names are the only ones read."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from wolfeclick.game.reward import reward_view
from wolfeclick.game.snapshot import side_snapshot, side_snapshot_read
from wolfeclick.interop.folder import collector_paused, import_data
from wolfeclick.interop.public import clean_log, player_names, replay_public
from wolfeclick.interop.showdown import decision_points
from wolfeclick.sides import SIDES, other

DATA = Path(__file__).parent / "data" / "interop"
PUBLIC = ("showdown_hostile.log", "showdown_replay.html", "showdown_doubles.log")
"""A protocol log, a page and a refused (doubles) log: none starts a simulator."""
CREATED = "2026-01-01T00:00:00+00:00"


@pytest.mark.parametrize("name", PUBLIC)
def test_one_import_leaves_no_cyclic_garbage(name: str) -> None:
    data = (DATA / name).read_bytes()
    import_data(data, CREATED)  # first: caches filled (format data, validators)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        outcome = import_data(data, CREATED)
        found = gc.collect()
    finally:
        if was:
            gc.enable()
    assert outcome.id or outcome.error
    assert found == 0


def test_the_collector_is_paused_for_one_import_and_restored() -> None:
    was = gc.isenabled()
    try:
        gc.enable()
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()  # a caller that had it off keeps it off
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
        gc.enable()
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a refused file")
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def _log() -> list[str]:
    return clean_log((DATA / "showdown_hostile.log").read_text().split("\n"))[0]


def test_the_reward_view_from_a_snapshot_reading_is_the_battles_own() -> None:
    from wolfeclick.battle.tracker import SideTracker, split_lines

    log = _log()
    trackers = {side: SideTracker("t", side, side, "gen9randombattle") for side in SIDES}
    fed = points = 0
    for position, _, _ in decision_points(log) + [(len(log), 0, [])]:
        split = split_lines(log[fed:position])
        fed = position
        for side in SIDES:
            trackers[side].feed_parts(split)
        for side in SIDES:
            own, view = trackers[side].battle, trackers[other(side)].battle
            snapshot, reading = side_snapshot_read(own, view, {})
            assert snapshot == side_snapshot(own, view)
            assert reward_view(own, reading) == reward_view(own)
            points += 1
    assert points > 20


def test_only_the_named_views_are_read() -> None:
    log = _log()
    points = decision_points(log)
    positions = [p for p, _, _ in points] + [len(log)]
    names = player_names(log)
    every = replay_public(log, "gen9randombattle", names, positions)
    viewed = [tuple(deciding) for _, _, deciding in points] + [tuple(SIDES)]
    some = replay_public(log, "gen9randombattle", names, positions, viewed)
    assert any(len(sides) == 1 for sides in viewed)  # the log has points where one side alone decides
    for full, part, sides in zip(every, some, viewed):
        assert part.snapshot == full.snapshot
        assert part.views == {side: full.views[side] for side in sides}
