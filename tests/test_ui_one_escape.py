"""The app's pages escape text with one function (``ui.battle_panels.esc``), not a copy per module (issue 66: three ``esc``
in ``ui/``, a fourth as a lambda): read with ``ast``, every function or lambda in ``wolfeclick/ui`` that is only
``html.escape(str(x), ...)`` is counted."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[1] / "wolfeclick" / "ui"


def _escapes_str(node: ast.AST) -> bool:
    """``html.escape(str(...), ...)`` or ``escape(str(...), ...)``."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    first = node.args[0]
    return name == "escape" and isinstance(first, ast.Call) and getattr(first.func, "id", "") == "str"


def escape_wrappers() -> list[str]:
    found = []
    for path in sorted(UI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Lambda) and _escapes_str(node.body):
                found.append(f"{path.relative_to(UI)}:{node.lineno} (lambda)")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(node.body) == 1:
                body = node.body[0]
                if isinstance(body, ast.Return) and body.value is not None and _escapes_str(body.value):
                    found.append(f"{path.relative_to(UI)}:{node.lineno} {node.name}")
    return found


def test_the_pages_escape_text_with_one_function() -> None:
    assert [where.split(":")[0] + " " + where.split()[-1] for where in escape_wrappers()] == ["battle_panels.py esc"]
