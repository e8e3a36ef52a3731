"""Battle analysis in a real browser (headless Debian Chromium): an analysed replay shows its win-probability chart,
the turning points and mistakes marked on it, and the option table of a valued decision (screenshot in docs/;
issue 31)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from devkit.browser import CHROMIUM, PAGE_IDLE, Browser, frames
from devkit.samples import SAMPLE_ID, sample_data
from wolfeclick.analysis.core import analyse, mistakes
from wolfeclick.analysis.schema import Analysis, analysis_path, save_analysis
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SimPool

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

ROOT = Path(__file__).resolve().parents[1]
ANALYSED_ID = "analysed-" + SAMPLE_ID
MARKED_ID = "marked-" + SAMPLE_ID
CARD = "document.querySelector('#wc-replays-rescores .wc-analysis')"
VIEW = "document.querySelector('#wc-replays-viewer')"


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots go: docs/ with UPDATE_SCREENSHOTS=1, else a temporary folder (a test run must not
    rewrite tracked files: every run left docs/screenshot-analysis*.png modified)."""
    return ROOT / "docs" if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path_factory.mktemp("shots")


@pytest.fixture(scope="module")
def analysed(server):
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


@pytest.fixture(scope="module")
def marked(server, analysed):
    """Another copy, whose analysis is the one above with the played option at the valued decision called a mistake:
    four rollouts rarely separate two intervals, and the views need one to mark (the rule is tested in
    test_analysis.py)."""
    analysis, step = analysed
    data = sample_data()
    data["id"] = MARKED_ID
    (server.recordings / f"{MARKED_ID}.json").write_text(Recording.model_validate(data).to_json(), encoding="utf-8")
    decisions = [d.model_copy(deep=True) for d in analysis.decisions]
    decisions[step].options["p1"].mistake = True
    marked = analysis.model_copy(update={"recording": MARKED_ID, "decisions": decisions,
                                         "mistakes": mistakes(decisions)})
    save_analysis(marked, server.recordings)
    return marked, step


def test_an_analysed_replay_shows_its_chart_marks_and_option_table(server, analysed, shots):
    analysed, step = analysed
    with Browser() as browser:
        browser.open(f"{server.url}?replay={ANALYSED_ID}&turn=2")
        browser.wait_for(f"{CARD}?.querySelector('svg.wc-an-chart') != null", timeout=60)
        assert browser.evaluate(f"{CARD}.querySelectorAll('polyline.wc-an-line').length") == 1  # p1's chance
        assert browser.evaluate(f"{CARD}.querySelectorAll('polygon.wc-an-band').length") == 1  # its interval
        marks = browser.evaluate(f"[...{CARD}.querySelectorAll('.wc-an-turning')].map(e => e.dataset.index)")
        assert marks == [str(p.index) for p in analysed.turning_points]
        listed = browser.evaluate(f"[...{CARD}.querySelectorAll('.wc-an-turning-list li')].map(e => e.dataset.index)")
        assert listed == marks
        assert browser.evaluate(f"{CARD}.querySelectorAll('.wc-an-mistake').length") == len(analysed.mistakes)
        # issue 47 (1): the card lists no option table (they buried the viewer); the shown decision's is in its panel
        assert browser.evaluate(f"{CARD}.querySelectorAll('.wc-an-options').length") == 0
        assert "option table shows in the decision panel" in browser.evaluate(f"{CARD}.textContent")
        assert "sees both teams" in browser.evaluate(f"{CARD}.textContent")
        browser.evaluate(f"{CARD}.scrollIntoView()")
        browser.screenshot(shots / "screenshot-analysis.png")


def test_the_turn_list_marks_turning_points_and_mistakes_and_the_decision_panel_shows_the_options(
        server, marked, shots):
    analysed, step = marked
    assert analysed.mistakes and analysed.turning_points
    with Browser() as browser:
        browser.open(f"{server.url}?replay={MARKED_ID}&turn=1")
        browser.wait_for(f"{VIEW}?.querySelector('.wc-turnlist li') != null", timeout=60)
        marked = browser.evaluate(f"[...{VIEW}.querySelectorAll('.wc-turnlist li .wc-an-mark-turning')]"
                                  ".map(e => e.closest('li').dataset.step)")
        assert sorted(marked, key=int) == sorted(str(p.index) for p in analysed.turning_points)
        wrong = browser.evaluate(f"[...{VIEW}.querySelectorAll('.wc-turnlist li .wc-an-mark-mistake')]"
                                 ".map(e => [e.closest('li').dataset.step, e.title])")
        assert [int(s) for s, _ in wrong] == sorted({m.index for m in analysed.mistakes})
        played = analysed.decisions[step].options["p1"].played
        assert f"{played.action} {played.choice}" in wrong[0][1] and "mistake" in wrong[0][1]
        panel = f"{VIEW}.querySelector('[data-role=panel]')"
        assert browser.evaluate(f"{panel}.querySelector('.wc-an-options')") is None  # decision 0: not valued
        browser.click(f"{VIEW}.querySelector('.wc-turnlist li[data-step=\"{step}\"]')")
        browser.wait_for(f"{panel}.querySelector('.wc-an-options[data-index=\"{step}\"]') != null")
        rows = browser.evaluate(f"[...{panel}.querySelectorAll('.wc-an-options tbody tr')]"
                                ".map(r => r.children[1].textContent)")
        table = analysed.decisions[step].options["p1"]
        assert rows == [f"{o.action.action} {o.action.choice}" for o in table.options]
        assert browser.evaluate(f"{panel}.querySelector('tr.wc-an-played').children[1].textContent") == \
            f"{played.action} {played.choice}"
        browser.click(f"{VIEW}.querySelector('.wc-turnlist li[data-step=\"{step + 1}\"]')")
        browser.wait_for(f"{panel}.querySelector('.wc-an-options') == null")  # the next decision: none again
        browser.open(f"{server.url}?replay={ANALYSED_ID}&turn=1")  # the analysis as computed, for the screenshot
        browser.wait_for(f"{VIEW}?.querySelector('.wc-turnlist li[data-step=\"{step}\"]') != null", timeout=60)
        browser.click(f"{VIEW}.querySelector('.wc-turnlist li[data-step=\"{step}\"]')")
        browser.wait_for(f"{panel}.querySelector('.wc-an-options[data-index=\"{step}\"]') != null")
        browser.evaluate(f"{VIEW}.scrollIntoView()")
        browser.screenshot(shots / "screenshot-analysis-viewer.png")


def test_one_sign_means_one_thing_on_the_chart_its_legend_and_the_turn_list(server, marked):
    """Issue 65 (5): the chart's legend said "◆ mistake" (its mistakes are diamonds, its turning points circles) while
    the turn list marked turning points with ◆ and mistakes with "?!"."""
    analysed, _ = marked
    with Browser(1280, 800) as browser:
        browser.open(f"{server.url}?replay={MARKED_ID}&turn=1")
        browser.wait_for(f"{CARD}?.querySelector('svg.wc-an-chart') != null && "
                         f"{VIEW}?.querySelector('.wc-turnlist .wc-an-mark') != null", timeout=60)
        legend = browser.evaluate(f"{CARD}.querySelector('.wc-an-legend').textContent")
        assert "● turning point" in legend and "◆ mistake" in legend, legend
        assert browser.evaluate(f"[...{CARD}.querySelectorAll('svg .wc-an-turning')].every(e => e.tagName === 'circle')")
        signs = browser.evaluate(f"""[...{VIEW}.querySelectorAll('.wc-turnlist .wc-an-mark')]
            .map(e => [e.classList.contains('wc-an-mark-turning') ? 'turning' : 'mistake', e.textContent.trim()])""")
        assert {kind for kind, _ in signs} == {"turning", "mistake"}, signs
        assert all(sign == ("●" if kind == "turning" else "◆") for kind, sign in signs), signs
        heads = browser.evaluate(f"[...{CARD}.querySelectorAll('.wc-subhead')].map(e => e.textContent)")
        assert any(h.startswith("● Turning points") for h in heads) and any(h.startswith("◆ Mistakes") for h in heads)


APP_ID = "app-" + SAMPLE_ID
STATUS = "document.querySelector('#wc-analysis-status')"


def _open_controls(browser: Browser, url: str, k: int, options: str) -> None:
    """Open the replay and the accordion, then set K and the options.

    Gradio renders a closed accordion's children on its first open and, once their modules are loaded and a frame
    has passed, copies its stored values back into them: a K typed in that moment went back to 16 (a loaded CI run
    analysed 29 × 16 = 464 rollouts). So the accordion is opened first, the value is set once the replay is shown
    and nothing is in flight, and set again until a read after three frames shows it kept.
    """
    browser.open(url)
    browser.wait_for("[...document.querySelectorAll('.label-wrap')].some(l => l.textContent.includes("
                     "'Analyse this battle'))", timeout=60)
    browser.click("[...document.querySelectorAll('.label-wrap')].find(l => l.textContent.includes("
                  "'Analyse this battle'))")
    browser.wait_for("document.querySelector('#wc-analysis-k input') !== null", timeout=60)
    browser.wait_for(f"{VIEW}?.querySelector('.wc-turnlist li') != null", timeout=60)
    browser.wait_for(PAGE_IDLE, timeout=60)
    kept = f"document.querySelector('#wc-analysis-k input').value === '{k}' && " \
           f"document.querySelector('#wc-analysis-options input[value=\"{options}\"]').checked"
    for _ in range(5):
        frames(browser, 3)
        if browser.evaluate(kept):
            break
        browser.evaluate(f"""(() => {{ const i = document.querySelector('#wc-analysis-k input'); i.value = '{k}';
            i.dispatchEvent(new Event('input', {{bubbles: true}}));
            i.dispatchEvent(new Event('change', {{bubbles: true}}));
            document.querySelector('#wc-analysis-options input[value="{options}"]').click(); }})()""")
        browser.wait_for(PAGE_IDLE, timeout=60)
    assert browser.evaluate(kept), browser.evaluate("document.querySelector('#wc-analysis-k input').value")


@pytest.fixture(scope="module")
def app_replay(server):
    """Another copy of the sample recording, with no analysis yet, for the app to analyse."""
    data = sample_data()
    data["id"] = APP_ID
    (server.recordings / f"{APP_ID}.json").write_text(Recording.model_validate(data).to_json(), encoding="utf-8")
    return server.recordings


def test_analyse_from_the_app_shows_progress_then_the_analysis(server, app_replay):
    stored = analysis_path(app_replay, APP_ID, "heuristic", 1, 0)
    assert not stored.exists()
    with Browser() as browser:
        _open_controls(browser, f"{server.url}?replay={APP_ID}", 1, "none")
        browser.click("document.querySelector('#wc-analysis-start')")
        total = browser.wait_for(f"{STATUS}?.querySelector('progress.wc-an-progress')?.max > 1 && "
                                 f"{STATUS}.querySelector('progress.wc-an-progress').max", timeout=60)
        decisions = len(Recording.model_validate(sample_data()).turns)
        assert int(total) == decisions  # K = 1: one rollout per decision
        browser.wait_for(f"{STATUS}?.textContent.includes('Finished')", timeout=240)
        assert APP_ID in browser.evaluate(f"{STATUS}.textContent")  # the summary line of the battle
        browser.wait_for(f"{CARD}?.querySelector('svg.wc-an-chart') != null", timeout=60)
        assert "K = 1," in browser.evaluate(f"{CARD}.textContent")
        assert browser.evaluate(f"{VIEW}.querySelectorAll('.wc-turnlist .wc-an-mark-turning').length") >= 1
    assert stored.exists() and Analysis.model_validate_json(stored.read_bytes()).k == 1


def test_stopping_an_analysis_in_the_app_writes_nothing(server, app_replay):
    with Browser() as browser:
        _open_controls(browser, f"{server.url}?replay={APP_ID}", 64, "both")
        browser.click("document.querySelector('#wc-analysis-start')")
        browser.wait_for(f"{STATUS}?.querySelector('progress.wc-an-progress')?.value >= 1", timeout=120)
        browser.click("document.querySelector('#wc-analysis-stop')")
        browser.wait_for(f"{STATUS}?.textContent.includes('Stopped after')", timeout=120)
        assert "nothing was written" in browser.evaluate(f"{STATUS}.textContent")
    assert not analysis_path(app_replay, APP_ID, "heuristic", 64, 0).exists()
