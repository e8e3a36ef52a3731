"""What the import's speed work rests on (issue 63, item 4): one import leaves no cyclic garbage, so the cyclic
collector can stay off while a file is imported; the reward view made from a snapshot's reading of the team is the
view read off the battle itself; the views a caller names are the only ones read; a server log's battle is asked of
the simulator in one request, and gives what a request per decision gives, even where the runner leaves its input
log (then it is asked call by call)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from wolfeclick.game.reward import reward_view
from wolfeclick.game.snapshot import side_snapshot, side_snapshot_read
from wolfeclick.interop.folder import collector_paused
from wolfeclick.interop.public import clean_log, player_names, replay_public
from wolfeclick.interop.serverlog import SimHost, resimulate_server_log
from wolfeclick.interop.showdown import decision_points
from wolfeclick.sides import SIDES, other
from wolfeclick.sim.process import SimProcess, SimulatorError

DATA = Path(__file__).parent / "data" / "interop"
PUBLIC = ("showdown_hostile.log", "showdown_replay.html", "showdown_doubles.log")
"""A protocol log, a page and a refused (doubles) log: none starts a simulator."""
CREATED = "2026-01-01T00:00:00+00:00"


GARBAGE_PROBE = """
import collections, gc, sys
from pathlib import Path
from wolfeclick.interop.folder import import_data
data = Path(sys.argv[1]).read_bytes()
import_data(data, sys.argv[2])  # first: caches filled (format data, validators)
gc.collect()
gc.disable()
gc.set_debug(gc.DEBUG_SAVEALL)
outcome = import_data(data, sys.argv[2])
found = gc.collect()
kinds = collections.Counter(type(o).__name__ for o in gc.garbage)
print(bool(outcome.id or outcome.error), found, dict(kinds.most_common(8)))
"""


@pytest.mark.process
@pytest.mark.parametrize("name", PUBLIC)
def test_one_import_leaves_no_cyclic_garbage(name: str) -> None:
    """In a fresh interpreter: in the suite's long-lived worker, threads that earlier tests left (a Chromium's
    output reader, Ray's clients) make garbage of their own while the import runs (49 objects, once in a full run)."""
    run = subprocess.run([sys.executable, "-c", GARBAGE_PROBE, str(DATA / name), CREATED],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split(" ", 2)[:2] == ["True", "0"], run.stdout


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


class _Counted:
    """A real simulator whose requests are counted by op; with ``old`` it refuses ``replay`` as a bridge without
    that request would, so the import asks it call by call (the way every server log was imported before)."""

    def __init__(self, process: SimProcess, old: bool = False) -> None:
        self.process = process
        self.old = old
        self.ops: list[str] = []

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        self.ops.append(op)
        if op == "replay" and self.old:
            raise SimulatorError("simulator refused replay: unknown op replay")
        return await self.process.call(op, **fields)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.process, name)


def _server_variants() -> dict[str, dict[str, Any]]:
    """The server fixture, and its input log ended early in the ways a server ends one (a forfeit, a forced win, a
    battle cut short) or with a choice the simulator refuses; without the file's log, which no longer matches."""
    raw = json.loads((DATA / "showdown_server.json").read_text())
    lines = raw["inputLog"]
    cut = [i for i, line in enumerate(lines) if line.startswith(">p2 ")][5] + 1
    bare = {key: value for key, value in raw.items() if key != "log"}
    return {
        "whole": raw,
        "forfeit": {**bare, "inputLog": [*lines[:cut], ">forcelose p2"]},
        "forcewin": {**bare, "inputLog": [*lines[:cut], ">forcewin p1"]},
        "short": {**bare, "inputLog": lines[:cut]},
        "refused": {**bare, "inputLog": [*lines[:cut], ">p1 move 9", *lines[cut:]]},
    }


async def _both_ways(raw: dict[str, Any], process: SimProcess) -> tuple[Any, list[str], Any, list[str]]:
    data = json.dumps(raw).encode()
    new, old = _Counted(process), _Counted(process, old=True)
    now = await resimulate_server_log(raw, data, process=new)  # type: ignore[arg-type]
    before = await resimulate_server_log(raw, data, process=old)  # type: ignore[arg-type]
    return now, new.ops, before, old.ops


@pytest.fixture(scope="module")
def host() -> Iterator[SimHost]:
    """One simulator for the module's server logs (on a loop of its own thread, as an import's)."""
    with SimHost() as shared:
        yield shared


def _same(a: Any, b: Any) -> bool:
    if a.recording is None or b.recording is None:
        return a.recording is b.recording and a.problem == b.problem
    return a.problem == b.problem and a.recording.model_copy(update={"created": CREATED}).to_json() \
        == b.recording.model_copy(update={"created": CREATED}).to_json()


@pytest.mark.battles
def test_a_server_log_is_asked_of_the_simulator_in_one_request(host: SimHost) -> None:
    """Its input log holds every choice, so the simulator plays it in one go; a request per decision cost the
    simulator more than the battle itself, and the import as much again."""
    raw = _server_variants()["whole"]
    now, ops, before, old_ops = host.run(lambda process: _both_ways(raw, process))
    assert ops == ["replay"]
    assert old_ops[:2] == ["replay", "start"] and old_ops.count("write") > 20
    assert now.problem is None and now.recording is not None and _same(now, before)


@pytest.mark.battles
@pytest.mark.parametrize("name", ["forfeit", "forcewin", "short", "refused"])
def test_an_input_log_the_runner_leaves_gives_what_call_by_call_gives(host: SimHost, name: str) -> None:
    """A forfeit the input log says is answered from the one request too; where the runner sends what the input
    log does not hold (the loser of a forced win, a side with no choice left, after a refused choice), it is asked
    again call by call, and the outcome is the one that way gives."""
    raw = _server_variants()[name]
    now, ops, before, _ = host.run(lambda process: _both_ways(raw, process))
    assert _same(now, before)
    if name == "forfeit":
        assert ops == ["replay"] and now.recording is not None and now.recording.result.reason == "forfeit"
    else:
        assert ops[:2] == ["replay", "start"]
    if name == "forcewin":
        assert now.recording is not None and now.recording.result.reason == "forfeit"
    if name in ("short", "refused"):
        assert now.recording is None and now.problem
