"""The package as a practitioner gets it: a wheel built from this checkout, installed somewhere else, used from a
folder that is not the checkout — the CLI, the training env, the simulator's first-use install — and the lock and
the declared dependency ranges agreeing.

Real battles on the real simulator; the wheel is built with pip from pyproject.toml as `pip install .` would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_every_declared_dependency_is_locked_at_a_version_its_range_allows() -> None:
    project = PYPROJECT["project"]
    declared = [*project["dependencies"], *(r for group in project["optional-dependencies"].values() for r in group)]
    assert len(project["dependencies"]) >= 8 and set(project["optional-dependencies"]) >= {"llm", "train", "ray", "dev"}
    pins = locked()
    for text in declared:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is declared but not in requirements.txt"
        assert requirement.specifier.contains(pins[name], prereleases=True), (text, pins[name])
    assert PYPROJECT["project"]["scripts"]["wolfeclick"] == "wolfeclick.cli:run"


def test_the_app_extra_leaves_out_the_training_test_and_scale_out_stacks() -> None:
    core_and_llm = {canonicalize_name(Requirement(r).name)
                    for r in [*PYPROJECT["project"]["dependencies"], *PYPROJECT["project"]["optional-dependencies"]["llm"]]}
    assert not core_and_llm & {"pytest", "hypothesis", "ruff", "trl", "openenv-core", "mcp", "fastmcp", "ray",
                               "datasets", "gymnasium"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                           "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("wolfeclick_arena-*.whl")
    return built


def test_the_wheel_carries_what_the_package_reads_at_run_time(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("wolfeclick/sim/bridge.js", "wolfeclick/sim/policies.js", "wolfeclick/sim/PROTOCOL.md",
                   "wolfeclick/sim/showdown/package.json", "wolfeclick/sim/showdown/package-lock.json", "wolfeclick/ui/assets/viewer.js",
                   "wolfeclick/ui/assets/app.css", "wolfeclick/cli/__init__.py", "wolfeclick/env/tool_env.py",
                   "wolfeclick/analysis/value_model.json", "wolfeclick/arena/reference_ladder.json",
                   # every script the simulator's Node process loads, so a new one can't be left out of the wheel
                   *(f"wolfeclick/sim/{script.name}" for script in (ROOT / "wolfeclick" / "sim").glob("*.js"))):
        assert needed in names, needed
    assert not [n for n in names if "node_modules" in n or n.startswith("tests/")]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "wolfeclick = wolfeclick.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()
    lock = json.loads(zipfile.ZipFile(wheel).read("wolfeclick/sim/showdown/package-lock.json"))
    assert lock["packages"]["node_modules/pokemon-showdown"]["version"] == "0.11.11"


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The wheel installed into a folder of its own (its dependencies are this venv's), and an environment that sees
    that copy of ``wolfeclick`` and never the checkout."""
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                           str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WOLFECLICK_RECORDINGS", "WOLFECLICK_RESULTS")}
    env.update(PYTHONPATH=str(target), WOLFECLICK_TARGET=str(target), HF_HUB_OFFLINE="1")
    return env


def run(args: list[str], env: dict[str, str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_installed_command_records_a_battle_outside_the_checkout(installed: dict[str, str], tmp_path: Path) -> None:
    script = Path(installed["WOLFECLICK_TARGET"]) / "bin" / "wolfeclick"
    done = run([sys.executable, str(script), "record", "--p1", "heuristic", "--p2", "random", "--seed", "4", "--n", "1"],
               installed, tmp_path)
    assert done.returncode == 0, done.stderr
    (saved,) = (tmp_path / "recordings").glob("*.json")  # beside the user, not inside site-packages
    assert (tmp_path / done.stdout.split()[-1]).resolve() == saved.resolve()
    check = run([sys.executable, "-m", "wolfeclick", "validate", str(saved)], installed, tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr


EPISODE = """
import json, os, wolfeclick
from wolfeclick.env import ShowdownEnv
assert wolfeclick.__file__.startswith(os.environ["WOLFECLICK_TARGET"]), wolfeclick.__file__
def episode():
    env = ShowdownEnv("random", recordings=False)
    obs, info = env.reset(seed=3)
    rewards, done = [], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(0)
        rewards.append(float(reward))
        done = terminated or truncated
    env.close()
    return rewards
first, second = episode(), episode()
print(json.dumps({"same": first == second, "steps": len(first)}))
"""


def test_the_training_env_imports_and_plays_a_seeded_episode_from_the_installed_wheel(installed: dict[str, str],
                                                                                     tmp_path: Path) -> None:
    done = run([sys.executable, "-c", EPISODE], installed, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["same"] and result["steps"] > 3


def test_setup_finds_the_installed_simulator_and_installs_nothing(installed: dict[str, str], tmp_path: Path) -> None:
    """``make test`` runs ``wolfeclick setup`` first, which on a fresh machine is the real first-use ``npm ci`` into
    the cache (about 2 minutes quiet, too slow for a test of its own); here: once installed, it only says where."""
    done = run([sys.executable, "-m", "wolfeclick", "setup"], installed, tmp_path)
    assert done.returncode == 0 and "Installing" not in done.stderr, done.stderr
    package = Path(done.stdout.strip())
    assert (package / "package.json").is_file() and package.name == "pokemon-showdown"
    assert json.loads((package / "package.json").read_text())["version"] == "0.11.11"


def test_no_node_or_npm_is_one_line_that_says_how(installed: dict[str, str], tmp_path: Path) -> None:
    env = dict(installed, WOLFECLICK_CACHE=str(tmp_path / "cache"), PATH=str(tmp_path / "empty"))
    env.pop("WOLFECLICK_NODE", None)
    for args in (["setup"], ["record", "--p1", "random", "--p2", "random"]):
        done = run([sys.executable, "-m", "wolfeclick", *args], env, tmp_path)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 1 and len(lines) == 1, done.stderr
        assert "Node.js was not found on PATH" in lines[0] and "wolfeclick setup" in lines[0]
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_the_suite_runs_from_another_directory(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           str(ROOT / "tests" / "test_human_policy.py"), "-k", "command_line_refuses_human"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 passed" in done.stdout


def app_probe(code: str, tmp_path: Path) -> str:
    """Run ``code`` in a fresh interpreter, as the app's process would start (empty recordings and results in
    ``tmp_path``): its standard output."""
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, WOLFECLICK_RECORDINGS=str(tmp_path), WOLFECLICK_RESULTS=str(tmp_path)))
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_app_process_imports_no_training_mcp_model_or_ray_stack(tmp_path: Path) -> None:
    """What `python app.py` imports to build and serve the first page: none of the optional stacks, even in this venv
    where all of them (and mcp, through openenv-core) are installed."""
    probe = ("import sys\nfrom wolfeclick.ui.app_process import keep_unused_stacks_out\nkeep_unused_stacks_out()\n"
             "import wolfeclick.ui.app as app\napp.build_app()\n"
             "print(' '.join(sorted(m for m in sys.modules if sys.modules[m] is not None and m.split('.')[0] in "
             "{'torch', 'transformers', 'peft', 'ray', 'trl', 'datasets', 'openenv', 'mcp', 'fastmcp', 'uvicorn'})))")
    out = app_probe(probe, tmp_path)
    assert out.strip() == ""


@pytest.mark.parametrize("start", ["from wolfeclick.ui.app_process import serve\nserve()",
                                   "from wolfeclick.cli import main\nmain(['app'])"], ids=["app.py", "wolfeclick app"])
def test_the_app_process_rewrites_none_of_gradios_type_stubs(start: str, tmp_path: Path) -> None:
    """Gradio 6.31's component metaclass re-derives every component's ``.pyi`` stub (reads the source and the stub,
    parses both, renders a template) each time Gradio is imported: over a second of a 3.3 s cold start here. The
    app's process (``python app.py``, and ``wolfeclick app`` as the Space image runs it) imports Gradio without it.
    The probe stops the process when the server first binds a port (Gradio trying its port): by then every import
    of the start is done."""
    probe = """
import os, sys
stubs = []
def watch(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].endswith(".pyi") and "gradio" in args[0]:
        stubs.append(args[0])
    elif event == "socket.bind" and isinstance(args[1], tuple) and args[1][1] != 0:  # not urllib3's IPv6 probe
        print("bound", "gradio.component_meta" in sys.modules, len(stubs), flush=True)
        os._exit(0)
sys.addaudithook(watch)
"""
    out = app_probe(probe + start, tmp_path)
    assert out.split() == ["bound", "True", "0"]


def test_building_the_app_makes_gradio_server_app_only_as_often_as_gradio_must(tmp_path: Path) -> None:
    """Each Gradio server app (83 FastAPI routes) costs about 0.15 s of the cold start. ``gr.Blocks()`` makes one and
    leaving its ``with`` makes another; ``demo.queue(...)`` would make a third that ``launch()`` throws away. The app
    sets its queue's default concurrency (32 events at once) without it."""
    probe = ("import gradio.routes as routes\ncalls = []\noriginal = routes.App.create_app\n"
             "def counted(*a, **k):\n    calls.append(1)\n    return original(*a, **k)\n"
             "routes.App.create_app = staticmethod(counted)\n"
             "import wolfeclick.ui.app as app\ndemo = app.build_app()\n"
             "print(len(calls), demo._queue.default_concurrency_limit)")
    out = app_probe(probe, tmp_path)
    assert out.split() == ["2", "32"]


def test_the_apps_warm_up_runs_after_the_first_request_not_at_launch(tmp_path: Path) -> None:
    """The Pokédex warm-up (``wolfeclick.ui.first_answer``) waits for the first visitor's answer: at launch, its
    thread held the GIL while the first request was served (a tenth of the cold start)."""
    probe = """
import sys, threading, urllib.request, socket
import wolfeclick.ui.app as app
from wolfeclick.ui.battle_panels import sprite_url
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
demo = app.launch(prevent_thread_lock=True, server_port=port)
before = sprite_url.cache_info().currsize, [t.name for t in threading.enumerate() if t.name == "wolfeclick-warm-up"]
urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=60).read()
import time
deadline = time.monotonic() + 300  # waits for the warm-up to have run; a generous cap, not a timing
while sprite_url.cache_info().currsize == 0 and time.monotonic() < deadline:
    time.sleep(0.05)
print("result", before, sprite_url.cache_info().currsize > 0)
demo.close()
"""
    out = app_probe(probe, tmp_path)
    assert [line for line in out.splitlines() if line.startswith("result")] == ["result (0, []) True"]


def skeleton_copies(dockerfile: str) -> list[tuple[list[str], str]]:
    """The Dockerfile's ``COPY`` lines before its first ``RUN`` that installs the package: (sources, destination)."""
    copies = []
    for line in dockerfile.splitlines():
        if line.startswith("RUN python3 -m venv"):
            return copies
        if line.startswith("COPY "):
            words = [w for w in line.split()[1:] if not w.startswith("--")]
            copies.append((words[:-1], words[-1]))
    raise AssertionError("the Dockerfile has no RUN that makes the venv")


def test_the_space_images_dependency_layer_has_every_module_its_simulator_install_imports(tmp_path: Path) -> None:
    """The image installs the dependencies and the simulator from a skeleton of the package (so that a code change
    reuses those layers) and runs ``wolfeclick.sim.install`` from it: the skeleton must hold all that module imports.
    Built from the COPY lines themselves, and imported with no site-packages, so the checkout's install cannot
    stand in for a missing file."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "from wolfeclick.sim.install import ensure_showdown" in dockerfile
    for sources, destination in skeleton_copies(dockerfile):
        assert sources != ["."], "the full copy comes after the dependency layer"
        target = tmp_path / destination
        for source in sources:
            path = ROOT / source
            into = target / path.name if destination.endswith("/") else target
            into.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                shutil.copytree(path, into)
            else:
                shutil.copy(path, into)
    done = subprocess.run([sys.executable, "-S", "-c", "import sys; sys.path.insert(0, '.'); "
                           "from wolfeclick.sim.install import ensure_showdown; print(ensure_showdown.__module__)"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1]
    assert done.stdout.strip() == "wolfeclick.sim.install"


def readme_install_lines() -> list[str]:
    """The ``pip install`` lines of the README's *Install it in your own project*, as a person copies them."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Install it in your own project", 1)[1].split("\n## ", 1)[0]
    lines = [line.split("  #")[0].strip() for line in section.splitlines() if line.startswith("pip install ")]
    assert len(lines) >= 2 and all("/path/to/this/checkout" in line for line in lines), lines
    return lines


def test_the_readmes_install_lines_install_as_written_into_a_fresh_venv(tmp_path: Path) -> None:
    """Issue 47 (9): ``pip install "wolfeclick-arena @ /path"`` is not a valid requirement on pip 23 or 26. Each of
    the README's lines, with the path of a copy of this checkout, installs the package into a new venv (its
    dependencies left out: the lock is installed and tested by ``make test``; here it is the line that is tested)."""
    import shlex

    copy = tmp_path / "checkout"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "node_modules", "__pycache__",
                                                              "build", "*.egg-info", "results", ".*_cache"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    for line in readme_install_lines():
        args = shlex.split(line.replace("/path/to/this/checkout", str(copy)))
        assert args[:2] == ["pip", "install"], line
        done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                               *args[2:]], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (line, done.stderr[-2000:])
        shown = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", "wolfeclick-arena"],
                               capture_output=True, text=True, timeout=120)
        assert "Name: wolfeclick-arena" in shown.stdout, (line, shown.stdout, shown.stderr[-500:])


def test_the_installed_package_reads_its_value_model(installed: dict[str, str], tmp_path: Path) -> None:
    """Issue 48: the weights every replay's estimate needs are package data, read from the installed copy."""
    code = ("import os; from wolfeclick.analysis.value_model import MODEL_PATH, default_model; "
            "assert str(MODEL_PATH).startswith(os.environ['WOLFECLICK_TARGET']), MODEL_PATH; "
            "print(default_model().card['train_battles'])")
    done = run([sys.executable, "-c", code], installed, tmp_path)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 0
