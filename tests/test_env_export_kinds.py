"""docs/interop.md names exactly the ``prompt_kind`` values the exporter writes: ``chat_template`` (a checkpoint's
prompt), ``observation`` (what an env agent read: every row of a training episode) and ``state`` (the state
markdown of a baseline or an import). It once listed ``chat_template`` or ``state`` while every exported training
row said ``observation``."""

from __future__ import annotations

import re
from pathlib import Path

from devkit.samples import sample_path
from wolfeclick.battle.store import load_recording
from wolfeclick.interop.export import prompt_of

DOC = Path(__file__).resolve().parents[1] / "docs" / "interop.md"


def documented_kinds() -> set[str]:
    """The backticked values in the ``prompt_kind`` parenthesis of the ``grpo`` row's description."""
    text = DOC.read_text(encoding="utf-8")
    bullet = text[text.index("- `grpo` — "):]
    bullet = bullet[:bullet.index("\n- ")]
    inside = bullet.split("`prompt_kind` (", 1)[1]
    depth = 1
    for at, char in enumerate(inside):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return set(re.findall(r"`([a-z_]+)`", inside[:at]))
    raise AssertionError("the prompt_kind parenthesis is not closed")


def test_the_docs_name_every_prompt_kind_the_exporter_writes():
    recording = load_recording(sample_path())
    decision = next(d for t in recording.turns for d in t.decisions.values() if d.state)
    kinds = {
        prompt_of(decision)[1],
        prompt_of(decision.model_copy(update={"policy_info": {"observation": "what the env agent read"}}))[1],
        prompt_of(decision.model_copy(update={"policy_info": {"prompt": "<|im_start|>user …"}}))[1],
    }
    assert kinds == {"state", "observation", "chat_template"}
    assert documented_kinds() == kinds
