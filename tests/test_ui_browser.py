"""A real browser (headless Debian Chromium) opens share links; the rendered page is checked."""

from __future__ import annotations

import re

import pytest
from test_ui_support import CHROMIUM, HOSTILE_ID, SAMPLE_ID, Browser, server  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def test_share_link_shows_that_turn(server, browser):  # noqa: F811
    browser.open(f"{server.url}?replay={SAMPLE_ID}&turn=5")
    assert browser.wait_for("document.querySelector('.wc-turn')?.dataset.turn") == "5"
    dom = browser.dom()
    assert ">Turn 5<" in dom and "heuristic" in dom and "decided" in dom
    assert re.findall(r'<button[^>]*aria-selected="true"[^>]*data-tab-id="(\w+)"', dom) == ["replays"]
    link = browser.wait_for("[...document.querySelectorAll('textarea, input')].map(e => e.value)"
                            ".find(v => v.includes('?replay='))")
    assert link == f"{server.url}?replay={SAMPLE_ID}&turn=5"  # the copyable link to this very turn
    # the charts drew, with the current turn marked
    assert browser.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 2")


def test_hostile_recording_renders_inert(server, browser):  # noqa: F811
    browser.open(f"{server.url}?replay={HOSTILE_ID}&turn=2")
    assert browser.wait_for("document.querySelector('.wc-turn')?.dataset.turn") == "2"
    assert browser.evaluate("window.__pwned === undefined")  # nothing ran
    assert browser.evaluate("document.getElementById('pwned') === null")  # nothing was injected
    text = browser.evaluate("document.querySelector('.wc-view').innerText")
    assert "<script>window.__pwned=1</script>" in text and "${7*7}" in text  # shown as text, not evaluated
    dom = browser.dom()
    assert not re.search(r'<img[^<>]*id="pwned"', dom) and not re.search(r"<script>window\.__pwned", dom)


def test_hostile_names_in_the_recordings_table_stay_text(server, browser):  # noqa: F811
    browser.open(f"{server.url}?tab=replays")
    browser.wait_for("document.querySelector('.wc-turn') !== null")
    browser.evaluate("[...document.querySelectorAll('.label-wrap')].find(e => e.innerText.includes('All recordings'))"
                     ".click()")
    cell = browser.wait_for("[...document.querySelectorAll('[role=gridcell]')].map(e => e.innerText)"
                            ".find(t => t.includes('__pwned'))")
    assert "<script>window.__pwned=1</script>" in cell
    assert browser.evaluate("window.__pwned === undefined && document.getElementById('pwned') === null")
