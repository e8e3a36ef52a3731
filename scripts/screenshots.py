"""Screenshots of the three tabs for the docs: docs/screenshot-live.png, -replays.png, -compare.png.

Starts `python app.py` on a free port with copies of recordings/ (the same helper the UI tests use), drives
headless Debian Chromium over the DevTools protocol (press Start, wait for turns; open a share link; press Run,
wait for the results), and saves what the page shows. Sprites come from Showdown's servers in the browser; on a
machine without internet they fail to load and the page shows its plain-text fallback instead.

    .venv/bin/python scripts/screenshots.py [--out docs]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_ui_support import Browser, Server  # noqa: E402

REPLAY = "gen4randombattle-s1-heuristic-vs-random"
CLICK = """(() => {{ const b = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === {label!r});
  if (!b) return false; b.click(); return true; }})()"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    server = Server(hostile=False, pace=0.5)
    try:
        with Browser(width=1400, height=1750) as browser:
            # Live: a heuristic-vs-random battle, caught mid-way
            browser.open(f"{server.url}?tab=live")
            browser.wait_for("document.querySelector('[data-tab-id=live][aria-selected=true]') !== null")
            browser.wait_for(CLICK.format(label="▶ Start"))
            browser.wait_for("Number(document.querySelector('#component-0 .wc-turn, .wc-turn')?.dataset.turn) >= 9",
                             timeout=60)
            browser.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 2")
            browser.screenshot(args.out / "screenshot-live.png")
            browser.evaluate(CLICK.format(label="■ Stop"))

            # Replays: a share link to turn 9
            browser.open(f"{server.url}?replay={REPLAY}&turn=9")
            browser.wait_for("document.querySelector('[data-tab-id=replays][aria-selected=true]') !== null")
            browser.wait_for("[...document.querySelectorAll('.wc-turn')].some(e => e.dataset.turn === '9')")
            browser.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 2")
            browser.screenshot(args.out / "screenshot-replays.png")

            # Compare: the default three baselines, four battles per pairing
            browser.open(f"{server.url}?tab=compare")
            browser.wait_for("document.querySelector('[data-tab-id=compare][aria-selected=true]') !== null")
            browser.wait_for(CLICK.format(label="▶ Run"))
            browser.wait_for("document.body.innerText.includes('complete.')", timeout=180)
            browser.wait_for("document.querySelectorAll('.js-plotly-plot').length >= 3")
            browser.screenshot(args.out / "screenshot-compare.png")
    finally:
        server.stop()
    for name in ("live", "replays", "compare"):
        print(args.out / f"screenshot-{name}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
