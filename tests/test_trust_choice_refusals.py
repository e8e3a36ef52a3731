"""A value a choice box does not offer is refused in one short line: Gradio's own refusal echoed the visitor's whole
value and every choice (a 100 kB string sent to a policy dropdown came back whole)."""

from __future__ import annotations

import pytest

HUGE = "py:evil:" + "x" * 100_000


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import os

    root = tmp_path_factory.mktemp("choices")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from wolfeclick.ui.app import build_app
    from wolfeclick.ui.context import AppContext

    mp = pytest.MonkeyPatch()
    mp.setenv("WOLFECLICK_RECORDINGS", str(root / "recordings"))
    mp.setenv("WOLFECLICK_RESULTS", str(root / "results"))
    try:
        yield build_app(ctx=AppContext.from_env())
    finally:
        mp.undo()


def choice_inputs(demo):  # type: ignore[no-untyped-def]
    """(event, index of the input) for every event input that is a choice box refusing what it does not offer."""
    import gradio as gr

    for fn in demo.fns.values():
        for index, block in enumerate(fn.inputs):
            if isinstance(block, (gr.Dropdown, gr.Radio, gr.CheckboxGroup)) and not getattr(
                    block, "allow_custom_value", False):
                yield fn, index


def read_inputs(demo, fn, index: int, value):  # type: ignore[no-untyped-def]
    """Gradio reading one event's inputs, ``value`` sent for input ``index`` and each other input's own value."""
    import asyncio

    import gradio as gr

    inputs = []
    for at, block in enumerate(fn.inputs):
        if at == index:
            inputs.append([value] if isinstance(block, gr.CheckboxGroup) else value)
        else:
            inputs.append(block.value if not callable(getattr(block, "value", None)) else None)
    return asyncio.run(demo.preprocess_data(fn, inputs, None))


def test_every_choice_box_refuses_an_unoffered_value_in_one_short_line(demo) -> None:  # type: ignore[no-untyped-def]
    import gradio as gr

    found = list(choice_inputs(demo))
    assert len({id(fn.inputs[i]) for fn, i in found}) >= 8  # Live's policies, take-over's seats, rescore, radios…
    for fn, index in found:
        with pytest.raises(gr.Error) as refused:
            read_inputs(demo, fn, index, HUGE)
        message = str(refused.value.message)
        assert len(message) < 200 and "\n" not in message and "xxxxxxxxxx" not in message, (fn.name, message[:300])


def test_an_offered_value_still_passes(demo) -> None:  # type: ignore[no-untyped-def]
    for fn, index in choice_inputs(demo):
        box = fn.inputs[index]
        if box.choices:
            read_inputs(demo, fn, index, box.choices[0][1])  # raises nothing


def test_the_running_app_answers_an_unoffered_policy_in_one_line(server) -> None:  # type: ignore[no-untyped-def]
    from devkit.appserver import app_client

    client = app_client(server.url)
    with pytest.raises(Exception) as refused:
        client.predict(HUGE, "random", "gen9randombattle", "1", "score", 0.0, None, api_name="/live_start")
    message = str(refused.value)
    assert len(message) < 300 and "xxxxxxxxxx" not in message, message[:300]
