"""Only played battles count: a result the simulator was told (``>forcewin``, ``>forcelose``, ``>forcetie``) rather
than one the policies played out never enters the ratings, and an input log that goes on after a forced ending is
not a recording at all.

Before, an upload of ``>start``, two ``>player`` lines and ``>forcewin p1`` with the simulator's own log re-simulated
exactly, and twelve of them put ``preset:run1`` at #1 of the Leaderboard with no move played.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from wolfeclick.arena.history import scan_history, unplayed
from wolfeclick.arena.leaderboard import leaderboard
from wolfeclick.arena.verify import Verifications
from wolfeclick.battle.resim import spectator_log
from wolfeclick.battle.store import RecordingError, parse_recording
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.protocol import forced_ending
from wolfeclick.ui.library import Library

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"


def simulate(lines: list[str]) -> list[str]:
    """The spectator log the real simulator writes for ``lines``."""

    async def run() -> list[str]:
        process = SimProcess()
        await process.start()
        try:
            reply = await process.call("resim", lines=lines)
        finally:
            await process.close()
        return spectator_log(reply["out"])

    return asyncio.run(run())


def forged(ending: str, number: int, policy: str = "preset:run1") -> bytes:
    """A recording whose battle was ended by ``ending`` before any move, with the simulator's own log."""
    data = json.loads(SAMPLE.read_text())
    opening = [line.replace('"name":"heuristic"', f'"name":"forger{number}"') for line in data["inputlog"][:3]]
    data["inputlog"] = [*opening, ending]
    data["log"] = simulate(data["inputlog"])
    data["id"] = f"forged-{number}"
    data["players"]["p1"]["policy"] = policy
    data["players"]["p1"]["name"] = f"forger{number}"
    data["turns"] = []
    winner = {">forcewin p1": "p1", ">forcelose p2": "p1", ">forcewin p2": "p2", ">forcelose p1": "p2"}.get(ending)
    data["result"] = {"winner": winner, "reason": "win" if winner else "tie", "turns": 1, "error": None}
    return json.dumps(data).encode()


def test_forced_ending_names_the_line_or_none() -> None:
    assert forced_ending([">start {}", ">p1 move 1", ">forcewin p1"]) == ">forcewin p1"
    assert forced_ending([">start {}", ">forcetie"]) == ">forcetie"
    assert forced_ending([">start {}", ">p1 move 1", ">p2 switch 2"]) is None


def test_forged_forcewin_uploads_change_no_rating(tmp_path: Path) -> None:
    library = Library(tmp_path / "recordings")
    genuine, _ = library.upload(SAMPLE.read_bytes())
    fakes = [library.upload(forged(ending, number))[0].id
             for number, ending in enumerate([">forcewin p1", ">forcelose p2", ">forcetie"] * 2)]
    verify = Verifications(tmp_path / "results")
    scan = scan_history(None, [library.directory], verify=verify)
    assert scan.skipped == []  # every forged file is a readable recording the simulator reproduces...
    assert [e.battle for e in scan.entries] == [genuine.id]  # ...and still only the real battle counts
    forged_paths = [str(library.path(fake)) for fake in fakes]
    assert sorted(forged_paths) == sorted(scan.unrated)
    assert all("forced" in scan.reasons[p] for p in forged_paths)
    board = leaderboard(scan.entries, min_battles=1)
    assert all(row.policy != "preset:run1" for row in board.rows)


def test_an_ending_inside_the_input_log_is_not_a_recording() -> None:
    data = json.loads(SAMPLE.read_text())
    middle = len(data["inputlog"]) // 2
    data["inputlog"].insert(middle, ">forcewin p2")
    with pytest.raises(RecordingError, match="forcewin p2.*last"):
        parse_recording(json.dumps(data))


def test_unplayed_says_why_for_no_decision_and_for_a_forced_import() -> None:
    recording = parse_recording(forged(">forcewin p1", 0))
    assert unplayed(recording) is not None  # played here or not: no decision was made
    played = parse_recording(SAMPLE.read_bytes())
    assert unplayed(played) is None
