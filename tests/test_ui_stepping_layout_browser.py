"""Stepping through a replay and the page's layout under real use, in headless Debian Chromium: each test names the
defect it pins and fails on the app before the fix (issue 27).

Waits are on conditions in the page (``Browser.wait_for``); nothing here sleeps and then checks.
"""

from __future__ import annotations

import json

import pytest

from devkit.appserver import Server
from devkit.browser import CHROMIUM, PAGE_IDLE, Browser, frames, open_replay
from devkit.samples import SAMPLE_ID, long_recording

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

VIEW = "document.querySelector('#wc-replays-viewer')"
LIVE = "document.querySelector('#wc-live-viewer')"
KEYS = {"ArrowRight": 39, "ArrowLeft": 37, "Home": 36, "End": 35, "Enter": 13}
LONG_ID = "long-900-turns"


def press(browser: Browser, key: str) -> None:
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=KEYS[key],
                     nativeVirtualKeyCode=KEYS[key])



@pytest.fixture(scope="module")
def server():
    """This file's app (in place of conftest's): its live battles wait 0.15 s between decisions, so a person can
    step back while one plays. Only the Live test here plays a live battle; one app serves them all (the paced
    app and the branched library each cost an app start of their own)."""
    app = Server(pace=0.15)
    yield app
    app.stop(wait=False)


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def phone():
    with Browser(width=414, height=900) as b:
        b.call("Emulation.setDeviceMetricsOverride", width=414, height=900, deviceScaleFactor=1, mobile=True)
        yield b


# --------------------------------------------------------------------------------------------------------------
# 4. Stepping reads no layout (the turn list's scroll read offsetTop: ~42 ms of forced layout per step on a phone)
# --------------------------------------------------------------------------------------------------------------
LAYOUT_PROBE = """(() => {
  window.__wcLayoutReads = [];
  window.__wcLayoutStacks = [];  // who read, for the failure message
  const note = (what) => { if (window.__wcCounting) {
    window.__wcLayoutReads.push(what); window.__wcLayoutStacks.push(new Error().stack.split('\\n').slice(2, 5).join(' < '));
  } };
  const wrap = (proto, props) => props.forEach((prop) => {
    const d = Object.getOwnPropertyDescriptor(proto, prop);
    Object.defineProperty(proto, prop, { configurable: true, get() { note(prop); return d.get.call(this); },
                                         set: d.set ? function (v) { d.set.call(this, v); } : undefined });
  });
  wrap(HTMLElement.prototype, ['offsetTop', 'offsetLeft', 'offsetWidth', 'offsetHeight', 'offsetParent', 'innerText']);
  wrap(Element.prototype, ['clientTop', 'clientLeft', 'clientWidth', 'clientHeight', 'scrollTop', 'scrollLeft',
                           'scrollWidth', 'scrollHeight']);
  for (const fn of ['getBoundingClientRect', 'getClientRects', 'scrollIntoView', 'checkVisibility']) {
    const f = Element.prototype[fn];
    Element.prototype[fn] = function (...a) { note(fn); return f.apply(this, a); };
  }
  const style = window.getComputedStyle;
  window.getComputedStyle = function (...a) { note('getComputedStyle'); return style.apply(this, a); };
  return true;
})()"""

SETTLED = """new Promise(done => {
  window.__wcCounting = true;
  let quiet = 0, seen = window.__wcLayoutReads.length, left = 1200;
  const f = () => {
    const n = window.__wcLayoutReads.length;
    quiet = n === seen ? quiet + 1 : 0; seen = n;
    if (quiet >= 10 || !--left) { window.__wcCounting = false; window.__wcLayoutReads.length = 0;
                                  window.__wcLayoutStacks.length = 0; done(quiet >= 10); }
    else requestAnimationFrame(f);
  };
  requestAnimationFrame(f);
})"""
"""Until ten frames in a row read no layout: once the viewer shows its turn, Gradio's own components still lay
themselves out for a few frames (the tab bar measures each tab, the hidden tables and text boxes size themselves),
later on a loaded machine; those reads are the page settling, not a step's."""


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_stepping_forces_no_layout(server, browser, phone, width):
    """Each step read layout twice (``offsetParent`` in the key handler, ``offsetTop`` for the turn list's scroll
    in the next frame), forcing a synchronous layout of the whole page per step: 208–291 ms on a phone."""
    page = browser if width == "desktop" else phone
    open_replay(page, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    assert page.evaluate(LAYOUT_PROBE)
    assert page.evaluate(SETTLED), "the page never stopped reading its layout"
    page.evaluate("window.__wcCounting = true")
    for key in ["ArrowRight"] * 12 + ["End", "Home", "ArrowRight"]:
        press(page, key)
        frames(page)
    page.evaluate("window.__wcCounting = false")
    assert int(page.evaluate(f"{VIEW}.querySelector('.wc-turn').dataset.step")) == 1  # the keys did step
    assert page.evaluate("window.__wcLayoutReads") == [], page.evaluate("window.__wcLayoutStacks")
    # and the turn list still follows the shown step: the current line is inside the list's box
    page.evaluate("window.__wcViewers.replays.show(25)")
    page.wait_for(f"""(() => {{ const list = {VIEW}.querySelector('.wc-turnlist'), li = list.querySelector('li.wc-current');
        const a = list.getBoundingClientRect(), b = li.getBoundingClientRect();
        return li.dataset.step === '25' && b.top >= a.top - 1 && b.bottom <= a.bottom + 1; }})()""", timeout=10)


def test_stepping_keeps_the_page_width(server, browser):
    """The last turn of the sample is short enough that the page no longer overflows the desktop window, so the
    vertical scrollbar went and the page widened by its 15 px: the centred layout jumped sideways on that step and
    back on the next."""
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    widths = set()
    for key in ["ArrowRight"] * 3 + ["End", "Home"]:
        press(browser, key)
        frames(browser)
        widths.add(browser.evaluate("document.documentElement.clientWidth"))
    assert int(browser.evaluate(f"{VIEW}.querySelector('.wc-turn').dataset.step")) == 0  # the keys did step
    assert len(widths) == 1, widths


FRAME_COUNTER = """(() => {
  const native = window.requestAnimationFrame;
  window.__wcFrameAsks = 0;
  window.requestAnimationFrame = function (callback) { window.__wcFrameAsks++; return native.call(window, callback); };
})()"""
"""Installed before any script of the page's: counts the animation frames the page's scripts ask for."""


def test_an_idle_page_asks_for_no_animation_frames(server):
    """Gradio 6.31's page loader (a status tracker shown while the app loads) starts its elapsed-time loop and is
    unmounted while still pending, so the loop's requestAnimationFrame outlived it: a callback every frame for the
    page's whole life (60 a second on an idle page). The frame pipeline was never idle, and a key's frame waited
    for the next tick behind it. Once its events have answered (and their loaders' animations have run out), a
    page asks for no frames until something changes."""
    with Browser() as page:
        page.call("Page.addScriptToEvaluateOnNewDocument", source=FRAME_COUNTER)
        open_replay(page, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
        page.wait_for(PAGE_IDLE, timeout=180)
        quiet = ("new Promise(done => { const before = window.__wcFrameAsks;"
                 " setTimeout(() => done(window.__wcFrameAsks === before), 500); })")
        page.wait_for(quiet, timeout=60)  # today's loop never stops: half a second without a frame never comes
        # the viewer's own frames still run: a step is drawn, and the page is quiet again after it
        press(page, "ArrowRight")
        page.wait_for(f"{VIEW}.querySelector('.wc-turn').dataset.step === '1'", timeout=30)
        page.wait_for(quiet, timeout=60)


RENDERED_LINES = (f"[...{VIEW}.querySelectorAll('.wc-turnlist li')]"
                  ".filter(li => getComputedStyle(li).display !== 'none').map(li => Number(li.dataset.step))")
LINE_IN_VIEW = f"""(() => {{ const list = {VIEW}.querySelector('.wc-turnlist'), box = list.getBoundingClientRect();
    const at = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    const li = at && at.closest('.wc-turnlist li'); return li ? Number(li.dataset.step) : null; }})()"""
"""The step of the turn-list line at the middle of the list's box (null: nothing rendered there)."""


def test_the_turn_list_renders_only_the_lines_near_the_shown_step(server, browser):
    """Every line of the turn list was rendered (display: none for none): each step's layout, pre-paint and paint
    went through all of them, in view or not — about 5 of a step's 18 ms on a 378-line list. Only the lines near
    the shown step (or where the list was scrolled to) are rendered now; the rest are still there for finding."""
    replay = "list-300-turns"
    path = server.recordings / f"{replay}.json"
    if not path.exists():
        path.write_text(json.dumps(long_recording(replay, 300)), encoding="utf-8")
    open_replay(browser, f"{server.url}?replay={replay}&turn=1", 1)
    lines = browser.evaluate(f"{VIEW}.querySelectorAll('.wc-turnlist li').length")
    assert lines > 300
    for step in (0, 150, lines - 1):
        browser.evaluate(f"window.__wcViewers.replays.show({step})")
        frames(browser)
        rendered = browser.evaluate(RENDERED_LINES)
        assert step in rendered and len(rendered) <= 100, (step, len(rendered))
        assert rendered == list(range(rendered[0], rendered[-1] + 1))  # one run of lines around it
        # the shown line is in the list's view (the list followed it)
        browser.wait_for(f"""(() => {{ const list = {VIEW}.querySelector('.wc-turnlist'), li = list.querySelector('li.wc-current');
            const a = list.getBoundingClientRect(), b = li.getBoundingClientRect();
            return b.top >= a.top - 1 && b.bottom <= a.bottom + 1; }})()""", timeout=10)
    # a person scrolls the list far from the shown step (the mouse wheel, over the list): the lines there are
    # rendered, and stay put
    box = browser.evaluate(f"(() => {{ const b = {VIEW}.querySelector('.wc-turnlist').getBoundingClientRect();"
                           " return [b.left + b.width / 2, b.top + b.height / 2]; })()")
    settled = (f"new Promise(done => {{ const a = {LINE_IN_VIEW}; let k = 3; const f = () => (--k ? "
               f"requestAnimationFrame(f) : done(a !== null && a === {LINE_IN_VIEW} ? a + 1 : 0));"
               " requestAnimationFrame(f); })")  # the same line in view three frames apart (+1: line 0 is truthy)
    found = []
    for delta in ("-list.scrollHeight", "list.scrollHeight / 2"):
        wheel = browser.evaluate(f"(list => {delta})({VIEW}.querySelector('.wc-turnlist'))")
        browser.call("Input.dispatchMouseEvent", type="mouseWheel", x=box[0], y=box[1], deltaX=0, deltaY=wheel)
        found.append(browser.wait_for(settled, timeout=20) - 1)
    assert found[0] < 30 and 100 < found[1] < 250, found  # the top, then the middle of the battle
    assert browser.evaluate(f"{VIEW}.querySelector('li.wc-current').dataset.step") == str(lines - 1)  # not stepped


# --------------------------------------------------------------------------------------------------------------
# 5. Replays of any length step without reloading the page
# --------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def long_replay(server):
    """A 900-turn recording (its panels are about 13 MB: more than one payload carries)."""
    path = server.recordings / f"{LONG_ID}.json"
    if not path.exists():
        path.write_text(json.dumps(long_recording(LONG_ID, 900)), encoding="utf-8")
    return LONG_ID


def test_a_long_replay_steps_across_its_windows_without_reloading(server, browser, long_replay):
    """End, Home or Play across the payload's window reloaded the whole page (17–23 s) and lost the viewer's
    state; the page held 516 of 862 steps."""
    open_replay(browser, f"{server.url}?replay={long_replay}&turn=1", 1)
    total = browser.evaluate("window.__wcViewers.replays.state.total")
    held = "window.__wcViewers.replays.state.panels.filter(p => p !== undefined).length"
    assert browser.evaluate(held) < total  # a window, not the whole battle
    browser.evaluate("window.__wcStillHere = 'yes'")  # gone if the page reloads
    browser.evaluate(f"{VIEW}.querySelector('details[data-key=state-p1]').open = true")
    press(browser, "End")
    browser.wait_for(f"{VIEW}.querySelector('.wc-turn')?.textContent === 'End'", timeout=60)
    assert browser.evaluate("window.__wcStillHere") == "yes"
    assert browser.evaluate(f"{VIEW}.querySelector('[data-role=slider]').value") == str(total)
    browser.wait_for(f"location.search.startsWith('?replay={long_replay}&turn=')")  # the address follows
    press(browser, "ArrowLeft")
    assert int(browser.evaluate(f"{VIEW}.querySelector('.wc-turn').dataset.step")) == total - 2
    assert browser.evaluate(f"{VIEW}.querySelector('details[data-key=state-p1]').open") is True  # state kept
    middle = total // 2
    browser.evaluate(f"window.__wcViewers.replays.show({middle})")
    browser.wait_for(f"{VIEW}.querySelector('.wc-turn')?.dataset.step === '{middle}'", timeout=60)
    press(browser, "Home")
    browser.wait_for(f"{VIEW}.querySelector('.wc-turn')?.dataset.step === '0'", timeout=60)
    assert browser.evaluate("window.__wcStillHere") == "yes"
    # the turn list holds a line for every step it has been shown, in order
    steps = browser.evaluate(f"[...{VIEW}.querySelectorAll('.wc-turnlist li')].map(li => Number(li.dataset.step))")
    assert steps == sorted(steps) and total - 1 in steps and middle in steps and 0 in steps


# --------------------------------------------------------------------------------------------------------------
# 6. One truth after Live ends
# --------------------------------------------------------------------------------------------------------------
def test_live_after_stepping_back_tells_the_finished_battle(server, browser):
    """After stepping back in Live, the end of the battle left "Decision 5 of 7 so far", the slider at 7 of 28,
    panels saying "in progress", and "Open this battle in Replays (at this turn)" opened the last decision."""
    browser.open(f"{server.url}?tab=live")
    browser.wait_for("document.querySelector('#wc-live-start') !== null && " + PAGE_IDLE, timeout=90)
    browser.click("document.querySelector('#wc-live-start')")
    browser.wait_for("window.__wcViewers.live.state.total >= 4", timeout=90)
    browser.evaluate("document.activeElement && document.activeElement.blur()")
    press(browser, "Home")
    press(browser, "ArrowRight")
    assert browser.evaluate("window.__wcViewers.live.state.index") == 1
    browser.wait_for("window.__wcViewers.live.state.data.finished && window.__wcViewers.live.state.data.id", timeout=180)
    live = "window.__wcViewers.live.state"
    assert browser.evaluate(f"{live}.index") == 1  # still where the person is
    decisions, total = browser.evaluate(f"[{live}.data.decisions, {live}.total]")
    label = browser.evaluate(f"{LIVE}.querySelector('[data-role=label]').textContent")
    assert label.startswith(f"Decision 2 of {decisions} · turn") and "so far" not in label, label
    assert browser.evaluate(f"{LIVE}.querySelector('[data-role=slider]').max") == str(total)
    header = browser.evaluate(f"{LIVE}.querySelector('.wc-header').textContent")
    assert "in progress" not in header and "so far" not in header and " won in turn " in header, header
    replay_id = browser.evaluate(f"{live}.data.id")
    browser.click("document.querySelector('#wc-live-open')")
    browser.wait_for(f"window.__wcViewers.replays.state.data?.id === {json.dumps(replay_id)} && "
                     f"{VIEW}.querySelector('.wc-turn')?.dataset.step === '1'", timeout=60)


# --------------------------------------------------------------------------------------------------------------
# 8. The end narration, sprites, the Live state box (phone widths of every tab: tests/test_ui_phone_tables_browser.py)
# --------------------------------------------------------------------------------------------------------------
def test_the_end_tells_who_won_outside_any_inner_scroll_box(server, browser):
    """The end-of-battle narration hid "X won the battle!" inside a 220 px inner scroll box."""
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    press(browser, "End")
    browser.wait_for(f"{VIEW}.querySelector('.wc-turn')?.textContent === 'End'")
    boxes = browser.evaluate(f"[...{VIEW}.querySelectorAll('.wc-end .wc-events')].map(e => "
                             "[e.scrollHeight, e.clientHeight, getComputedStyle(e).overflowY, e.textContent])")
    assert boxes and all(scroll <= client + 1 and flow == "visible" for scroll, client, flow, _ in boxes), boxes
    assert any("won the battle!" in text for *_, text in boxes)


def test_offline_sprites_fail_once_and_fall_back_to_text(server, browser):
    """Offline, every step asked again for about six sprites that never came (this machine has no internet: the
    requests hang until the next step drops them, and the next step asks again)."""
    browser.open(f"{server.url}?tab=replays")  # the probe: counts every sprite image put in the page from the start
    browser.evaluate("window.__wcSpriteAsks = {}; new MutationObserver(ms => { for (const m of ms) for (const n of "
                     "m.addedNodes) { if (!n.querySelectorAll) continue; for (const i of [n, ...n.querySelectorAll('img')])"
                     " if (i.tagName === 'IMG' && (i.getAttribute('src') || '').includes('/sprites/')) "
                     "window.__wcSpriteAsks[i.src] = (window.__wcSpriteAsks[i.src] || 0) + 1; } })"
                     ".observe(document, {childList: true, subtree: true})")
    browser.wait_for(f"{VIEW}?.querySelector('.wc-turn') != null", timeout=90)
    browser.evaluate("document.activeElement && document.activeElement.blur()")
    for key in ["ArrowRight"] * 8 + ["Home"] + ["ArrowRight"] * 3:
        press(browser, key)
        frames(browser)
    asks = browser.evaluate("window.__wcSpriteAsks")
    again = {url: n for url, n in asks.items() if n > 1}
    assert not again, again  # no sprite is asked for twice
    assert browser.evaluate(f"{VIEW}.querySelector('.wc-mon-name').textContent.trim() !== ''")  # names as text


def test_live_shows_the_players_state_box_only_when_someone_plays(server, browser):
    """Live always showed "The state the policies see (yours, this decision)", even when nobody was playing."""
    browser.open(f"{server.url}?tab=live")
    browser.wait_for("document.querySelector('#wc-live-start') !== null", timeout=90)
    assert "The state the policies see" not in browser.evaluate("document.body.innerText")


# --------------------------------------------------------------------------------------------------------------
# 8. Recordings "Page" 0 or -1 showed red Error badges and a blank table
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("typed", ["0", "-1"])
def test_a_page_below_one_shows_the_first_page(server, browser, typed):
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    page = "document.querySelector('#wc-replays-page input')"
    browser.evaluate(f"(() => {{ const e = {page}; e.focus(); e.select(); }})()")
    browser.call("Input.insertText", text=typed)
    for kind in ("keyDown", "keyUp"):  # with its text: Gradio submits a number box on the key's character
        browser.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                     text="\r" if kind == "keyDown" else "")
    error = "document.querySelector('.toast-body.error, .error')"  # Gradio's toast and its red badges
    browser.wait_for(f"{page}.value === '1' && !document.querySelector('#wc-replays-page').closest('.pending') || "
                     f"!!{error}", timeout=60)
    assert browser.evaluate(f"{error}?.textContent ?? null") is None
    assert browser.evaluate("document.querySelectorAll('#wc-replays-table tbody tr').length") > 0



# --------------------------------------------------------------------------------------------------------------
# 8. Battle A/B picked the first filtered option on Enter, so a parent's exactly typed id selected its branch
# --------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def branched(server):
    """The app's library with a branch of a recording added (the branch the newest: listed before its parent, and
    the only other recording whose id holds the parent's)."""
    import asyncio
    import os

    from wolfeclick.battle.branch import branch
    from wolfeclick.battle.store import load_recording, save_recording

    parent = load_recording(server.recordings / f"{SAMPLE_ID}.json")
    child = asyncio.run(branch(parent, 3, {}))
    path = save_recording(child, server.recordings)
    newest = max(p.stat().st_mtime for p in server.recordings.glob("*.json"))
    os.utime(path, (newest + 60, newest + 60))
    return server, parent.id, child.id


@pytest.mark.parametrize("box", ["a", "b"])
def test_battle_a_b_take_an_exactly_typed_id_on_enter(branched, browser, box):
    app, parent, child = branched
    assert child.startswith(parent) and child != parent
    open_replay(browser, f"{app.url}?replay={parent}&turn=1", 1)
    field = f"document.querySelector('#wc-pair-{box} input')"
    browser.click("[...document.querySelectorAll('button, .label-wrap')].find(e => "
                  "e.textContent.includes('Compare move by move'))")
    browser.wait_for(f"{field} && {field}.getBoundingClientRect().width > 0", timeout=30)
    browser.evaluate(f"(() => {{ const e = {field}; e.focus(); e.select(); }})()")
    for ch in parent:  # typed key by key: Gradio filters its options on the keys, not on inserted text
        browser.call("Input.dispatchKeyEvent", type="keyDown", key=ch, text=ch)
        browser.call("Input.dispatchKeyEvent", type="keyUp", key=ch)
    options = f"[...document.querySelectorAll('#wc-pair-{box} [role=option]')].map(o => o.getAttribute('aria-label'))"
    listed = browser.wait_for(f"(o => o.length === 2 && o)({options})", timeout=30)  # filtered: the two that match
    assert {label.rsplit(" · ", 1)[-1] for label in listed} == {parent, child}  # a label ends with its full id
    press(browser, "Enter")
    browser.wait_for(f"{field}.value !== {json.dumps(parent)}", timeout=30)  # Enter chose an option
    chosen = browser.evaluate(f"{field}.value")
    assert chosen.rsplit(" · ", 1)[-1] == parent, chosen
