"""Tables fit a phone (390×844) and a desktop window (1280×800): no header or cell runs past its table's box or is
cut inside its cell, and the columns that matter stay on screen.

On a phone Compare's Standings (9 columns) and Verdicts hid the win rate, its interval, the rating and the verdict
off-screen to the right, and the policy page's replay column read "not in th". The choice for phones (app.css): each
table keeps the columns that carry its answer and drops the ones a row's other cells already tell — Standings: policy,
battles, win rate and its interval, rating and its interval (wins, losses and ties are in the win rate and the
battles); Verdicts: pairing, verdict, why, more pairs needed (the verdict names the favoured side); Recent battles:
date, opponent, result, turns, replay (seat, how it ended, format and source stay on a wide screen). Cells wrap.
"""

from __future__ import annotations

import pytest

from devkit.browser import CHROMIUM, PAGE_IDLE, open_settled, sized_browser

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")

SIZES = [pytest.param((1280, 800), id="desktop"), pytest.param((390, 844), id="phone")]

CUT = """(ids => ids.flatMap(id => {
  const box = document.querySelector(id); if (!box) return [[id, 'missing']];
  const right = box.getBoundingClientRect().right;
  return [...box.querySelectorAll('th, tbody td')].filter(c => c.getBoundingClientRect().width > 0).flatMap(c => {
    const text = c.querySelector('.header, span, .cell-wrap') || c;
    const cut = c.getBoundingClientRect().right > right + 1 || text.scrollWidth > text.clientWidth + 1;
    return cut ? [[id, c.textContent.trim().replace(/\\s*⋮$/, '').slice(0, 30)]] : [];
  });
}))(%s)"""

SHOWN = """(id => [...document.querySelectorAll(id + ' th')].filter(c => c.getBoundingClientRect().width > 0)
  .map(c => c.textContent.trim().replace(/\\s*⋮$/, '')))(%r)"""


@pytest.mark.parametrize("size", SIZES)
def test_compare_tables_fit_with_their_answer_on_screen(server, size) -> None:
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
