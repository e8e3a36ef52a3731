"""The two Gradio components of the client viewer: the viewer itself and the data channel that feeds it.

Why ``gr.HTML`` with ``js_on_load`` (Gradio 6): it runs our script once per component with the component's
element, and ``watch('value', …)`` calls back after every server update of a component's value. The viewer
component's value never changes (its script builds and owns its DOM, so Gradio never re-renders it under the
user's feet: open ``<details>`` stay open); the data component has an empty template, so a 2 MB battle payload
costs the page one ``JSON.parse`` and no HTML parsing. Both work in headless Chromium as in any browser; no custom
component build (Node toolchain at install) and no global ``<script>`` injection is needed.
"""

from __future__ import annotations

import functools
from pathlib import Path

import gradio as gr

__all__ = ["viewer_component", "data_component", "VIEWER_JS_PATH"]

VIEWER_JS_PATH = Path(__file__).with_name("assets") / "viewer.js"

DATA_JS = """
const deliver = () => {
  const text = props.value;
  if (!text) return;
  let payload;
  try { payload = JSON.parse(text); } catch (e) { return; }
  const viewer = (window.__wcViewers || {})[payload.viewer];
  if (viewer) viewer.receive(payload);
  else (window.__wcPending = window.__wcPending || {})[payload.viewer] = text;
};
watch('value', deliver);
deliver();
"""


@functools.lru_cache(maxsize=1)
def viewer_js() -> str:
    return VIEWER_JS_PATH.read_text(encoding="utf-8")


def viewer_component(name: str, elem_id: str) -> gr.HTML:
    """The battle viewer ``name`` ("replays" or "live"); fed by the data component of the same name."""
    return gr.HTML(f'<div data-viewer="{name}"></div>', js_on_load=viewer_js(), elem_id=elem_id,
                   elem_classes=["wc-viewer-host"], apply_default_css=False)


def data_component(elem_id: str) -> gr.HTML:
    """The hidden channel a handler writes a viewer payload (``viewer.to_json``) into."""
    return gr.HTML("", html_template="", js_on_load=DATA_JS, elem_id=elem_id, elem_classes=["wc-data"],
                   apply_default_css=False)
