"""No import circle and no reach into ``llm/`` from below: the package's imports, read with ``ast`` (every import, at
module level or inside a function; issue 50).

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


SHARED = {"__init__", "errors", "sides", "settings", "paths", "digits", "extras"}
"""Modules at the package's top that every part may import (the error family, sides, settings, small helpers)."""

LAYERS: dict[str, set[str]] = {
    "game": set(),
    "sim": {"game"},
    "policies": {"game"},
    "llm": {"game", "policies", "sim"},
    "battle": {"sim", "game", "policies"},
    "analysis": {"battle", "game", "policies", "sim", "arena"},
    "arena": {"battle", "policies", "sim"},
    "env": {"battle", "game", "policies", "sim"},
    "interop": {"battle", "analysis", "game", "policies", "sim"},
    "ladder": {"battle", "game", "interop", "policies", "sim"},
    "ui": {"analysis", "arena", "battle", "game", "interop", "policies", "sim"},
    "train": {"arena", "battle", "env", "game", "llm"},
    "cli": {"analysis", "arena", "battle", "env", "game", "interop", "ladder", "llm", "policies", "sim", "ui"},
    "__main__": {"cli"},
}
"""docs/architecture.md's table as data: each part and the parts it may import (besides itself and ``SHARED``).
A new import across parts is either in this table (and the doc's "reads from" column) or a test failure."""


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_violations(graph: dict[str, set[str]], layers: dict[str, set[str]]) -> list[str]:
    """Every import from one part into another that ``layers`` does not allow, as ``importer -> imported``."""
    found = []
    for name, used in sorted(graph.items()):
        home = part_of(name)
        if home in SHARED:
            allowed = SHARED  # the shared modules import only each other
        else:
            allowed = layers.get(home, set()) | SHARED | {home}
        found += [f"{name} -> {other}" for other in sorted(used) if part_of(other) not in allowed]
    return found


def test_every_import_is_one_the_layer_table_allows() -> None:
    assert layer_violations(imports(), LAYERS) == []


def test_the_layer_table_catches_an_upward_import() -> None:
    graph = {"wolfeclick.env.server": {"wolfeclick.cli.options", "wolfeclick.battle.runner"},
             "wolfeclick.game.state": {"wolfeclick.sides"}, "wolfeclick.errors": {"wolfeclick.battle.store"}}
    assert layer_violations(graph, LAYERS) == ["wolfeclick.env.server -> wolfeclick.cli.options",
                                               "wolfeclick.errors -> wolfeclick.battle.store"]


def test_every_part_is_in_the_layer_table_and_the_doc() -> None:
    parts = {part_of(name) for name in imports()} - SHARED
    assert parts <= set(LAYERS), f"parts missing from LAYERS: {sorted(parts - set(LAYERS))}"
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for part in set(LAYERS) - {"__main__"}:
        row = next((line for line in doc.splitlines() if line.startswith(f"| `{part}/` |")), None)
        assert row is not None, f"docs/architecture.md has no row for {part}/"
        reads = row.rsplit("|", 2)[-2]
        named = {p for p in LAYERS if f"`{p}/`" in reads}
        assert named == LAYERS[part] or "everything below" in reads, (part, sorted(named), sorted(LAYERS[part]))


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
