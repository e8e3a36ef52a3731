"""The charts' axes say what they count and can be read, checked on the figures as data (they are pure SVG strings)
from real battles played on the simulator, and in Chromium where the size they are drawn at matters.

- The cumulative-reward chart's y axis showed one label, "0", on a typical battle (seed 42, heuristic vs random:
  -36…33): the tick step was chosen from the range alone, 50 for a range of 80.
- The win-probability chart's x axis numbered decisions without saying so, while its turning points are listed by
  turn; its last two labels crowded ("21 22": the last decision was always added to the round ones).
- The estimate's chart (every replay opens with it) was drawn about 480 px wide in a 915 px card, its labels about
  8 px: a max-height shrank the whole drawing.
"""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from devkit.browser import CHROMIUM, open_replay, sized_browser
from devkit.samples import SAMPLE_ID
from wolfeclick.analysis.value_model import default_model, estimate_battle
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.ui.analysis_view import estimate_card
from wolfeclick.ui.battle_panels import BattleView
from wolfeclick.ui.viewer_payload import charts_svg, nice_ticks


@pytest.fixture(scope="module")
def battle() -> Recording:
    """The walker's battle: gen4randombattle, seed 42, heuristic vs random."""
    return asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), seed=42))


def _texts(svg: str, cls: str) -> list[tuple[float, str]]:
    return [(float(x), text) for x, text in re.findall(rf'<text class="{cls}" x="([\d.]+)"[^>]*>([^<]*)</text>', svg)]


def test_the_cumulative_reward_axis_has_several_labels(battle: Recording) -> None:
    html, _ = charts_svg(BattleView.of(battle))
    reward = html[html.index('data-chart="reward"'):]
    reward = reward[:reward.index("</svg>")]
    labels = [t for t in re.findall(r'<text x="[\d.]+" y="[\d.]+" class="wc-tick" text-anchor="end">([^<]*)</text>',
                                    reward) if t != "turn"]
    assert len(labels) >= 3, labels


def test_round_ticks_give_three_to_most_labels_whatever_the_range() -> None:
    draw = random.Random(65)
    for _ in range(2000):
        low = draw.uniform(-100, 100) * 10 ** draw.randint(-3, 3)
        high = low + draw.uniform(0.01, 200) * 10 ** draw.randint(-3, 3)
        for most in (4, 5, 8):
            ticks = nice_ticks(low, high, most)
            assert 3 <= len(ticks) <= most or (len(ticks) == 2 and most < 5), (low, high, most, ticks)
            assert all(low - 1e-9 <= t <= high + 1e-9 for t in ticks), (low, high, ticks)


def test_the_win_probability_axis_counts_turns_and_says_so(battle: Recording) -> None:
    estimate = estimate_battle(default_model(), battle)
    card = estimate_card(estimate, battle)
    ticks = _texts(card, "wc-an-xtick")
    turns = [t.turn for t in battle.turns]
    assert ticks and all(text.isdigit() and int(text) in turns for _, text in ticks), ticks
    assert re.search(r'class="wc-an-xtitle"[^>]*>turn<', card), "the axis names what it counts"
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', card).group(1))  # type: ignore[union-attr]
    gaps = [b - a for (a, _), (b, _) in zip(ticks, ticks[1:])]
    assert min(gaps) >= width / 16, (ticks, width)  # no two labels crowd ("21 22")


CARD = "document.querySelector('#wc-replays-rescores .wc-estimate')"


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")
@pytest.mark.parametrize("size", [pytest.param((1280, 800), id="desktop"), pytest.param((390, 844), id="phone")])
def test_the_estimate_chart_fills_its_card_with_readable_labels(server, size) -> None:
    with sized_browser(*size) as browser:
        open_replay(browser, f"{server.url}?replay={SAMPLE_ID}&turn=1", 1)
        browser.wait_for(f"{CARD}?.querySelector('svg.wc-an-chart')?.getBoundingClientRect().width > 0", timeout=60)
        card, chart, smallest, overlaps = browser.evaluate(f"""(() => {{
            const card = {CARD}, svg = card.querySelector('svg.wc-an-chart');
            const inner = card.getBoundingClientRect().width - parseFloat(getComputedStyle(card).paddingLeft)
                          - parseFloat(getComputedStyle(card).paddingRight);
            const boxes = [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBoundingClientRect()]);
            const overlaps = boxes.flatMap(([a, p], i) => boxes.slice(i + 1).filter(([b, q]) =>
                p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom).map(([b]) => a + '/' + b));
            const drawn = svg.querySelector('.wc-an-grid').getBoundingClientRect().width;  // the drawing, not its box
            return [inner, drawn, Math.min(...boxes.map(([, r]) => r.height)), overlaps];
        }})()""")
        assert chart >= 0.85 * card, (chart, card)  # the plot area (grid lines) spans the card, margins aside
        assert smallest >= 10, smallest  # px on screen: a tick label's box
        assert overlaps == [], overlaps  # no label runs into another
