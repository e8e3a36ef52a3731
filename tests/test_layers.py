"""Issue 50: the house's imports, read with ``ast`` (every import, at module level or inside a function).

- No import circle between the package's modules: each was one misplaced name (``AnalysisStopped`` between the
  analysis driver and its Ray engine, the value exporter's shared names between ``export`` and ``value``, the
  engines' shared names between ``arena.engines`` and the Ray engine, ``serve-env``'s options between the CLI and the
  env server's console script).
- ``arena/``, ``env/`` and ``interop/`` do not reach into ``llm/``: they ask the registry for a policy, for "a model
  server for this spec" (``PolicyKind.serving``, which the Ray engine starts) and for the spec a logged model name
  stands for (``PolicyRegistry.spec_naming``).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "wolfeclick"

UPPER_PARTS = ("wolfeclick.arena", "wolfeclick.env", "wolfeclick.interop")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Each module of the package → the package's modules it imports (``from a import b`` counts ``a.b`` when that
    is a module, else ``a``)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.add(member)
                if member == node:
                    break
            if len(part) > 1:
                found.add(frozenset(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle() -> None:
    found = circles(imports())
    assert found == set(), f"import circles: {[sorted(c) for c in found]}"


def test_arena_env_and_interop_do_not_reach_into_the_model_stack() -> None:
    crossings = {(name, other) for name, used in imports().items() if name.startswith(UPPER_PARTS)
                 for other in used if other.startswith("wolfeclick.llm")}
    assert crossings == set(), f"imports of llm/: {sorted(crossings)}"


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset({"a", "b", "c"})}
    assert circles({"a": {"b"}, "b": set()}) == set()


def test_scripts_and_devkit_never_import_the_tests() -> None:
    """What a script shares with the tests lives in ``devkit/``; a script importing ``tests`` (or putting ``tests/``
    on ``sys.path`` to reach a helper there) would make the suite a library."""
    checkout = PACKAGE.parent
    offenders = []
    for path in sorted([*(checkout / "scripts").glob("*.py"), *(checkout / "devkit").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.path.insert", "sys.path.append"):
                names = ["tests"] if "tests" in ast.unparse(node) else []
            else:
                continue
            if any(n.split(".")[0] in ("tests", "ui_support", "llm_fixtures", "server_logs") for n in names):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == [], f"scripts reaching into tests/: {offenders}"
