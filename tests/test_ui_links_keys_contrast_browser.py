"""Share links and the address bar, keyboard focus, text contrast and the wording a first visit meets, in headless
Debian Chromium at 1280×800 and 390×844 (issue 65: the app as a newcomer walks it).

Each test names the item it pins and fails on the app before that item's fix. Waits are on conditions in the page
(``Browser.wait_for``); nothing here sleeps and then checks. Where a test must read the page "at once" after a
key, the key and the read happen in one script turn, so no timer of the page's can have run in between.
"""

from __future__ import annotations

import pytest

from devkit.browser import CHROMIUM, PAGE_IDLE, Browser, open_replay, open_settled, sized_browser
from devkit.samples import SAMPLE_ID, sample_data
from wolfeclick.battle.schema import Recording

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

VIEW = "document.querySelector('#wc-replays-viewer')"
REPLAYS = "window.__wcViewers.replays.state"
LIVE = "window.__wcViewers.live.state"
SIZES = [(1280, 800), (390, 844)]


def copy_sample(server, replay_id: str) -> str:
    data = sample_data()
    data["id"] = replay_id
    (server.recordings / f"{replay_id}.json").write_text(Recording.model_validate(data).to_json(), encoding="utf-8")
    return replay_id


def key_now(browser: Browser, key: str) -> list:
    """A key press and, in the same script turn, what the page shows and what its address says."""
    return browser.evaluate(f"""(() => {{
        document.dispatchEvent(new KeyboardEvent('keydown', {{key: {key!r}, bubbles: true}}));
        return [Number({VIEW}.querySelector('.wc-turn').dataset.step), {REPLAYS}.turns[{REPLAYS}.index],
                location.search, {VIEW}.querySelector('[data-role=label]').textContent]; }})()""")


def address_of(step: int, turn: int, first_of_turn: bool) -> str:
    return f"&turn={turn}" + ("" if first_of_turn else f"&step={step}")


# --------------------------------------------------------------------------------------------------------------
# 1. After Live → "Open this battle in Replays" the address bar named the step before the one shown
# --------------------------------------------------------------------------------------------------------------
def test_after_live_open_in_replays_the_address_names_the_shown_step_at_once(server) -> None:
    """Home showed "Decision 1 of 24 · turn 1" while the address still said ``&turn=16&step=24``, and → showed
    decision 2 with ``&turn=1``: the address followed 200 ms after each step. Now a step that comes after a quiet
    moment moves the address in the same script turn; only a burst is held back (to its last step)."""
    with Browser(1280, 800) as browser:
        browser.open(f"{server.url}?tab=live")
        browser.wait_for("document.querySelector('#wc-live-start') !== null && " + PAGE_IDLE, timeout=90)
        browser.click("document.querySelector('#wc-live-start')")
        browser.wait_for(f"window.__wcViewers?.live?.state.data?.finished && {LIVE}.data.id", timeout=180)
        browser.wait_for("[...document.querySelectorAll('button')].some(e => e.id === 'wc-live-open' && "
                         "e.getBoundingClientRect().width > 0)", timeout=60)
        battle = browser.evaluate(f"{LIVE}.data.id")
        end = browser.evaluate(f"{LIVE}.total") - 1
        browser.click("document.querySelector('#wc-live-open')")
        browser.wait_for(f"{REPLAYS}.data?.id === {battle!r} && {REPLAYS}.index === {end}", timeout=60)
        browser.wait_for(f"location.search.includes('step={end}') && !{REPLAYS}.addressTimer", timeout=30)
        for key, step in (("Home", 0), ("ArrowRight", 1)):
            browser.wait_for(f"!{REPLAYS}.addressTimer", timeout=30)  # a quiet moment since the last step
            shown, turn, address, label = key_now(browser, key)
            assert shown == step and label.startswith(f"Decision {step + 1} of"), label
            first = browser.evaluate(f"{REPLAYS}.turns.indexOf({turn}) === {step}")
            assert address == f"?replay={battle}" + address_of(step, turn, first), (key, address, label)


# --------------------------------------------------------------------------------------------------------------
# 2. A rescore (or a finished analysis) opened the replay again at decision 1
# --------------------------------------------------------------------------------------------------------------
def test_a_rescore_keeps_the_decision_the_viewer_shows(server) -> None:
    """"Ask a policy (rescore)" sent the viewer from "Decision 8 of 35" to "Decision 1 of 35"."""
    replay = copy_sample(server, "keep-place-" + SAMPLE_ID)
    with Browser(1280, 800) as browser:
        open_replay(browser, f"{server.url}?replay={replay}&turn=3", 3)
        browser.evaluate(f"window.__wcViewers.replays.show({REPLAYS}.index + 5)")
        at = browser.evaluate(f"{REPLAYS}.index")
        token = browser.evaluate(f"{REPLAYS}.token")
        browser.click("[...document.querySelectorAll('button, .label-wrap')].find(e => "
                      "e.textContent.includes('Ask a policy'))")
        start = "document.querySelector('#wc-rescore-start')"
        browser.wait_for(f"{start} != null && {start}.getBoundingClientRect().width > 0 && {PAGE_IDLE}", timeout=60)
        browser.click(f"{start}")
        browser.wait_for(f"{REPLAYS}.token !== {token!r}", timeout=240)  # the replay was sent again
        assert browser.evaluate(f"{REPLAYS}.index") == at
        label = browser.evaluate(f"{VIEW}.querySelector('[data-role=label]').textContent")
        assert label.startswith(f"Decision {at + 1} of"), label
        turn = browser.evaluate(f"{REPLAYS}.turns[{at}]")
        browser.wait_for(f"location.search.startsWith('?replay={replay}&turn={turn}')", timeout=30)


# --------------------------------------------------------------------------------------------------------------
# 3. Dark mode (Gradio follows prefers-color-scheme): every text of the viewer reads at 4.5:1 or better
# --------------------------------------------------------------------------------------------------------------
CONTRAST = """(() => {
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
                               return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const over = (top, under) => { const a = top.length > 3 ? top[3] : 1;
                                 return [0, 1, 2].map((k) => top[k] * a + under[k] * (1 - a)); };
  const backdrop = (e) => {  // the colour behind an element: its own and its ancestors' backgrounds, blended
    const layers = [];
    for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.length && (c.length === 3 || c[3] > 0)) { layers.push(c); if (c.length === 3 || c[3] >= 1) break; }
    }
    let colour = [255, 255, 255];  // under everything (an opaque layer covers it)
    for (const c of layers.reverse()) colour = over(c, colour);
    return colour;
  };
  const bad = [];
  for (const root of ROOTS) {
    for (const e of root.querySelectorAll('*')) {
      const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.data.trim());
      if (!own || !e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
      const s = getComputedStyle(e);
      const svg = e instanceof SVGElement;  // an SVG text's colour is its fill, its backdrop the box around the SVG
      const bg = backdrop(svg ? e.closest('svg').parentElement : e);
      const fg = over(rgb(svg ? s.fill : s.color), bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      if (ratio < 4.5) bad.push([e.tagName + '.' + e.className, e.textContent.trim().slice(0, 30), s.color,
                                 'rgb(' + bg.map(Math.round) + ')', Math.round(ratio * 100) / 100]);
    }
  }
  return bad;
})()"""


@pytest.mark.parametrize("scheme, size", [("dark", SIZES[0]), ("dark", SIZES[1]), ("light", SIZES[0])],
                         ids=["dark-desktop", "dark-phone", "light-desktop"])
def test_every_text_of_the_viewer_reads_at_four_and_a_half_to_one(server, scheme, size) -> None:
    """Dark mode: narration and turn-list text stayed blue-700 / dark red on dark cards (about 2.2:1), and the
    highlighted turn's "T5" was white on a light highlight. Light mode: Gradio's subdued grey read 2.5:1, the PAR
    badge 2.9:1, the turning-point mark 2.2:1."""
    with sized_browser(*size) as browser:
        browser.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}])
        open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=5", 5)
        dark = "document.querySelector('.dark') !== null"
        browser.wait_for(dark if scheme == "dark" else f"!({dark})", timeout=30)
        browser.wait_for(f"{VIEW}.querySelector('.wc-turnlist li.wc-current') !== null", timeout=30)
        roots = f"[{VIEW}, document.querySelector('#wc-replays-rescores')]"
        bad = browser.evaluate(CONTRAST.replace("ROOTS", roots))
        assert bad == [], bad


# --------------------------------------------------------------------------------------------------------------
# 4. A share link shows its tab from the first frame the tabs are drawn in, not Live until the load event answers
# --------------------------------------------------------------------------------------------------------------
TAB_FRAMES = """(() => {
  window.__wcTabFrames = [];
  const look = () => {
    const selected = document.querySelector('button[role=tab][aria-selected=true]');
    if (selected) window.__wcTabFrames.push(selected.dataset.tabId);
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})();"""
"""Put in every new document before its own scripts: the tab shown at every frame the page draws."""


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
@pytest.mark.parametrize("query, tab", [("?tab=leaderboard", "leaderboard"), (f"?replay={SAMPLE_ID}&turn=5", "replays"),
                                        ("?tab=compare", "compare")], ids=["leaderboard", "replay", "compare"])
def test_a_share_link_shows_its_tab_first(server, size, query, tab) -> None:
    """``?tab=leaderboard`` showed Live at 2.4 s and the Leaderboard at 6.0 s; ``?replay=…&turn=5`` showed Live until
    3.9 s (the tab was chosen by the page's load event, after its round trip)."""
    with sized_browser(*size) as browser:
        browser.call("Page.addScriptToEvaluateOnNewDocument", source=TAB_FRAMES)
        browser.open(f"{server.url}{query}")
        browser.wait_for(f"document.querySelector('button[role=tab][data-tab-id={tab}][aria-selected=true]') !== null"
                         f" && {PAGE_IDLE}", timeout=90)
        frames = browser.evaluate("window.__wcTabFrames")
        assert frames and set(frames) == {tab}, sorted(set(frames), key=frames.index)


# --------------------------------------------------------------------------------------------------------------
# 11. Keyboard: a turn-list line is reached with Tab and opened with Enter; a focused dropdown shows a focus ring
# --------------------------------------------------------------------------------------------------------------
def press_key(browser: Browser, key: str, code: int) -> None:
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code,
                     nativeVirtualKeyCode=code, text="\r" if key == "Enter" and kind == "keyDown" else "")


def test_enter_on_a_turn_list_line_opens_it(server) -> None:
    """Every line had ``tabindex=-1``: none could be reached with Tab, and Enter on one did nothing."""
    with Browser(1280, 800) as browser:
        open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=3", 3)
        current = f"{VIEW}.querySelector('.wc-turnlist li.wc-current')"
        assert browser.evaluate(f"{current}.tabIndex") == 0  # the shown step's line is in the Tab order
        assert browser.evaluate(f"[...{VIEW}.querySelectorAll('.wc-turnlist li[tabindex=\"0\"]')].length") == 1
        at = browser.evaluate(f"{REPLAYS}.index")
        browser.evaluate(f"{VIEW}.querySelector('.wc-turnlist li[data-step=\"{at + 4}\"]').focus()")
        press_key(browser, "Enter", 13)
        browser.wait_for(f"{REPLAYS}.index === {at + 4}", timeout=10)
        assert browser.evaluate(f"{current}.dataset.step") == str(at + 4)
        assert browser.evaluate("document.activeElement.dataset.step") == str(at + 4)  # focus stays on the line
        assert not browser.evaluate(f"{REPLAYS}.playing")  # Enter opened it; nothing else happened


@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_a_focused_dropdown_shows_a_focus_ring(server, size) -> None:
    """Tabbing onto a dropdown changed nothing on screen."""
    with sized_browser(*size) as browser:
        combo = "document.querySelector('#wc-live-agent input[role=combobox]')"
        open_settled(browser, f"{server.url}?tab=live",
                     f"{combo} !== null && {combo}.getBoundingClientRect().width > 0 && {PAGE_IDLE}", timeout=60)
        browser.call("Emulation.setFocusEmulationEnabled", enabled=True)  # a headless page has no window focus
        browser.evaluate(f"{combo}.blur()")
        ring = f"""(() => {{ for (let n = {combo}; n && !n.matches('#wc-live-agent'); n = n.parentElement) {{
            const s = getComputedStyle(n);
            if ((s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2) || /\\d+px \\d+px 0px [2-9]/.test(s.boxShadow))
                return true; }} return false; }})()"""
        assert not browser.evaluate(ring)
        browser.evaluate(f"{combo}.focus()")
        browser.wait_for(f"document.activeElement === {combo}", timeout=10)
        assert browser.evaluate(ring), browser.evaluate(f"getComputedStyle({combo}.parentElement).outline")


# --------------------------------------------------------------------------------------------------------------
# 8. Playing "You": the hint names the reveal toggle only once that toggle is there
# --------------------------------------------------------------------------------------------------------------
def test_the_hidden_side_hint_names_the_toggle_only_once_it_is_shown(server) -> None:
    """While a person's battle went on, the other side's panel said *tick "Show what the other side knew"*, a toggle
    hidden until the battle ends. The payloads are the server's own (``live_payload``), the person playing p1."""
    from dataclasses import replace

    from wolfeclick.ui.battle_panels import BattleMeta, BattleView
    from wolfeclick.ui.viewer_payload import live_payload, to_json

    recording = Recording.model_validate(sample_data())
    going = BattleView(replace(BattleMeta.of(recording), result=None), list(recording.turns[:6]))
    done = BattleView.of(recording)
    hint = ("getComputedStyle(document.querySelector('#wc-live-viewer .wc-dec-p2'), '::after').content")
    toggle = "document.querySelector('#wc-live-viewer [data-role=revealrow]')"
    with Browser(1280, 800) as browser:
        browser.open(f"{server.url}?tab=live")
        browser.wait_for(f"window.__wcViewers?.live !== undefined && {PAGE_IDLE}", timeout=90)
        for view, finished in ((going, False), (done, True)):
            payload = live_payload(view, run="you-p1", since=0, status="", you="p1")
            browser.evaluate(f"window.__wcViewers.live.receive(JSON.parse({to_json(payload)!r}))")
            browser.evaluate("window.__wcViewers.live.show(2)")
            browser.wait_for(f"{toggle}.hidden === {str(not finished).lower()}", timeout=10)
            text = browser.evaluate(hint)
            if finished:
                assert "Show what the other side knew" in text, text
            else:
                assert "Show what the other side knew" not in text and "tick" not in text, text
                assert "until the battle ends" in text, text


# --------------------------------------------------------------------------------------------------------------
# 10. The Recording box tells which battle is open
# --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=["desktop", "phone"])
def test_the_recording_box_shows_the_open_battles_own_part_first(server, size) -> None:
    """Every id of a format starts alike, and the box showed "gen9randombattle-…" whichever battle was open."""
    with sized_browser(*size) as browser:
        open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
        box = "document.querySelector('#wc-replays-select input[role=combobox]')"
        value = browser.wait_for(f"{box}?.value", timeout=60)
        own = SAMPLE_ID.removeprefix("gen9randombattle-")
        assert value.startswith(own) and value.endswith(SAMPLE_ID), value  # the whole id stays findable


def test_an_analysis_that_has_not_counted_its_rollouts_says_it_is_starting() -> None:
    """The analysis status began with "0 of 0 rollouts"."""
    from wolfeclick.ui.analysis_run import progress_html

    first = progress_html(0, 0)
    assert "0 of 0" not in first and "Starting the analysis" in first
    assert "3 of 40 rollouts" in progress_html(3, 40)


# --------------------------------------------------------------------------------------------------------------
# 6. Compare's tables at 1280 px (the Verdicts table's last column read "more pai", past its box's edge): tested with
# the phone's in tests/test_ui_phone_tables_browser.py, on the one tournament that file plays
# --------------------------------------------------------------------------------------------------------------
