"""Shared ideas with one home: the side type (``wolfeclick.sides``) and the settings object (``wolfeclick.settings``).

Each environment variable is set and seen honoured by the module that uses it, through the one object; a grep of
the source shows no other module reads a ``WOLFECLICK_*`` variable or spells the sides out again.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wolfeclick import settings as settings_module
from wolfeclick.errors import InputError
from wolfeclick.settings import VARIABLES, Settings

PACKAGE = Path(settings_module.__file__).parent
ROOT = PACKAGE.parent


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.fixture
def clean_env(monkeypatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """No ``WOLFECLICK_*`` variable set, in a fresh working directory."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_folders_have_one_default_relative_to_the_working_directory(clean_env, tmp_path: Path) -> None:
    from wolfeclick.env.env import recordings_dir as env_recordings
    from wolfeclick.paths import recordings_dir, results_dir
    from wolfeclick.ui.library import recordings_dir as library_recordings

    assert recordings_dir() == library_recordings() == env_recordings(None) == tmp_path / "recordings"
    assert results_dir() == tmp_path / "results"
    clean_env.setenv("WOLFECLICK_RECORDINGS", "mine")  # relative: to the working directory too
    clean_env.setenv("WOLFECLICK_RESULTS", str(tmp_path / "r"))
    assert recordings_dir() == library_recordings() == env_recordings(None) == tmp_path / "mine"
    assert results_dir() == tmp_path / "r"


def test_every_variable_is_honoured_through_the_one_object(clean_env, tmp_path: Path) -> None:
    from wolfeclick.ladder.credentials import read_password
    from wolfeclick.ladder.seat import make_showdown_seat
    from wolfeclick.policies.catalogue import ServedCatalogue
    from wolfeclick.policies.registry import default_registry
    from wolfeclick.settings import settings
    from wolfeclick.sim import install
    from wolfeclick.sim.process import SHOWDOWN_DIR, node_executable
    from wolfeclick.ui.battle_panels import sprites_enabled
    from wolfeclick.ui.context import Settings as AppSettings
    from wolfeclick.ui.live_page import default_pace

    seen: dict[str, object] = {}
    values = {
        "WOLFECLICK_RECORDINGS": str(tmp_path / "rec"), "WOLFECLICK_RESULTS": str(tmp_path / "res"),
        "WOLFECLICK_CACHE": str(tmp_path / "cache"), "WOLFECLICK_SHOWDOWN": str(SHOWDOWN_DIR),
        "WOLFECLICK_NODE": sys.executable,  # any executable: the setting is what is returned, not looked up
        "WOLFECLICK_SERVER": "ws://127.0.0.1:9999/showdown/websocket", "WOLFECLICK_SHOWDOWN_PASSWORD": "s3cret",
        "WOLFECLICK_LIVE_PACE": "1.5", "WOLFECLICK_SPRITES": "off", "WOLFECLICK_LLM_BATCH_MS": "9",
        "WOLFECLICK_LLM_MAX_MODELS": "3", "WOLFECLICK_LLM_MAX_ADAPTERS": "5", "WOLFECLICK_ENV_OPPONENT": "maxdamage",
        "WOLFECLICK_APP_POLICIES": "llm:org/model+org/adapter, random", "WOLFECLICK_APP_MAX_K": "7",
        "WOLFECLICK_APP_MAX_DECISIONS": "50", "WOLFECLICK_APP_MAX_BATTLES": "10", "WOLFECLICK_APP_MAX_LIVE": "2",
        "WOLFECLICK_APP_MAX_UPLOAD_MB": "0.5", "WOLFECLICK_APP_ENGINES": "local,ray", "WOLFECLICK_APP_IDLE_S": "45",
        "WOLFECLICK_APP_COUNT_UPLOADS": "yes", "WOLFECLICK_APP_LIVE_PER_VISITOR": "3",
        "WOLFECLICK_APP_HEAVY_PER_VISITOR": "2", "WOLFECLICK_APP_UPLOADS_PER_HOUR": "5",
        "WOLFECLICK_APP_UPLOAD_MB_PER_VISITOR": "1", "WOLFECLICK_APP_UPLOAD_STORE_MB": "2",
        "WOLFECLICK_APP_SESSIONS": "9", "WOLFECLICK_APP_SESSION_IDLE_S": "60", "WOLFECLICK_SIM_NICE": "7",
        "WOLFECLICK_SIM_SNAPSHOT": "off",
    }
    assert set(values) == set(VARIABLES)
    for name, value in values.items():
        clean_env.setenv(name, value)
    from wolfeclick.paths import recordings_dir, results_dir

    seen["WOLFECLICK_RECORDINGS"] = recordings_dir()
    seen["WOLFECLICK_RESULTS"] = results_dir()
    seen["WOLFECLICK_CACHE"] = install.install_dir().parent
    seen["WOLFECLICK_SHOWDOWN"] = install.showdown_dir()
    seen["WOLFECLICK_NODE"] = node_executable()
    seen["WOLFECLICK_SERVER"] = make_showdown_seat("showdown:somebot").server
    password = read_password(None)
    seen["WOLFECLICK_SHOWDOWN_PASSWORD"] = password.reveal() if password else None
    seen["WOLFECLICK_LIVE_PACE"] = (AppSettings.from_env().live_pace, default_pace())
    seen["WOLFECLICK_SPRITES"] = sprites_enabled()
    app = AppSettings.from_env()
    catalogue = ServedCatalogue.from_registry(default_registry(), settings().app_policies)
    seen["WOLFECLICK_APP_POLICIES"] = tuple(e.spec for e in catalogue.entries() if e.operator)
    seen["WOLFECLICK_APP_MAX_K"] = app.max_k
    seen["WOLFECLICK_APP_MAX_DECISIONS"] = app.max_decisions
    seen["WOLFECLICK_APP_MAX_BATTLES"] = app.max_battles
    seen["WOLFECLICK_APP_MAX_LIVE"] = app.max_live
    seen["WOLFECLICK_APP_MAX_UPLOAD_MB"] = app.max_upload_bytes
    seen["WOLFECLICK_APP_ENGINES"] = app.engines
    seen["WOLFECLICK_APP_IDLE_S"] = app.max_idle_s
    seen["WOLFECLICK_APP_COUNT_UPLOADS"] = app.count_uploads
    seen["WOLFECLICK_APP_LIVE_PER_VISITOR"] = app.live_per_visitor
    seen["WOLFECLICK_APP_HEAVY_PER_VISITOR"] = app.heavy_per_visitor
    seen["WOLFECLICK_APP_UPLOADS_PER_HOUR"] = app.uploads_per_hour
    seen["WOLFECLICK_APP_UPLOAD_MB_PER_VISITOR"] = app.upload_bytes_per_visitor
    seen["WOLFECLICK_APP_UPLOAD_STORE_MB"] = app.upload_store_bytes
    seen["WOLFECLICK_APP_SESSIONS"] = app.sessions
    seen["WOLFECLICK_APP_SESSION_IDLE_S"] = app.session_idle_s
    seen["WOLFECLICK_SIM_NICE"] = settings().sim_nice
    seen["WOLFECLICK_SIM_SNAPSHOT"] = settings().sim_snapshot
    expected: dict[str, object] = {
        "WOLFECLICK_RECORDINGS": tmp_path / "rec", "WOLFECLICK_RESULTS": tmp_path / "res",
        "WOLFECLICK_CACHE": tmp_path / "cache", "WOLFECLICK_SHOWDOWN": SHOWDOWN_DIR, "WOLFECLICK_NODE": sys.executable,
        "WOLFECLICK_SERVER": values["WOLFECLICK_SERVER"], "WOLFECLICK_SHOWDOWN_PASSWORD": "s3cret",
        "WOLFECLICK_LIVE_PACE": (1.5, 1.5), "WOLFECLICK_SPRITES": False,
        "WOLFECLICK_APP_POLICIES": ("llm:org/model+org/adapter",),  # random: the catalogue offers it already
        "WOLFECLICK_APP_MAX_K": 7,
        "WOLFECLICK_APP_MAX_DECISIONS": 50, "WOLFECLICK_APP_MAX_BATTLES": 10, "WOLFECLICK_APP_MAX_LIVE": 2,
        "WOLFECLICK_APP_MAX_UPLOAD_MB": 512 * 1024, "WOLFECLICK_APP_ENGINES": ("local", "ray"),
        "WOLFECLICK_APP_IDLE_S": 45.0, "WOLFECLICK_APP_COUNT_UPLOADS": True, "WOLFECLICK_APP_LIVE_PER_VISITOR": 3,
        "WOLFECLICK_APP_HEAVY_PER_VISITOR": 2, "WOLFECLICK_APP_UPLOADS_PER_HOUR": 5,
        "WOLFECLICK_APP_UPLOAD_MB_PER_VISITOR": 2**20, "WOLFECLICK_APP_UPLOAD_STORE_MB": 2 * 2**20,
        "WOLFECLICK_APP_SESSIONS": 9, "WOLFECLICK_APP_SESSION_IDLE_S": 60.0, "WOLFECLICK_SIM_NICE": 7,
        "WOLFECLICK_SIM_SNAPSHOT": False,
    }
    assert seen == expected
    # the language-model bounds and the training env's opponent: in a fresh interpreter, where they are read when
    # first used (not at import: the variables are changed after the imports)
    script = (
        "import os\n"
        "from wolfeclick.llm import loading\nfrom wolfeclick.llm.batcher import Batcher\n"
        "from wolfeclick.env.tool_env import ShowdownToolEnv\n"
        "os.environ.update(WOLFECLICK_LLM_BATCH_MS='9', WOLFECLICK_LLM_MAX_MODELS='3',\n"
        "                  WOLFECLICK_LLM_MAX_ADAPTERS='5', WOLFECLICK_ENV_OPPONENT='maxdamage')\n"
        "class Entry: pass\n"
        "cache = loading.MODEL_CACHE\n"
        "print(Batcher(Entry()).window, cache.max_bases, cache.max_adapters, cache is loading.model_cache(),\n"
        "      ShowdownToolEnv()._opponent)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOLFECLICK_")}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0.009", "3", "5", "True", "maxdamage"]


def test_a_bad_value_is_one_line_naming_the_variable() -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_env({"WOLFECLICK_LLM_MAX_MODELS": "two"})
    assert str(caught.value) == "$WOLFECLICK_LLM_MAX_MODELS is 'two', not a whole number"
    with pytest.raises(InputError, match=r"^\$WOLFECLICK_LIVE_PACE is '-1'; it must be at least 0$"):
        Settings.from_env({"WOLFECLICK_LIVE_PACE": "-1"})
    defaults = Settings.from_env({})
    assert (defaults.live_pace, defaults.sprites, defaults.llm_max_models, defaults.server) == (
        0.4, True, 2, "ws://127.0.0.1:8000/showdown/websocket")


def _environment_reads(path: Path) -> list[str]:
    """``os.environ[...]``, ``os.environ.get(...)``, ``os.getenv(...)`` of a ``WOLFECLICK_*`` name in ``path``, and
    any code constant that is exactly such a name (a read through a constant)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("WOLFECLICK_") \
                and node.value.isidentifier() and node.value.upper() == node.value:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value}")
    return found


def test_no_other_module_reads_a_wolfeclick_variable() -> None:
    reads = [read for path in modules() if path.name != "settings.py" for read in _environment_reads(path)]
    assert reads == []
    text = "\n".join(p.read_text(encoding="utf-8") for p in modules() if p.name != "settings.py")
    for pattern in ('environ["WOLFECLICK_', "environ['WOLFECLICK_", 'environ.get("WOLFECLICK_', 'getenv("WOLFECLICK_'):
        assert pattern not in text
    assert _environment_reads(PACKAGE / "settings.py")  # the grep would see one


SIDE_ALLOWED = {"env/env.py", "ui/viewer_payload.py", "ui/analysis_view.py"}
"""Modules in other engineers' areas at the time of writing (training env, the viewer, the analysis view): their
owners move them onto ``wolfeclick.sides``; the list may only shrink."""


def _side_spellings(path: Path) -> list[str]:
    """Definitions of ``SIDES``/``Side``, ``("p1", "p2")`` written out, and ``"p2" if x == "p1" else "p1"``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in ("SIDES", "_SIDES", "Side") for t in targets):
                found.append(f"{where}: defines {[t.id for t in targets if isinstance(t, ast.Name)][0]}")
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and \
                [getattr(e, "value", None) for e in node.elts] in (["p1", "p2"], ["p2", "p1"]):
            found.append(f"{where}: the sides written out")
        if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and \
                isinstance(node.body, ast.Constant) and isinstance(node.orelse, ast.Constant) and \
                {node.body.value, node.orelse.value} == {"p1", "p2"} and \
                any(isinstance(c, ast.Constant) and c.value == node.orelse.value for c in node.test.comparators):
            found.append(f"{where}: the other side written out")
    return found


def test_one_side_type() -> None:
    from wolfeclick import sides
    from wolfeclick.arena import results
    from wolfeclick.battle import schema
    from wolfeclick.interop import public
    from wolfeclick.sim import protocol
    from wolfeclick.ui import battle_panels

    assert schema.Side is sides.Side
    assert protocol.SIDES is public.SIDES is battle_panels.SIDES is results.SIDES is sides.SIDES == ("p1", "p2")
    assert sides.other("p1") == "p2" and sides.other("p2") == "p1"
    spelled = [hit for path in modules() if path.name != "sides.py"
               and str(path.relative_to(PACKAGE)) not in SIDE_ALLOWED for hit in _side_spellings(path)]
    assert spelled == []
    assert _side_spellings(PACKAGE / "sides.py")  # the check sees the one definition


def _llm_imports() -> dict[str, set[str]]:
    """``wolfeclick.llm`` module → the package's modules it imports, at module level or inside functions."""
    graph: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / "llm").glob("*.py")):
        if path.stem == "__init__":
            continue
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            found |= {name.split(".")[2] for name in names if name.startswith("wolfeclick.llm.")}
        graph[path.stem] = found - {path.stem}
    return graph


def test_the_model_code_has_no_import_cycle() -> None:
    """The cache is passed in, not reached for: no llm module imports one that (through others) imports it back."""
    graph = _llm_imports()
    assert {"loading", "batcher", "scoring", "generation"} <= set(graph)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(step == goal or (step not in seen and reaches(step, goal, seen | {step}))
                   for step in graph.get(start, ()))

    cycles = sorted(module for module in graph if reaches(module, module, {module}))
    assert cycles == []


@pytest.mark.parametrize("module", sorted(_llm_imports()))
def test_each_llm_module_imports_alone(module: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", f"import wolfeclick.llm.{module}"], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
