"""Without the ``llm`` extra the app still offers the published presets, but says at once that they cannot play here.

Before, ``preset:run1…3`` were offered like any policy and only **Start** said, in one line, that checkpoint support
was not installed. Now every list that offers them (Live's sides, Replays' take-over and rescore, Compare's players,
Rate a policy) labels them "unavailable here" with the extra's one-line reason, after the policies that can play, and
the dropdowns grey them. The pure part is checked on the choices; the page on an app whose Python cannot import the
extra's modules (a ``sitecustomize`` on its path marks them missing), at 1280×800 and 390×844.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from devkit import ROOT
from devkit.browser import CHROMIUM, PAGE_IDLE, Browser, sized_browser
from wolfeclick.extras import EXTRAS
from wolfeclick.policies.catalogue import ServedPolicy
from wolfeclick.ui.live_page import HUMAN_CHOICE, policy_choices

UNAVAILABLE = "unavailable here"

REASON = "needs the llm extra (pip install 'wolfeclick-arena[llm]')"


class _Listed:
    def __init__(self, entries: list[ServedPolicy]) -> None:
        self._entries = entries

    def entries(self) -> list[ServedPolicy]:
        return list(self._entries)


CATALOGUE = _Listed([ServedPolicy("random", "uniform", "random"), ServedPolicy("heuristic", "rules", "heuristic"),
                     ServedPolicy("preset:run1", "GRPO run 1", "preset", gpu=True),
                     ServedPolicy("preset:run2", "GRPO run 2", "preset", gpu=True),
                     ServedPolicy("agent", "an installed agent", "agent", external=True)])


def test_presets_are_labelled_unavailable_with_the_reason_when_the_extra_is_missing() -> None:
    choices = policy_choices(CATALOGUE, missing=REASON)  # type: ignore[arg-type]
    values = [value for _, value in choices]
    assert values == ["heuristic", "random", "agent", "preset:run1", "preset:run2", HUMAN_CHOICE[1]]
    labels = dict((value, label) for label, value in choices)
    for preset in ("preset:run1", "preset:run2"):
        assert labels[preset] == f"{preset} — {UNAVAILABLE}: {REASON}"
    assert all(UNAVAILABLE not in labels[v] for v in ("random", "heuristic", "agent"))
    # with the extra installed nothing changes
    plain = policy_choices(CATALOGUE, missing="")  # type: ignore[arg-type]
    assert [v for _, v in plain] == ["heuristic", "random", "preset:run1", "preset:run2", "agent", HUMAN_CHOICE[1]]
    assert all(UNAVAILABLE not in label for label, _ in plain)


pytestmark_browser = pytest.mark.skipif(CHROMIUM is None,
                                        reason="Debian's chromium is not installed (run `make browser`)")


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The app on a Python that cannot import the ``llm`` extra's modules."""
    from devkit.appserver import Server

    hide = tmp_path_factory.mktemp("no-llm")
    (hide / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{name!r}] = None  # as if not installed\n" for name in EXTRAS["llm"]),
        encoding="utf-8")
    app = Server(extra_env={"PYTHONPATH": f"{hide}:{ROOT}"})
    yield app
    app.stop(wait=False)


OPTIONS = """(() => {  // the open dropdown's options: label, greyed
  const items = [...document.querySelectorAll('%s [data-testid=dropdown-option]')].map(li => {
    const style = getComputedStyle(li);
    return [li.getAttribute('aria-label'), Number(style.opacity) < 0.9 || style.fontStyle === 'italic'];
  });
  return items.length ? items : null;
})()"""


def click(browser: Browser, selector: str) -> None:
    """A real click (Gradio's dropdown opens its list on the pointer, not on a script's click())."""
    x, y = browser.evaluate(f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect(); "
                            "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


@pytestmark_browser
@pytest.mark.parametrize("size", [pytest.param((1280, 800), id="desktop"), pytest.param((390, 844), id="phone")])
def test_the_pages_grey_the_presets_with_the_reason_when_the_extra_is_missing(bare_server, size) -> None:
    with sized_browser(*size) as browser:
        browser.open(bare_server.url)
        browser.wait_for("document.querySelector('#wc-live-agent input[role=combobox]') !== null && "
                         "document.body.innerText.includes('No checkpoint stack here') && " + PAGE_IDLE, timeout=120)
        browser.call("Emulation.setFocusEmulationEnabled", enabled=True)  # a headless page has no window focus
        browser.evaluate("document.querySelector('#wc-live-agent input').scrollIntoView({block: 'center'})")
        click(browser, "#wc-live-agent input")
        items = browser.wait_for(OPTIONS % "#wc-live-agent", timeout=30)
        presets = [(label, grey) for label, grey in items if label.startswith("preset:")]
        assert len(presets) == 3, items
        for label, grey in presets:
            assert UNAVAILABLE in label and "pip install 'wolfeclick-arena[llm]'" in label and grey, (label, grey)
            assert len(label) <= 90, label  # one line's reason, not the whole error
        others = [(label, grey) for label, grey in items if not label.startswith("preset:")]
        assert others and not any(grey or UNAVAILABLE in label for label, grey in others), others
        # what can play comes first
        assert not items[0][0].startswith("preset:")
        # Compare's players say so too
        browser.open(f"{bare_server.url}?tab=compare")
        compare = browser.wait_for("""(() => { const labels = [...document.querySelectorAll('label')].map(l =>
            l.innerText.trim()).filter(t => t.startsWith('preset:')); return labels.length ? labels : null; })()""",
                                   timeout=60)
        assert all(UNAVAILABLE in text for text in compare), compare

