"""Issue 31 in a real browser (headless Debian Chromium): an analysed replay shows its win-probability chart, the
turning points and mistakes marked on it, and the option table of a valued decision (screenshot in docs/)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from test_ui_support import CHROMIUM, SAMPLE_ID, Browser, sample_data, server  # noqa: F401 (fixture)

from wolfeclick.analysis.core import analyse
from wolfeclick.analysis.schema import save_analysis
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.specs import make_policy
from wolfeclick.sim.process import SimPool

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

ROOT = Path(__file__).resolve().parents[1]
ANALYSED_ID = "analysed-" + SAMPLE_ID
CARD = "document.querySelector('#wc-replays-rescores .wc-analysis')"


@pytest.fixture(scope="module")
def analysed(server):  # noqa: F811
    """A copy of the sample recording in the app's folder, analysed (K = 4) with p1's options at its third choice."""
    data = sample_data()
    data["id"] = ANALYSED_ID
    recording = Recording.model_validate(data)
    (server.recordings / f"{ANALYSED_ID}.json").write_text(recording.to_json(), encoding="utf-8")

    step = [t.index for t in recording.turns if "p1" in t.decisions][2]

    async def go():
        async with SimPool(1) as pool:
            return await analyse(recording, make_policy("heuristic"), pool=pool, k=4, seed=1, options=("p1",),
                                 at=[step])

    analysis = asyncio.run(go())
    save_analysis(analysis, server.recordings)
    return analysis, step


def test_an_analysed_replay_shows_its_chart_marks_and_option_table(server, analysed):  # noqa: F811
    analysed, step = analysed
    with Browser() as browser:
        browser.open(f"{server.url}?replay={ANALYSED_ID}&turn=2")
        browser.wait_for(f"{CARD}?.querySelector('svg.wc-an-chart') != null", timeout=60)
        assert browser.evaluate(f"{CARD}.querySelectorAll('polyline.wc-an-line').length") == 2  # one per side
        assert browser.evaluate(f"{CARD}.querySelectorAll('polygon.wc-an-band').length") == 2  # their intervals
        marks = browser.evaluate(f"[...{CARD}.querySelectorAll('.wc-an-turning')].map(e => e.dataset.index)")
        assert marks == [str(p.index) for p in analysed.turning_points]
        listed = browser.evaluate(f"[...{CARD}.querySelectorAll('.wc-an-turning-list li')].map(e => e.dataset.index)")
        assert listed == marks
        assert browser.evaluate(f"{CARD}.querySelectorAll('.wc-an-mistake').length") == len(analysed.mistakes)
        table = analysed.decisions[step].options["p1"]
        rows = browser.evaluate(f"[...{CARD}.querySelectorAll('.wc-an-options[data-index=\"{step}\"] tbody tr')]"
                                ".map(r => r.children[1].textContent)")
        assert rows == [f"{o.action.action} {o.action.choice}" for o in table.options]
        played = browser.evaluate(f"{CARD}.querySelector('tr.wc-an-played').children[1].textContent")
        assert played == f"{table.played.action} {table.played.choice}"
        assert "sees both teams" in browser.evaluate(f"{CARD}.textContent")
        browser.evaluate(f"{CARD}.scrollIntoView()")
        browser.screenshot(ROOT / "docs" / "screenshot-analysis.png")
