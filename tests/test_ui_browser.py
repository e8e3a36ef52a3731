"""A real browser (headless Debian Chromium) drives the app as a user would; the rendered page is checked.

These assert behaviour only (the key-press → redraw timings are measured by benchmarks/app.py). Each test names
the issue-13 bug it pins; all of them fail on the old app (a server round trip per step, no client viewer).
"""

from __future__ import annotations

import re

import pytest

from devkit.browser import CHROMIUM, Browser, open_replay
from devkit.samples import HOSTILE_ID, SAMPLE_ID

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

VIEW = "document.querySelector('#wc-replays-viewer')"
KEYS = {"ArrowRight": 39, "ArrowLeft": 37, "Home": 36, "End": 35, " ": 32}


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def press(browser: Browser, key: str, shift: bool = False) -> None:
    """A real key press through the DevTools protocol (the page sees trusted keydown/keyup events)."""
    code = {" ": "Space"}.get(key, key)
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=KEYS[key],
                     nativeVirtualKeyCode=KEYS[key], modifiers=8 if shift else 0)


def step(browser: Browser) -> int:
    return int(browser.evaluate(f"{VIEW}.querySelector('.wc-turn').dataset.step"))


def shown_turn(browser: Browser) -> int:
    return int(browser.evaluate(f"{VIEW}.querySelector('.wc-turn').dataset.turn"))



def test_share_link_shows_that_turn(server, browser):
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=5", 5)
    dom = browser.dom()
    assert ">Turn 5<" in dom and "heuristic" in dom and "decided" in dom
    assert re.findall(r'<button[^>]*aria-selected="true"[^>]*data-tab-id="(\w+)"', dom) == ["replays"]
    link = browser.evaluate(f"{VIEW}.querySelector('[data-role=link]').value")
    assert link == f"{server.url}?replay={SAMPLE_ID}&turn=5"  # the copyable link to this very turn
    assert browser.evaluate(f"{VIEW}.querySelectorAll('svg.wc-svg .wc-mark').length") == 2  # both charts marked


def test_hostile_recording_renders_inert(server, browser):
    open_replay(browser, f"{server.url}?replay={HOSTILE_ID}&turn=2", 2)
    for _ in range(5):
        press(browser, "ArrowRight")
    assert browser.evaluate("window.__pwned === undefined")  # nothing ran
    assert browser.evaluate("document.getElementById('pwned') === null")  # nothing was injected
    text = browser.evaluate(f"{VIEW}.querySelector('.wc-view').innerText")
    assert "<script>window.__pwned=1</script>" in text and "${7*7}" in text  # shown as text, not evaluated
    assert "<script>" in browser.evaluate(f"{VIEW}.querySelector('.wc-charts').textContent")  # names: text
    dom = browser.dom()
    assert not re.search(r'<img[^<>]*id="pwned"', dom) and not re.search(r"<script>window\.__pwned", dom)


def test_hostile_names_in_the_recordings_table_stay_text(server, browser):
    browser.open(f"{server.url}?tab=replays")
    browser.wait_for(f"{VIEW}?.querySelector('.wc-turn') !== null")
    cell = browser.wait_for("[...document.querySelectorAll('[role=gridcell]')].map(e => e.textContent)"
                            ".find(t => t.includes('__pwned'))")
    assert "<script>window.__pwned=1</script>" in cell
    assert browser.evaluate("window.__pwned === undefined && document.getElementById('pwned') === null")


def test_keys_step_in_the_page_and_the_address_follows(server, browser):
    """Every step was a server round trip (0.17–0.44 s); now a key redraws synchronously, in the page."""
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=5", 5)
    start = step(browser)
    # the key press and the read happen in one script turn: no server could have answered in between
    moved = browser.evaluate(f"""(() => {{
        document.dispatchEvent(new KeyboardEvent('keydown', {{key: 'ArrowRight', bubbles: true}}));
        return Number({VIEW}.querySelector('.wc-turn').dataset.step); }})()""")
    assert moved == start + 1
    press(browser, "ArrowLeft")
    assert step(browser) == start
    press(browser, "ArrowRight", shift=True)
    assert shown_turn(browser) == 6
    press(browser, "ArrowLeft", shift=True)
    assert shown_turn(browser) == 5
    press(browser, "End")
    assert ">End<" in browser.evaluate(f"{VIEW}.querySelector('.wc-view').outerHTML")
    total = step(browser) + 1
    press(browser, "Home")
    assert step(browser) == 0
    label = browser.evaluate(f"{VIEW}.querySelector('[data-role=label]').textContent")
    assert label.startswith(f"Decision 1 of {total - 1} · turn 1")  # counts from 1, like the slider
    assert browser.evaluate(f"{VIEW}.querySelector('[data-role=slider]').value") == "1"
    browser.wait_for(f"location.search === '?replay={SAMPLE_ID}&turn=1'")
    press(browser, "ArrowRight", shift=True)
    browser.wait_for(f"location.search === '?replay={SAMPLE_ID}&turn=2'")  # the address bar follows


def test_the_address_bar_follows_a_burst_of_steps_once(server, browser):
    """Twenty steps in one script turn move the address bar twice: at the first of them (a step after a quiet moment
    moves it at once, issue 65) and, a moment later, to the last: Safari refuses more than 100
    history.replaceState calls in 30 s, and Play at 8/s made one per step. The link box follows every step at once."""
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    browser.wait_for(f"location.search === '?replay={SAMPLE_ID}&turn=1' && !window.__wcViewers.replays.state.addressTimer")
    burst = browser.evaluate(f"""(() => {{
        window.__wcReplaced = 0;
        const original = history.replaceState.bind(history);
        history.replaceState = (...args) => {{ window.__wcReplaced += 1; return original(...args); }};
        for (let n = 0; n < 20; n++)
            document.dispatchEvent(new KeyboardEvent('keydown', {{key: 'ArrowRight', bubbles: true}}));
        const link = new URL({VIEW}.querySelector('[data-role=link]').value);
        return [{VIEW}.querySelector('.wc-turn').dataset.step, link.search, location.search]; }})()""")
    shown, linked, address_now = burst
    assert int(shown) >= 2 and linked != f"?replay={SAMPLE_ID}&turn=1"  # the link box followed at once
    assert address_now not in (linked, f"?replay={SAMPLE_ID}&turn=1")  # the address: the burst's first step
    browser.wait_for(f"location.search === {linked!r} && !window.__wcViewers.replays.state.addressTimer")
    assert browser.evaluate("window.__wcReplaced") == 2


def test_the_end_shows_the_state_after_the_last_move(server, browser):
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    press(browser, "End")
    field = browser.evaluate(f"{VIEW}.querySelector('.wc-field').innerText")
    assert "fainted" in field and not re.search(r"\b7% HP", field)


def test_turn_list_is_clickable(server, browser):
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    items = browser.evaluate(f"{VIEW}.querySelectorAll('.wc-turnlist li').length")
    assert items > 10
    assert "fainted" in browser.evaluate(f"{VIEW}.querySelector('.wc-turnlist').innerText")  # KOs listed
    browser.click(f"{VIEW}.querySelector('.wc-turnlist li[data-step=\"7\"]')")
    assert step(browser) == 7
    assert browser.evaluate(f"{VIEW}.querySelector('.wc-turnlist li.wc-current').dataset.step") == "7"


@pytest.mark.parametrize("speed", ["1", "2", "4", "8"])
def test_pause_stops_within_one_step_at_every_speed(server, browser, speed):
    """Pause did not pause at speed 4 or 8 (the button flipped to Play and back, playback went on)."""
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    browser.evaluate(f"(() => {{ const s = {VIEW}.querySelector('[data-role=speed]'); s.value = '{speed}';"
                     "s.dispatchEvent(new Event('change')); })()")
    browser.click(f"{VIEW}.querySelector('[data-act=play]')")
    browser.wait_for(f"Number({VIEW}.querySelector('.wc-turn').dataset.step) >= 2", timeout=10)
    browser.click(f"{VIEW}.querySelector('[data-act=play]')")
    paused_at = step(browser)
    assert browser.evaluate(f"{VIEW}.querySelector('[data-act=play]').textContent") == "▶ Play"
    assert browser.evaluate("(v => !v.state.playing && v.state.timer === null)(window.__wcViewers.replays)")
    assert steps_after_ticks(browser, 3 / float(speed)) == paused_at  # not one step more


def steps_after_ticks(browser: Browser, seconds: float) -> int:
    """The shown step once the page's own clock has passed ``seconds`` (three play intervals): a tick that was
    still scheduled would have moved it by then. The wait is the page's, on its event loop, not a sleep here."""
    return browser.evaluate(f"new Promise(done => setTimeout(() => done(Number({VIEW}.querySelector('.wc-turn')"
                            f".dataset.step)), {int(seconds * 1000)}))")


def test_space_plays_and_pauses(server, browser):
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    press(browser, " ")
    browser.wait_for(f"Number({VIEW}.querySelector('.wc-turn').dataset.step) >= 1", timeout=5)
    press(browser, " ")
    paused_at = step(browser)
    assert browser.evaluate("(v => !v.state.playing && v.state.timer === null)(window.__wcViewers.replays)")
    assert steps_after_ticks(browser, 3.0) == paused_at  # three intervals at 1/s


@pytest.mark.parametrize("value, turn, said", [("-3", 1, "Turn -3 is not in this battle"),
                                               ("0", 1, "Turn 0 is not in this battle"),
                                               ("2.5", 2, "Turn numbers are whole"),
                                               ("abc", 5, "is not a turn number"), ("9", 9, ""),
                                               ("", 5, "Type a turn number"), ("0x10", 5, "is not a turn number")])
def test_jump_to_turn_clamps_and_says_so(server, browser, value, turn, said):
    """Jump to −3 turned four components into red Error badges; 0 and 2.5 were accepted silently. An empty box
    and Enter went to turn 1, and "0x10" to turn 16 (issue 27): both are refused, staying where it was."""
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=5", 5)
    browser.evaluate(f"""(() => {{ const j = {VIEW}.querySelector('[data-role=jump]'); j.value = {value!r};
        j.dispatchEvent(new KeyboardEvent('keydown', {{key: 'Enter', bubbles: true}})); }})()""")
    assert shown_turn(browser) == turn
    message = browser.evaluate(f"{VIEW}.querySelector('[data-role=msg]').textContent")
    assert said in message and "\n" not in message
    assert not browser.evaluate("[...document.querySelectorAll('*')].some(e => e.children.length === 0 && "
                                "e.textContent.trim() === 'Error')")


def test_state_panel_keeps_its_open_state_across_steps(server, browser):
    """"State it saw" closed on every update, so it could not be read while watching."""
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=3", 3)
    browser.evaluate(f"{VIEW}.querySelector('details[data-key=state-p1]').open = true")
    browser.wait_for("window.__wcViewers.replays.state.open['state-p1'] === true")  # the toggle event has landed
    press(browser, "ArrowRight")
    press(browser, "ArrowRight")
    assert browser.evaluate(f"{VIEW}.querySelector('details[data-key=state-p1]').open") is True
    assert browser.evaluate(f"{VIEW}.querySelector('details[data-key=state-p2]').open") is False


def test_viewpoint_switch_hides_the_other_side(server, browser):
    open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
    unknown = f"[...{VIEW}.querySelectorAll('.wc-team-p2 .wc-unknown')].filter(e => e.offsetParent).length"
    hidden_p1 = browser.evaluate(unknown)
    browser.evaluate(f"(() => {{ const s = {VIEW}.querySelector('[data-role=persp]'); s.value = 'p2';"
                     "s.dispatchEvent(new Event('change')); })()")
    assert hidden_p1 > 0 and browser.evaluate(unknown) == 0


def test_phone_width_puts_the_battle_first(server):
    """At 414 px a share link opened the battle 1,265 px down, below all controls; charts stayed side by side."""
    with Browser(width=414, height=900) as phone:
        phone.call("Emulation.setDeviceMetricsOverride", width=414, height=900, deviceScaleFactor=1, mobile=True)
        open_replay(phone, f"{server.url}?replay={SAMPLE_ID}&turn=5", 5)
        top = phone.evaluate(f"{VIEW}.querySelector('.wc-view').getBoundingClientRect().top + window.scrollY")
        controls = phone.evaluate("document.querySelector('#wc-replays-viewer').closest('.wc-tab-row')"
                                  ".querySelector('.wc-controls-col').getBoundingClientRect().top + window.scrollY")
        assert top < controls and top < 450, (top, controls)
        charts = phone.evaluate(f"[...{VIEW}.querySelectorAll('.wc-chart')].map(c => c.getBoundingClientRect())"
                                ".map(r => [r.top, r.bottom, r.width])")
        assert len(charts) == 2 and charts[1][0] >= charts[0][1] - 1  # stacked
        assert charts[0][2] > 300  # full width, not 170 px
