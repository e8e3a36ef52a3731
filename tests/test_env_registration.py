"""``gymnasium.make`` finds the env in a fresh interpreter with no prior import of ``wolfeclick``: through the
module-qualified id (``wolfeclick.env:WolfeClick/Showdown-v0``) and the ``gym.register_envs(wolfeclick.env)``
pattern, exactly as docs/training.md shows them (its code block is run here as written)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "training.md"
HANG_GUARD_S = 120


def run_fresh(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter, in an empty folder (nothing imported before it but what it imports)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WOLFECLICK_RECORDINGS": str(tmp_path / "recordings")}
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD_S)


def registry_block() -> str:
    """The docs' code block under *Gymnasium's registry*."""
    section = DOC.read_text(encoding="utf-8").split("### Gymnasium's registry", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "docs/training.md shows no code under Gymnasium's registry"
    return match.group(1)


def test_the_docs_registry_block_runs_in_a_fresh_interpreter(tmp_path):
    code = registry_block()
    assert "import wolfeclick" not in code.split("gym.make(", 1)[0]  # the first make comes before any such import
    done = run_fresh(code + "\nprint('made', type(env.unwrapped).__name__, type(vec).__name__)\n", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["made", "ShowdownEnv", "SyncVectorEnv"]


def test_the_module_qualified_id_plays_a_step_in_a_fresh_interpreter(tmp_path):
    code = ("import sys\nimport gymnasium as gym\nassert 'wolfeclick' not in sys.modules\n"
            "env = gym.make('wolfeclick.env:WolfeClick/Showdown-v0', format='gen9randombattle', recordings=False,"
            " action='discrete', max_turns=2)\n"
            "obs, info = env.reset(seed=1)\n"
            "print(env.unwrapped.format, bool(info['legal_actions']), env.step(int(info['action_mask'].argmax()))[-1]['turn'] >= 1)\n"
            "env.close()\n")
    done = run_fresh(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["gen9randombattle", "True", "True"]
