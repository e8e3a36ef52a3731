"""The files the app hands out and takes in say what they are, at 1280×800 and on a 390 px phone (headless Chromium).

- The Leaderboard's four downloads looked alike: a file list in the 260 px controls column cut every name to its
  extension and size (".jsor 2.1 KB", ".csv 503 B", ".jsor 544 B", ".csv 185 B"), each with a "×" that only
  removed it from the list. Each download now reads in full as what it is (the table or the pairings, JSON or CSV).
- The Replays upload box showed an uploaded ``gen9randombattle-…json`` as "g..json".

Waits are on the page's state (``Browser.wait_for``), never on the clock.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from devkit.browser import CHROMIUM, PAGE_IDLE, sized_browser
from devkit.samples import SAMPLES

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

SIZES = [pytest.param((1280, 800), id="desktop"), pytest.param((390, 844), id="phone")]


CLIPPED = """(e) => { for (let n = e; n; n = n.parentElement) {  // cut by itself or by a box it sits in
    if (n.scrollWidth > n.clientWidth + 1 && getComputedStyle(n).overflowX !== 'visible') return true;
    if (n.matches('td, button, a')) break; }
  return false; }"""

COLUMN = """[...document.querySelectorAll('.wc-controls-col')].find(c => c.innerText.includes('Which battles'))"""
SEEN = "(e) => e.getBoundingClientRect().width > 0"

READY = f"""(() => {{  // the exports are there (they come with the table's status): a file list's links, or buttons
  const column = {COLUMN}; if (!column) return false;
  return [...column.querySelectorAll('a[download]')].some(a => a.href.includes('matrix.csv')) ||
         [...column.querySelectorAll('button')].some(b => b.innerText.includes('⬇'));
}})()"""

DOWNLOADS = f"""(() => {{
  const clipped = {CLIPPED}, seen = {SEEN}, column = {COLUMN};
  const links = [...column.querySelectorAll('a[download], button')].filter(seen).filter(e =>
      e.matches('a[download]') || e.querySelector('a[download]') || /download|⬇/i.test(e.innerText));
  return {{
    texts: links.map(e => [e.innerText.replace(/\\s+/g, ' ').trim(), clipped(e) ||
                           [...e.querySelectorAll('*')].some(clipped)]),
    removers: [...column.querySelectorAll('button')].filter(seen).filter(b => b.innerText.trim() === '×').length,
  }};
}})()"""

CATCH = """(() => {  // a download starts with an anchor's click: note the file it names instead of leaving the page
  window.__wcDownloads = [];
  HTMLAnchorElement.prototype.click = function () { window.__wcDownloads.push(this.download || this.href); };
  return true;
})()"""


@pytest.mark.parametrize("size", SIZES)
def test_each_leaderboard_download_says_what_it_is(server, size) -> None:
    with sized_browser(*size) as browser:
        browser.open(f"{server.url}?tab=leaderboard")
        browser.wait_for("document.querySelector('[data-tab-id=leaderboard][aria-selected=true]') !== null && "
                         "document.body.innerText.includes('finished battles') && " + PAGE_IDLE, timeout=120)
        browser.wait_for(READY, timeout=60)
        # and drawn: in one loaded full run the links were there but none had a size yet at phone width
        browser.wait_for(f"{DOWNLOADS}.texts.length >= 4", timeout=60)
        found = browser.evaluate(DOWNLOADS)
        texts = [text for text, _ in found["texts"]]
        assert [text for text, cut in found["texts"] if cut] == [], found
        assert found["removers"] == 0, found  # nothing to remove: they are the table's exports, not a person's files
        named = {(what, kind) for text in texts for what in ("table", "pair") for kind in ("JSON", "CSV")
                 if what in text.lower() and kind in text}
        assert named == {("table", "JSON"), ("table", "CSV"), ("pair", "JSON"), ("pair", "CSV")}, texts
        assert len(texts) == 4 and len(set(texts)) == 4, texts
        # each gives the file it names
        browser.evaluate(CATCH)
        for index, text in enumerate(texts):
            browser.click(f"[...({COLUMN}).querySelectorAll('button')].find(b => "
                          f"b.innerText.replace(/\\s+/g, ' ').trim() === {text!r})")
            name = browser.wait_for(f"window.__wcDownloads[{index}]", timeout=30)
            assert name == ("matrix" if "pair" in text.lower() else "leaderboard") + (
                ".json" if "JSON" in text else ".csv"), (text, name)


MARK_UPLOAD = """(() => {  // the upload box, found by its label
  const box = [...document.querySelectorAll('.block')].find(b => b.querySelector('input[type=file]') &&
                                                               b.innerText.includes('Upload a recording'));
  if (box) box.dataset.wcUpload = '1';
  return !!box;
})()"""

UPLOADED = """(() => {
  const clipped = %s;
  const row = document.querySelector('[data-wc-upload] .file-preview td.filename');
  if (!row) return null;
  return [row.innerText.replace(/\\s+/g, ''), clipped(row) || [...row.querySelectorAll('*')].some(clipped)];
})()""" % CLIPPED


@pytest.mark.parametrize("size", SIZES)
def test_an_uploaded_file_is_named_in_full(server, size, tmp_path: Path) -> None:
    sample = tmp_path / SAMPLES[0].name  # gen9randombattle-s1-heuristic-vs-random.json: a long name, as ids are
    shutil.copy(SAMPLES[0], sample)
    with sized_browser(*size) as browser:
        browser.open(f"{server.url}?tab=replays")
        browser.wait_for(f"({MARK_UPLOAD}) && {PAGE_IDLE}", timeout=120)
        root = browser.call("DOM.getDocument", depth=0)["root"]["nodeId"]
        node = browser.call("DOM.querySelector", nodeId=root, selector="[data-wc-upload] input[type=file]")
        browser.call("DOM.setFileInputFiles", nodeId=node["nodeId"], files=[str(sample)])
        browser.wait_for(UPLOADED, timeout=90)
        browser.wait_for(PAGE_IDLE, timeout=90)
        shown = browser.evaluate(UPLOADED)
        assert shown == [sample.name, False], shown
