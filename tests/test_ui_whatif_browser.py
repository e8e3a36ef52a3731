"""Take over from here in a real browser: the button reads the decision the client viewer shows (the server never
sees the cursor), and the battle plays on in the Live viewer from there, saved as a branch."""

from __future__ import annotations

import json

import pytest

from devkit.browser import CHROMIUM, Browser
from devkit.samples import SAMPLE_ID

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

REPLAYS = "document.querySelector('#wc-replays-viewer')"
LIVE = "(window.__wcViewers || {}).live"


def test_take_over_starts_at_the_decision_the_viewer_shows(server):
    before = server.files()
    with Browser() as browser:
        browser.open(f"{server.url}?replay={SAMPLE_ID}&turn=5")
        browser.wait_for(f"{REPLAYS}?.querySelector('.wc-turn')?.dataset.turn === '5'")
        shown = int(browser.evaluate(f"{REPLAYS}.querySelector('.wc-turn').dataset.step"))
        browser.click("[...document.querySelectorAll('.label-wrap')].find(l => l.textContent.includes("
                      "'Take over from here'))")
        browser.wait_for("document.querySelector('#wc-takeover') !== null")
        browser.click("document.querySelector('#wc-takeover')")
        browser.wait_for(f"{LIVE}?.state?.data?.finished === true", timeout=90)
        assert browser.evaluate(f"{LIVE}.state.total") > shown
    [new] = server.files() - before
    child = json.loads((server.recordings / new).read_text(encoding="utf-8"))
    assert child["source"]["kind"] == "branch" and child["source"]["parent"] == SAMPLE_ID
    assert child["source"]["branch_step"] == shown > 0
