"""Tables fit a phone (390×844) and a desktop window (1280×800): no header or cell runs past its table's box or is
cut inside its cell, and the columns that matter stay on screen.

On a phone Compare's Standings (9 columns) and Verdicts hid the win rate, its interval, the rating and the verdict
off-screen to the right, and the policy page's replay column read "not in th". The choice for phones (app.css): each
table keeps the columns that carry its answer and drops the ones a row's other cells already tell — Standings: policy,
battles, win rate and its interval, rating and its interval (wins, losses and ties are in the win rate and the
battles); Verdicts: pairing, verdict, why, more pairs needed (the verdict names the favoured side); Recent battles:
date, opponent, result, turns, replay (seat, how it ended, format and source stay on a wide screen). Cells wrap.

Every tab fits a 414 px phone's screen too (issue 27): nothing sticks out past its right edge, no chart title is cut.

One app serves the file, and the Compare tab's default tournament is played once in it: a second Run of the same
settings resumes the finished tournament (its results are in the app's folder) and shows the same tables at once.
"""

from __future__ import annotations

import json

import pytest

from devkit.browser import CHROMIUM, PAGE_IDLE, frames, open_replay, open_settled, sized_browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

SIZES = [pytest.param((1280, 800), id="desktop"), pytest.param((390, 844), id="phone")]

CUT = """(ids => ids.flatMap(id => {
  const box = document.querySelector(id); if (!box) return [[id, 'missing']];
  const right = box.getBoundingClientRect().right;
  return [...box.querySelectorAll('th, tbody td')].filter(c => c.getBoundingClientRect().width > 0).flatMap(c => {
    const texts = [c.querySelector('.header, span, .cell-wrap') || c, c.querySelector('.header, span') || c];
    const cut = c.getBoundingClientRect().right > right + 1 || texts.some(t => t.scrollWidth > t.clientWidth + 1);
    return cut ? [[id, c.textContent.trim().replace(/\\s*⋮$/, '').slice(0, 30)]] : [];
  });
}))(%s)"""
"""Headers and cells past their table's right edge or cut inside their cell (its text box, as the first
``.header, span, .cell-wrap`` or the first ``.header, span`` in it finds it)."""

SHOWN = """(id => [...document.querySelectorAll(id + ' th')].filter(c => c.getBoundingClientRect().width > 0)
  .map(c => c.textContent.trim().replace(/\\s*⋮$/, '')))(%r)"""


@pytest.mark.parametrize("size", SIZES)
def test_compare_tables_fit_with_their_answer_on_screen(server, size) -> None:
    """At 1280 px the Verdicts table's last column read "more pai", past its box's edge (issue 65, item 6); on a
    phone the Standings hid the win rate, its interval, the rating and the verdict off-screen."""
    with sized_browser(*size) as browser:
        open_settled(browser, f"{server.url}?tab=compare",
                     f"{PAGE_IDLE} && document.body.innerText.includes('Battles per pairing')", timeout=120)
        browser.wait_for("(() => { const b = [...document.querySelectorAll('button')].find(b => "
                         "b.innerText.trim() === '▶ Run'); if (!b) return false; b.click(); return true; })()",
                         timeout=90)
        browser.wait_for("document.querySelector('#wc-compare-verdicts tbody td') !== null && "
                         "document.querySelector('#wc-compare-verdicts').getBoundingClientRect().width > 0 && "
                         f"{PAGE_IDLE}", timeout=300)
        assert browser.evaluate(CUT % "['#wc-compare-table', '#wc-compare-verdicts']") == []
        standings = browser.evaluate(SHOWN % "#wc-compare-table")
        assert {"policy", "win rate", "95% CI", "rating", "rating 95% CI"} <= set(standings), standings
        verdicts = browser.evaluate(SHOWN % "#wc-compare-verdicts")
        assert {"pairing", "verdict", "why"} <= set(verdicts), verdicts


@pytest.mark.parametrize("size", SIZES)
def test_the_policy_pages_recent_battles_fit(server, size) -> None:
    with sized_browser(*size) as browser:
        browser.open(f"{server.url}?policy=heuristic")
        browser.wait_for("document.querySelector('#wc-policy-recent tbody td') !== null && "
                         "document.querySelector('#wc-policy-recent').getBoundingClientRect().width > 0 && "
                         f"document.body.innerText.includes('finished battles') && {PAGE_IDLE}", timeout=180)
        assert browser.evaluate(CUT % "['#wc-policy-recent', '#wc-policy-record']") == []
        shown = browser.evaluate(SHOWN % "#wc-policy-recent")
        assert {"date", "opponent", "result", "replay"} <= set(shown), shown


# --------------------------------------------------------------------------------------------------------------
# Every tab at a phone's 414 px (issue 27, item 8)
# --------------------------------------------------------------------------------------------------------------
PAIR = ("gen9randombattle-s1-heuristic-vs-random", "gen9randombattle-s1-heuristic-vs-maxdamage")
OVERFLOW = """(() => {  // shown elements past the screen's right edge that no sideways-scrolling box holds
  const W = innerWidth, out = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (!r.width || r.right <= W + 1 || getComputedStyle(e).visibility === 'hidden') continue;
    if (e.closest('[role=tablist], .tab-container')) continue;  // Gradio lays tabs out to measure its "…" menu
    if (e.ownerSVGElement) continue;  // inside a chart: its <svg> clips it (the <svg> itself is checked)
    let a = e.parentElement, held = false;
    for (; a; a = a.parentElement) {
      if (/auto|scroll/.test(getComputedStyle(a).overflowX) && a.getBoundingClientRect().right <= W + 1) { held = true; break; }
    }
    if (!held) out.push(`${e.tagName}.${String(e.className).slice(0, 50)} right=${Math.round(r.right)}`);
  }
  return out.slice(0, 8);
})()"""
"""The page clips what is wider than the screen (``.gradio-container`` hides overflow), so its scroll width stays
414 px: the test looks for what sticks out instead."""
CUT_TITLES = """(() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].filter(t => {
  const box = t.getBoundingClientRect(), svg = t.ownerSVGElement.getBoundingClientRect();
  return box.width && (box.left < svg.left - 1 || box.right > svg.right + 1);
}).map(t => t.textContent))()"""
"""A chart's title is SVG text: it does not wrap, and the chart's <svg> cuts what is wider than the chart."""


def test_phone_width_every_tab_fits_the_screen(server):
    """At 414 px Compare and Leaderboard were 684 and 989 px wide with no way to scroll sideways, and side by
    side's B column was cut."""
    with sized_browser(414, 900) as phone:
        phone.open(f"{server.url}?tab=compare")
        phone.wait_for("document.querySelector('button[aria-selected=true]')?.textContent.includes('Compare') && "
                       "!document.querySelector('[data-testid=status-tracker].pending')", timeout=90)
        phone.click("[...document.querySelectorAll('button')].find(b => b.innerText.trim() === '▶ Run')")
        phone.wait_for("document.body.innerText.includes('complete.')", timeout=100)  # the default small tournament
        phone.wait_for("document.querySelector('#wc-compare-verdicts tbody td') !== null", timeout=60)  # this Run's
        frames(phone)
        assert phone.evaluate(OVERFLOW) == [], "Compare"
        assert phone.evaluate(CUT_TITLES) == [], "Compare's chart titles"
        phone.open(f"{server.url}?policy=heuristic")
        phone.wait_for("document.body.innerText.includes('finished battles of') && "
                       "document.querySelectorAll('.js-plotly-plot').length >= 1 && !document.querySelector("
                       "'[data-testid=status-tracker].pending, [data-testid=status-tracker].generating')", timeout=90)
        frames(phone)
        assert phone.evaluate(OVERFLOW) == [], "Leaderboard"
        assert phone.evaluate(CUT_TITLES) == [], "Leaderboard's chart titles"
        open_replay(phone, f"{server.url}?replay={PAIR[0]}&turn=1", 1)
        # side by side: the two battles of one seed, as the app renders them, put in the page at phone width
        from devkit.appserver import app_client

        pair_html = app_client(server.url).predict(PAIR[0], PAIR[1], api_name="/compare_pair_open")[0]
        assert "wc-pair-cols" in pair_html
        phone.evaluate(f"""(() => {{ const d = document.createElement('div'); d.id = 'wc-pair-probe';
            d.innerHTML = {json.dumps(pair_html)}; document.querySelector('#wc-replays-viewer').after(d); }})()""")
        frames(phone)
        cols = phone.evaluate("[...document.querySelectorAll('#wc-pair-probe .wc-pair-col')]"
                              ".map(c => c.getBoundingClientRect()).map(r => [r.left, r.right])")
        assert len(cols) == 2 and all(left >= 0 and right <= 414 for left, right in cols), cols
        assert phone.evaluate(OVERFLOW) == [], "side by side"
