"""Analysing a battle in the Replays tab, in a real browser (headless Debian Chromium) at a desktop's 1280×800 and a
phone's 390×844 (issue 47):

1. an analysed replay with an option table at every decision keeps the battle near the top: the card above the viewer
   lists no tables (they put the viewer ~10,400 px down on desktop, ~15,400 px on a phone); the shown decision's
   table is in its panel, collapsible, and stays closed once closed;
6. a row clicked in *All recordings* (below the viewer) opens its battle in view.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from devkit.browser import CHROMIUM, PAGE_IDLE, Browser, frames, open_replay
from devkit.samples import SAMPLE_ID, sample_data
from wolfeclick.analysis.core import analyse, mistakes
from wolfeclick.analysis.schema import save_analysis
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SimPool
from wolfeclick.ui.library import LIST_HEADERS, LIST_WIDTHS

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

MANY_ID = "many-options-" + SAMPLE_ID
VIEW = "document.querySelector('#wc-replays-viewer')"
PANEL = f"{VIEW}.querySelector('[data-role=panel]')"
SIZES = [(1280, 800), (390, 844)]


@pytest.fixture(scope="module")
def server():
    """This file's app (in place of conftest's): its live battles wait 0.15 s between decisions, so a person can
    step back while one plays. Only the Live test here plays a live battle; one app serves them all (a second app
    for it cost a start of its own)."""
    from devkit.appserver import Server

    app = Server(pace=0.15)
    yield app
    app.stop(wait=False)


@pytest.fixture(scope="module")
def many(server) -> Recording:
    """The sample, analysed (K = 2) with p1's options at one decision, that table then given to every decision p1
    made: a battle valued throughout, as ``--options both`` makes one, without its hours of rollouts."""
    data = sample_data()
    data["id"] = MANY_ID
    recording = Recording.model_validate(data)
    (server.recordings / f"{MANY_ID}.json").write_text(recording.to_json(), encoding="utf-8")
    mine = [t.index for t in recording.turns if "p1" in t.decisions]

    async def go():
        async with SimPool(1) as pool:
            return await analyse(recording, make_policy("heuristic"), pool=pool, k=2, seed=1, options=("p1",),
                                 at=[mine[1]])

    analysis = asyncio.run(go())
    table = analysis.decisions[mine[1]].options
    decisions = [d.model_copy(update={"options": table}) if d.index in mine else d for d in analysis.decisions]
    save_analysis(analysis.model_copy(update={"decisions": decisions, "mistakes": mistakes(decisions)}),
                  server.recordings)
    assert len(mine) > 10
    return recording


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_an_analysed_replay_keeps_the_battle_near_the_top_and_one_table_beside_it(server, many, size) -> None:
    width, height = size
    with Browser(width, height) as browser:
        open_replay(browser, f"{server.url}?replay={MANY_ID}&turn=1", 1)
        browser.wait_for("document.querySelector('#wc-replays-rescores .wc-analysis svg') != null", timeout=60)
        frames(browser)
        assert browser.evaluate("document.querySelectorAll('#wc-replays-rescores .wc-an-options').length") == 0
        top = browser.evaluate(f"{VIEW}.getBoundingClientRect().top + window.scrollY")
        # the controls column stacks above the battle on a phone; the analysis card is a chart and two short lists
        assert top < 4 * height, f"the viewer starts {top:.0f} px down at {width}x{height}"
        step = next(t.index for t in many.turns if "p1" in t.decisions and t.index > 0)
        browser.click(f"{VIEW}.querySelector('.wc-turnlist li[data-step=\"{step}\"]')")
        browser.wait_for(f"{PANEL}.querySelector('details.wc-an-panel[open] .wc-an-options') != null")
        assert browser.evaluate(f"{VIEW}.querySelectorAll('.wc-an-options').length") == 1  # the shown one only
        browser.click(f"{PANEL}.querySelector('details.wc-an-panel > summary')")
        browser.wait_for(f"!{PANEL}.querySelector('details.wc-an-panel').open")
        later = next(t.index for t in many.turns if "p1" in t.decisions and t.index > step)
        browser.click(f"{VIEW}.querySelector('.wc-turnlist li[data-step=\"{later}\"]')")
        browser.wait_for(f"{PANEL}.querySelector('details.wc-an-panel .wc-an-options[data-index=\"{later}\"]') != null")
        assert browser.evaluate(f"{PANEL}.querySelector('details.wc-an-panel').open") is False  # closed stays closed


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_a_row_clicked_in_all_recordings_opens_its_battle_in_view(server, many, size) -> None:
    width, height = size
    with Browser(width, height) as browser:
        browser.open(server.url + "?tab=replays")
        cells = "[...document.querySelectorAll('#wc-replays-table [role=gridcell][data-col=\"0\"]')]"
        browser.wait_for(f"{cells}.length > 0", timeout=60)
        browser.wait_for(PAGE_IDLE, timeout=60)
        # the table renders the rows in its view only (Gradio's virtual list): it is brought into view first
        browser.evaluate("document.querySelector('#wc-replays-table').scrollIntoView({block: 'end'})")
        browser.wait_for(f"{cells}.length > 1", timeout=60)
        shown = browser.evaluate("window.__wcViewers?.replays?.state?.data?.id || ''")
        cell = f"{cells}.find(c => c.textContent.trim() !== {shown!r})"
        wanted = browser.evaluate(f"{cell}.textContent.trim()")
        browser.evaluate(f"{cell}.scrollIntoView({{block: 'center'}})")
        frames(browser)
        assert browser.evaluate(f"{VIEW}.getBoundingClientRect().top") < 0  # the viewer's top is scrolled away
        x, y = browser.evaluate(f"(r => [r.left + r.width / 2, r.top + r.height / 2])({cell}.getBoundingClientRect())")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):  # a person's click (Gradio reads the mouse)
            browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        browser.wait_for(f"window.__wcViewers?.replays?.state?.data?.id === {wanted!r}", timeout=60)
        browser.wait_for(f"(r => r.top > -5 && r.top < {height} / 2)({VIEW}.getBoundingClientRect())", timeout=30)


# --------------------------------------------------------------------------------------------------------------
# 5. The link box and the address bar name the shown decision once the page is idle
# --------------------------------------------------------------------------------------------------------------
KEYS = {"ArrowRight": 39, "ArrowLeft": 37, "Home": 36}
LIVE = "window.__wcViewers.live.state"
REPLAYS = "window.__wcViewers.replays.state"


def press(browser: Browser, key: str) -> None:
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=KEYS[key],
                     nativeVirtualKeyCode=KEYS[key])


def query_of(browser: Browser, state: str) -> str:
    """The share query of the step the viewer shows (as ``presentation.share_query`` writes it)."""
    return browser.evaluate(f"""(s => {{
      const turn = s.turns[s.index], first = s.turns.indexOf(turn);
      return `?replay=${{encodeURIComponent(s.data.id)}}&turn=${{turn}}` + (first !== s.index ? `&step=${{s.index}}` : '');
    }})({state})""")


def test_the_link_box_and_the_address_follow_the_shown_decision(server) -> None:
    """After stepping back in Live the link box said the newest turn (turn=22 at decision 1), and after "Open in
    Replays" the address stayed ``/`` and then trailed a step behind."""
    with Browser(1280, 800) as browser:
        browser.open(f"{server.url}?tab=live")
        browser.wait_for("document.querySelector('#wc-live-start') !== null && " + PAGE_IDLE, timeout=90)
        browser.click("document.querySelector('#wc-live-start')")
        browser.wait_for(f"{LIVE}.total >= 4 && {LIVE}.data.id", timeout=90)
        browser.evaluate("document.activeElement && document.activeElement.blur()")
        press(browser, "Home")
        press(browser, "ArrowRight")
        browser.wait_for(f"{LIVE}.data.finished", timeout=180)
        frames(browser)
        assert browser.evaluate(f"{LIVE}.index") == 1
        box = "document.querySelector('#wc-live-viewer [data-role=link]').value"
        assert browser.evaluate(box).endswith(query_of(browser, LIVE)), browser.evaluate(box)
        browser.click("document.querySelector('#wc-live-open')")
        browser.wait_for(f"{REPLAYS}.data?.id === {LIVE}.data.id && {REPLAYS}.index === 1", timeout=60)
        browser.wait_for(f"location.search === {query_of(browser, REPLAYS)!r}", timeout=30)
        for key in ("ArrowRight", "ArrowRight", "ArrowLeft"):
            press(browser, key)
            wanted = query_of(browser, REPLAYS)
            browser.wait_for(f"location.search === {wanted!r}", timeout=30)
        assert browser.evaluate(f"{REPLAYS}.index") == 2


# --------------------------------------------------------------------------------------------------------------
# 2. The win-probability chart reads at a glance and follows the shown decision
# --------------------------------------------------------------------------------------------------------------
CHART = "document.querySelector('#wc-replays-rescores svg.wc-an-chart')"


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_the_win_probability_chart_reads_at_a_glance_and_follows_the_shown_decision(server, many, size) -> None:
    """It had no axes, no marker for the shown decision, and p1 and p2 as two mirrored lines whose bands overlapped:
    now one line (p1's chance) on a labelled 0-100 % axis with the 50 % line, a cursor that follows the keys, and
    marks that open their decision."""
    width, height = size
    with Browser(width, height) as browser:
        open_replay(browser, f"{server.url}?replay={MANY_ID}&turn=1", 1)
        browser.wait_for(f"{CHART} != null", timeout=60)
        assert browser.evaluate(f"{CHART}.querySelectorAll('polyline.wc-an-line').length") == 1
        ticks = browser.evaluate(f"[...{CHART}.querySelectorAll('.wc-an-ytick')].map(t => t.textContent)")
        assert ticks == ["0%", "25%", "50%", "75%", "100%"]
        assert browser.evaluate(f"{CHART}.querySelector('.wc-an-half') != null")
        assert browser.evaluate(f"{CHART}.querySelectorAll('.wc-an-xtick').length") >= 2
        xs = browser.evaluate(f"Object.fromEntries({CHART}.dataset.xs.split(',').map(p => p.split(':')))")
        cursor = f"{CHART}.querySelector('.wc-an-cursor').getAttribute('x1')"
        browser.wait_for(f"Number({cursor}) === {float(xs['0'])}")
        press(browser, "ArrowRight")
        browser.wait_for(f"Number({cursor}) === {float(xs['1'])}")  # the cursor follows the keys
        mark = f"{CHART}.querySelector('.wc-an-turning')"
        target = browser.evaluate(f"{mark}.dataset.index")
        browser.evaluate(f"{mark}.scrollIntoView({{block: 'center'}})")
        frames(browser)
        x, y = browser.evaluate(f"(r => [r.left + r.width / 2, r.top + r.height / 2])({mark}.getBoundingClientRect())")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        browser.wait_for(f"{REPLAYS}.index === {int(target)}")  # the mark opened its decision
        browser.wait_for(f"Number({cursor}) === {float(xs[target])}")


# --------------------------------------------------------------------------------------------------------------
# 10. Side by side steps with the keys
# --------------------------------------------------------------------------------------------------------------
def test_side_by_side_steps_with_the_arrow_keys(server, many) -> None:
    """The cursor slider of *Compare move by move* answered the mouse only (its event was ``release``): a person who
    focused it and pressed → saw the number move and the battles stay."""
    parent = SAMPLE_ID
    with Browser(1280, 800) as browser:
        open_replay(browser, f"{server.url}?replay={parent}&turn=1", 1)
        browser.click("[...document.querySelectorAll('button, .label-wrap')].find(e => "
                      "e.textContent.includes('Compare move by move'))")
        for box in ("a", "b"):
            field = f"document.querySelector('#wc-pair-{box} input')"
            browser.wait_for(f"{field} != null && {field}.getBoundingClientRect().width > 0", timeout=30)
            browser.evaluate(f"(() => {{ const e = {field}; e.scrollIntoView({{block: 'center'}}); e.focus(); "
                             "e.select(); })()")
            typed = parent if box == "a" else MANY_ID  # the same battle start (the analysis copy of the sample)
            for ch in typed:  # key by key: Gradio filters its options on the keys
                browser.call("Input.dispatchKeyEvent", type="keyDown", key=ch, text=ch)
                browser.call("Input.dispatchKeyEvent", type="keyUp", key=ch)
            browser.wait_for(f"document.querySelectorAll('#wc-pair-{box} [role=option]').length >= 1", timeout=30)
            for kind in ("keyDown", "keyUp"):
                browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                             text="\r" if kind == "keyDown" else "")
            # the chosen label names the typed id: last (an id led by its format) or first (any other id)
            browser.wait_for(f"(v => v.endsWith({' · ' + typed!r}) || v.startsWith({typed + ' — '!r}))"
                             f"({field}.value)", timeout=30)
        browser.click("[...document.querySelectorAll('button')].find(b => b.textContent.includes('⇆ Compare'))")
        pair = "document.querySelector('#wc-pair .wc-pair')"
        browser.wait_for(f"{pair} != null", timeout=60)
        before = int(browser.evaluate(f"{pair}.dataset.step"))
        slider = "document.querySelector('#wc-pair-step input[type=range]')"
        browser.evaluate(f"{slider}.focus()")
        press(browser, "ArrowRight")
        browser.wait_for(f"Number({pair}?.dataset.step) === {before + 1}", timeout=60)


# --------------------------------------------------------------------------------------------------------------
# 10. Rescore from the browser: ask a served policy at one side's decisions of the open replay
# --------------------------------------------------------------------------------------------------------------
def test_a_person_asks_a_served_policy_at_one_sides_decisions_from_the_replay(server) -> None:
    """``wolfeclick rescore`` had no button: the answers are stored beside the recording as the CLI stores them and
    show at once (the agreement line above the viewer, a note in the decision panel)."""
    data = sample_data()
    data["id"] = "rescore-" + SAMPLE_ID
    (server.recordings / f"{data['id']}.json").write_text(Recording.model_validate(data).to_json(), encoding="utf-8")
    with Browser(1280, 800) as browser:
        open_replay(browser, f"{server.url}?replay={data['id']}&turn=1", 1)
        browser.click("[...document.querySelectorAll('button, .label-wrap')].find(e => "
                      "e.textContent.includes('Ask a policy'))")
        side = "document.querySelector('#wc-rescore-side input[value=p2]')"
        browser.wait_for(f"{side} != null && {side}.getBoundingClientRect().width > 0", timeout=30)
        # clicked again until it holds: while the replay's own events still run, the radio may not take a click yet
        browser.wait_for(f"{side}.checked || ({side}.click(), false)", timeout=60)
        browser.click("document.querySelector('#wc-rescore-start')")
        status = "document.querySelector('#wc-rescore-status')?.innerText || ''"
        text = browser.wait_for(f"/agrees|error|not|refused/.test({status}) && {status}", timeout=180)
        assert "decisions of p2" in text and "agrees with the recorded choice" in text, text
        browser.wait_for("document.querySelector('#wc-replays-rescores .wc-rescore-summary') != null", timeout=60)
        summary = browser.evaluate("document.querySelector('#wc-replays-rescores .wc-rescore-summary').innerText")
        assert "p2" in summary, summary
    stored = list((server.recordings / "rescores" / data["id"]).glob("*-p2.json"))
    assert len(stored) == 1, stored


# --------------------------------------------------------------------------------------------------------------
# 10. Cosmetic cuts: a dropdown's text under its caret, cut headers, a phone's recordings list showing one column
# --------------------------------------------------------------------------------------------------------------
DROPDOWN_TEXT_VS_CARET = """[...document.querySelectorAll('.wrap-inner input[role=combobox]')]
  .filter(i => i.getBoundingClientRect().width > 0)
  .map(i => { const r = i.getBoundingClientRect(), icon = i.parentElement.querySelector('.icon-wrap');
              const end = r.right - parseFloat(getComputedStyle(i).paddingRight);
              return [i.getAttribute('aria-label'), Math.round(end), icon ? Math.round(icon.getBoundingClientRect().left) : null]; })"""
SETTINGS_SHOWN = """(() => { if ([...document.querySelectorAll('.wrap-inner input[role=combobox]')]
    .some(i => i.getBoundingClientRect().width > 0)) return true;
  document.querySelectorAll('.wc-controls-col .label-wrap:not(.open)').forEach(l => l.click()); return false; })()"""
"""Live's settings open, as a phone's visitor opens them: under 700 px the viewer folds the controls when it starts
(viewer.js), so whether they are folded depends on whether the viewer started before or after they were drawn (a CI
run's phone page had them folded for the whole minute). Opened again if the viewer folds them after."""
SETTLED = "(heads => heads.every(([title, left, right]) => Math.abs(right - left - {w}[title]) < 2))".replace(
    "{w}", json.dumps({title: int(width.removesuffix("px")) for title, width in zip(LIST_HEADERS, LIST_WIDTHS)}))
"""Every column of the replay list as wide as ``LIST_WIDTHS`` sets it."""

LIST_HEADS = """(() => { const box = document.querySelector('#wc-replays-table').getBoundingClientRect();
  return [...document.querySelectorAll('#wc-replays-table th')].map(t => { const r = t.getBoundingClientRect(),
    text = t.querySelector('.header'); const line = parseFloat(getComputedStyle(text).lineHeight) || 20;
    return [t.title, Math.round(r.left), Math.round(r.right), Math.round(box.right),
            text.getBoundingClientRect().height / line]; }); })()"""


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_no_dropdown_text_under_its_caret_no_cut_header_and_a_phone_row_shows_more_than_its_id(server, size) -> None:
    width, height = size
    with Browser(width, height) as browser:
        for tab in ("live", "compare", "replays"):
            browser.open(f"{server.url}?tab={tab}")
            # the tab the link names is shown by a load event: idle before that event has begun is not yet the tab
            # (once, in a 2-worker run, Live's dropdowns were all still hidden when they were measured)
            browser.wait_for(f"document.querySelector('[data-tab-id={tab}][aria-selected=true]') !== null", timeout=60)
            browser.wait_for("document.querySelectorAll('.wrap-inner input[role=combobox]').length > 0", timeout=60)
            browser.wait_for(PAGE_IDLE, timeout=60)
            if tab == "live":
                if width < 700:  # folded as the viewer folds them when it starts after they were drawn: either order
                    browser.evaluate("document.querySelectorAll('.wc-controls-col .label-wrap.open')"
                                     ".forEach(l => l.click())")
                    browser.wait_for(f"{DROPDOWN_TEXT_VS_CARET}.length == 0", timeout=60)
                browser.wait_for(SETTINGS_SHOWN, timeout=60)
                browser.wait_for(f"{DROPDOWN_TEXT_VS_CARET}.length > 0", timeout=60)
            found = browser.evaluate(DROPDOWN_TEXT_VS_CARET)
            assert found or tab != "live", tab
            assert all(caret is None or end <= caret for _, end, caret in found), (tab, found)
        # Gradio sizes the columns (LIST_WIDTHS) once the table is drawn: until then every column is as wide as its
        # longest text (a CI run measured that first draw), and a redraw of the table draws that way again before it
        # sizes them (a CI run saw them settled, then measured them a poll later all 285 px wide, a phone's row each).
        # So the heads measured are the ones found settled, in the same evaluation, waited for up to a minute.
        heads = browser.wait_for(f"(heads => heads.length == 8 && {SETTLED}(heads) ? heads : null)({LIST_HEADS})",
                                 timeout=60)
        assert all(lines < 1.5 for *_, lines in heads), heads  # "turns" was set as "tur / ns"
        shown = [title for title, left, right, box, _ in heads if right <= box + 1]
        if width >= 1280:
            assert len(shown) == 8, heads  # "date (UTC)" ran past the table's right edge
        else:
            assert shown[:2] == ["id", "p1"], heads  # the id alone filled a phone's row
