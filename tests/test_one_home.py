"""Shared ideas with one home (issue 32): the prompt profiles live in ``game/`` where env and llm both read them, and
env and interop import nothing of ``wolfeclick.llm`` until a model is loaded."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import wolfeclick

PACKAGE = Path(wolfeclick.__file__).parent
BOTTOM = {"wolfeclick.errors", "wolfeclick.sides", "wolfeclick.settings", "wolfeclick.digits", "wolfeclick.paths"}


def imported(path: Path) -> set[str]:
    """Every ``wolfeclick`` module a file imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("wolfeclick"):
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("wolfeclick")}
    return found


def test_env_and_interop_import_nothing_of_llm() -> None:
    probe = ("import sys, wolfeclick.env, wolfeclick.env.env, wolfeclick.interop.openenv\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('wolfeclick.llm'))))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=PACKAGE.parent, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_game_imports_only_game_and_the_bottom_modules() -> None:
    """The prompt profiles moved down to ``game/``: nothing there reaches up, not even lazily."""
    for path in sorted((PACKAGE / "game").glob("*.py")):
        upward = {m for m in imported(path) if m != "wolfeclick"
                  and not any(m == low or m.startswith(f"{low}.") for low in BOTTOM | {"wolfeclick.game"})}
        assert not upward, f"{path.name} imports {sorted(upward)}"


def test_the_profiles_have_one_home() -> None:
    assert not (PACKAGE / "llm" / "prompts.py").exists()
    assert not (PACKAGE / "llm" / "v1_moves.py").exists()
    from wolfeclick.game.prompts import PROFILES

    assert sorted(PROFILES) == ["arena-v1", "wolfeclick-v1"]


def test_openenv_names_a_preset_through_the_public_function() -> None:
    from wolfeclick.interop.openenv import _policy

    assert _policy("Atharva2099/openenv-smogon-rl@grpo-qwen3-4b-run2") == "preset:run2"
    assert _policy("someone/else") == "someone/else"
    assert _policy(None) == ""
    assert "PRESETS" not in (PACKAGE / "interop" / "openenv.py").read_text(encoding="utf-8")
