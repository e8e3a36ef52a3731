"""Gradio's refusal of a visitor's input, cut to one short line.

Gradio's Dropdown, Radio and CheckboxGroup refuse a value they do not offer with a message that quotes the value and
every choice: a visitor's 100 kB string sent to a policy box came back whole, and was printed in the server's log.
Gradio reads every event's inputs in one method of the Blocks (``preprocess_data``), before any handler of ours runs;
``short_choice_refusals`` wraps that one method of the app's Blocks, so no tab has to remember anything. (A subclass
per kind would also survive Gradio's per-session copies, but Gradio writes a ``.pyi`` stub beside the module of
every component class it sees defined: not something importing the app may do.)
"""

from __future__ import annotations

from typing import Any

import gradio as gr

__all__ = ["REFUSAL", "MAX_REFUSAL_CHARS", "short_refusal", "short_choice_refusals"]

REFUSAL = "That value is not one of the choices offered here: pick one from the list."
CHOICE_REFUSAL_MARK = "is not in the list of choices"
"""What Gradio's choice components say (``gradio/components/{dropdown,radio,checkboxgroup}.py``)."""
MAX_REFUSAL_CHARS = 200


def short_refusal(message: str) -> str:
    """The line a visitor sees for Gradio's ``message``: ``REFUSAL`` for an unoffered choice (nothing of the value),
    else its first line, at most ``MAX_REFUSAL_CHARS`` long."""
    if CHOICE_REFUSAL_MARK in message:
        return REFUSAL
    line = (message.strip().splitlines() or [""])[0]
    return line if len(line) <= MAX_REFUSAL_CHARS else line[:MAX_REFUSAL_CHARS - 1] + "…"


def short_choice_refusals(demo: gr.Blocks) -> None:
    """Make ``demo`` refuse what its components refuse in ``short_refusal``'s one line."""
    read_inputs = demo.preprocess_data

    async def preprocess_data(*args: Any, **kwargs: Any) -> Any:
        try:
            return await read_inputs(*args, **kwargs)
        except gr.Error as error:
            raise gr.Error(short_refusal(str(error.message)), print_exception=False) from None

    demo.preprocess_data = preprocess_data  # type: ignore[method-assign]
