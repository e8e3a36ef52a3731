"""Live battles outside the UI (issue 32: "live-battle application logic out of ui/").

``wolfeclick.battle.live_battles`` plays a live battle as an async stream of events with nothing of ``wolfeclick.ui``
loaded; the UI's ``run_live`` only adds the page's view. (The layers' one-way rule for every module is
``tests/test_layers.py``'s table.)
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from wolfeclick.battle.live_battles import LiveError, PolicyCache, human_sides, play_live

ROOT = Path(__file__).resolve().parents[1]


def test_a_live_battle_plays_with_no_ui_loaded() -> None:
    script = (
        "import asyncio, json, sys\n"
        "from wolfeclick.battle.live_battles import PolicyCache, play_live\n"
        "async def main():\n"
        "    return [(e.kind, e.battle is not None, e.recording.result.reason if e.recording else None)\n"
        "            async for e in play_live('heuristic', 'random', cache=PolicyCache(), seed=7, max_turns=6)]\n"
        "events = asyncio.run(main())\n"
        "print(json.dumps({'events': events, 'ui': sorted(m for m in sys.modules\n"
        "                  if m.startswith('wolfeclick.ui') or m.split('.')[0] == 'gradio')}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    kinds = [kind for kind, _, _ in report["events"]]
    assert report["ui"] == []
    assert kinds[0] == "loading" and kinds[-1] == "done" and "turn" in kinds
    assert set(kinds) <= {"loading", "turn", "done"}
    assert all(has_battle for _, has_battle, _ in report["events"])  # cheap policies: the battle is known at once
    assert report["events"][-1][2] == "turn_limit"


def test_the_page_view_is_the_live_stream_plus_a_battle_view() -> None:
    from wolfeclick.ui.live_page import run_live

    async def main() -> tuple[list[str], int, int, bool]:
        kinds, turns, last = [], 0, None
        async for event in run_live("maxdamage", "random", cache=PolicyCache(), seed=3, max_turns=4):
            kinds.append(event.kind)
            turns += event.kind == "turn"
            last = event
        assert last is not None and last.view is not None
        return kinds, turns, len(last.view.turns), last.view.finished

    kinds, turns, shown, finished = asyncio.run(main())
    assert kinds[-1] == "done" and shown == turns and finished


def test_one_person_per_battle_and_a_missing_seat_is_one_line() -> None:
    with pytest.raises(LiveError, match="one side"):
        human_sides({"p1": "human", "p2": "human"})

    async def main() -> list[tuple[str, str]]:
        return [(e.kind, e.message) async for e in play_live("human", "random", cache=PolicyCache())]

    assert asyncio.run(main()) == [("error", "p1 is played by a person, but this run has no seat for them")]
