"""Play it yourself, in real browsers: two people (two headless Chromium pages, two sessions) each choose "You" in
the Live tab and play a whole battle against maxdamage at the same time by clicking the legal-action buttons; both
recordings validate with ``python -m wolfeclick validate``, and each holds exactly its own page's clicks."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from test_ui_support import CHROMIUM, ROOT, Browser, server  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

STATE = """(() => {
  const live = (window.__wcViewers || {}).live;
  if (live && live.state.data && live.state.data.finished) return 'done';
  const prompt = (document.querySelector('#wc-human-prompt') || {}).innerText || '';
  const number = prompt.match(/choice #(\\d+)/);
  const shown = [...document.querySelectorAll('.wc-human-choice')].filter(b => b.offsetParent !== null);
  return number && shown.length ? JSON.stringify([Number(number[1]), shown.map(b => b.id)]) : '';
})()"""
"""'done', '' (nothing to click yet), or the shown prompt's number and its visible buttons' ids."""


def type_in(browser: Browser, selector: str, text: str) -> None:
    """Replace a field's text as a person types it (trusted input events)."""
    browser.evaluate(f"(() => {{ const e = document.querySelector({selector!r}); e.focus(); e.select(); }})()")
    browser.call("Input.insertText", text=text)


def pick(browser: Browser, elem_id: str, text: str) -> None:
    """Choose a Gradio dropdown's option by typing its start and pressing Enter."""
    type_in(browser, f"#{elem_id} input", text)
    browser.wait_for(f"[...document.querySelectorAll('li[role=option]')].some(o => o.ariaLabel.startsWith({text!r}))")
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                     nativeVirtualKeyCode=13)
    browser.wait_for(f"document.querySelector('#{elem_id} input').value.startsWith({text!r})")


class Person:
    """One page playing p1 as "You": ``which`` picks the first or the last legal button each time."""

    def __init__(self, url: str, seed: int, which: int) -> None:
        self.browser = Browser(width=1400, height=1400)
        self.seed, self.which = seed, which
        self.last, self.clicked, self.labels = 0, 0, []
        self.first_prompt: float | None = None
        self.done: float | None = None
        self.browser.open(url)
        self.browser.wait_for("document.querySelector('#wc-live-agent input') !== null && "
                              "(window.__wcViewers || {}).live !== undefined")

    def start(self) -> None:
        pick(self.browser, "wc-live-agent", "You")
        pick(self.browser, "wc-live-opponent", "maxdamage")
        type_in(self.browser, "#wc-live-seed textarea, #wc-live-seed input", str(self.seed))
        self.browser.evaluate("document.querySelector('#wc-live-start').click()")

    def step(self) -> None:
        """Click once if a new decision waits for this page; note when the battle is over."""
        state = self.browser.evaluate(STATE)
        if state == "done":
            self.done = self.done or time.monotonic()
            return
        if not state:
            return
        number, shown = json.loads(state)
        if number <= self.last:
            return  # this decision was answered; its buttons go when the battle has taken it
        self.first_prompt = self.first_prompt or time.monotonic()
        target = shown[0] if self.which == 0 else shown[-1]
        self.labels.append(self.browser.evaluate(f"document.getElementById({target!r}).textContent.trim()"))
        self.browser.evaluate(f"document.getElementById({target!r}).click()")
        self.last, self.clicked = number, self.clicked + 1


def test_two_people_each_play_a_whole_battle_by_clicking(server):  # noqa: F811
    before = server.files()
    people = [Person(server.url, 28, 0), Person(server.url, 13, -1)]
    try:
        for person in people:
            person.start()
        deadline = time.monotonic() + 150
        while not all(p.done for p in people):
            assert time.monotonic() < deadline, [(p.clicked, p.done) for p in people]
            for person in people:
                person.step()
            time.sleep(0.05)
        status = people[0].browser.evaluate("document.body.innerText")
    finally:
        for person in people:
            person.browser.close()
    first, second = people
    assert first.first_prompt < second.done and second.first_prompt < first.done  # both battles at once
    assert "Finished" in status
    made = sorted(server.files() - before)
    assert made == ["gen4randombattle-s13-human-vs-maxdamage.json", "gen4randombattle-s28-human-vs-maxdamage.json"]
    paths = [server.recordings / name for name in made]
    checked = subprocess.run([sys.executable, "-m", "wolfeclick", "validate", *map(str, paths)], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for person in people:
        data = json.loads((server.recordings / f"gen4randombattle-s{person.seed}-human-vs-maxdamage.json").read_text())
        assert data["players"]["p1"]["policy"] == "human" and data["result"]["reason"] == "win"
        mine = [t["decisions"]["p1"] for t in data["turns"] if "p1" in t["decisions"]]
        assert len(mine) == person.clicked > 5  # every click is one recorded decision, and only this page's
        wanted = [d["legal_actions"][person.which] for d in mine]
        assert [d["action"] for d in mine] == wanted and not any(d["illegal"] for d in mine)
    labels = first.labels + second.labels
    assert any(" BP · " in label and label.endswith(" PP") for label in labels)  # moves: type, power and PP
    assert any(label.startswith("Switch to ") and "% HP" in label for label in labels)  # switches: HP
