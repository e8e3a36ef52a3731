"""Screenshots for the docs: docs/screenshot-live.png, -replays.png, -compare.png, -leaderboard.png (desktop,
1400 px) and docs/screenshot-replays-phone.png, -live-phone.png, -compare-phone.png, -leaderboard-phone.png (phone,
414 px; the page's width is printed: wider than 414 px would mean a tab does not fit).

Starts `python app.py` on a free port with copies of recordings/ (the same helper the UI tests use), drives
headless Debian Chromium over the DevTools protocol (press Start, wait for turns; open a share link; press Run,
wait for the results), and saves what the page shows. Sprites come from Showdown's servers in the browser; on a
machine without internet they fail to load and the page shows its plain-text fallback instead.

    .venv/bin/python -m scripts.screenshots [--out docs]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from devkit.appserver import Server  # noqa: E402
from devkit.browser import Browser  # noqa: E402

REPLAY = "gen4randombattle-s1-heuristic-vs-random"
CLICK = """(() => {{ const b = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === {label!r});
  if (!b) return false; b.click(); return true; }})()"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    server = Server(hostile=False, pace=0.5)
    widths: dict[str, int] = {}
    try:
        with Browser(width=1400, height=1750) as browser:
            # Live: a heuristic-vs-random battle, caught mid-way
            browser.open(f"{server.url}?tab=live")
            browser.wait_for("document.querySelector('[data-tab-id=live][aria-selected=true]') !== null")
            browser.wait_for(CLICK.format(label="▶ Start"))
            browser.wait_for("Number(document.querySelector('#wc-live-viewer .wc-turn')?.dataset.turn) >= 9",
                             timeout=90)
            browser.screenshot(args.out / "screenshot-live.png")
            browser.evaluate(CLICK.format(label="■ Stop"))

            # Replays: a share link to turn 9
            browser.open(f"{server.url}?replay={REPLAY}&turn=9")
            browser.wait_for("document.querySelector('[data-tab-id=replays][aria-selected=true]') !== null")
            browser.wait_for("document.querySelector('#wc-replays-viewer .wc-turn')?.dataset.turn === '9'")
            browser.evaluate("document.querySelector('#wc-replays-viewer details[data-key=state-p1]').open = true")
            browser.screenshot(args.out / "screenshot-replays.png")

            # Compare: the default three baselines, four battles per pairing
            browser.open(f"{server.url}?tab=compare")
            browser.wait_for("document.querySelector('[data-tab-id=compare][aria-selected=true]') !== null")
            browser.wait_for(CLICK.format(label="▶ Run"))
            browser.wait_for("document.body.innerText.includes('complete.')", timeout=180)
            browser.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 3")
            browser.screenshot(args.out / "screenshot-compare.png")

            # Leaderboard: heuristic's page over everything played above (the comparison and the sample recordings)
            browser.open(f"{server.url}?policy=heuristic")
            browser.wait_for("document.querySelector('[data-tab-id=leaderboard][aria-selected=true]') !== null")
            browser.wait_for("document.querySelector('#wc-policy-head h3') !== null", timeout=60)
            browser.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 1")
            browser.wait_for("document.body.innerText.includes('finished battles of')", timeout=60)
            time.sleep(3)  # let the tables settle (the tab's first-open event may still be answering)
            browser.screenshot(args.out / "screenshot-leaderboard.png")
        with Browser(width=414, height=1400) as phone:
            phone.call("Emulation.setDeviceMetricsOverride", width=414, height=1400, deviceScaleFactor=1, mobile=True)
            phone.open(f"{server.url}?replay={REPLAY}&turn=9")
            phone.wait_for("document.querySelector('#wc-replays-viewer .wc-turn')?.dataset.turn === '9'")
            phone.screenshot(args.out / "screenshot-replays-phone.png")
            phone.open(f"{server.url}?tab=live")
            phone.wait_for(CLICK.format(label="▶ Start"))
            phone.wait_for("Number(document.querySelector('#wc-live-viewer .wc-turn')?.dataset.turn) >= 5",
                           timeout=90)
            phone.screenshot(args.out / "screenshot-live-phone.png")
            phone.evaluate(CLICK.format(label="■ Stop"))
            # Compare and Leaderboard with what was played above: no wider than the screen
            phone.open(f"{server.url}?tab=compare")
            phone.wait_for("document.querySelector('[data-tab-id=compare][aria-selected=true]') !== null")
            phone.wait_for(CLICK.format(label="▶ Run"))
            phone.wait_for("document.body.innerText.includes('complete.')", timeout=180)
            phone.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 3")
            widths["compare-phone"] = phone.evaluate("document.documentElement.scrollWidth")
            phone.screenshot(args.out / "screenshot-compare-phone.png")
            phone.open(f"{server.url}?policy=heuristic")
            phone.wait_for("document.querySelector('#wc-policy-head h3') !== null", timeout=60)
            phone.wait_for("document.body.innerText.includes('finished battles of')", timeout=60)
            phone.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 1")
            phone.wait_for("!document.body.innerText.includes('queue:') && !document.querySelector("
                           "'[data-testid=status-tracker].pending, [data-testid=status-tracker].generating')",
                           timeout=60)  # the tab's first-open event answered too
            widths["leaderboard-phone"] = phone.evaluate("document.documentElement.scrollWidth")
            phone.screenshot(args.out / "screenshot-leaderboard-phone.png")
    finally:
        server.stop()
    for name in ("live", "replays", "compare", "leaderboard", "replays-phone", "live-phone", "compare-phone",
                 "leaderboard-phone"):
        print(args.out / f"screenshot-{name}.png", f"(page {widths[name]} px wide)" if name in widths else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
