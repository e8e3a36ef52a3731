"""The policy registry: every kind in one place, options typed and refused in one line, third-party agents by entry
point and by ``py:`` spec, playing real tournaments on the real simulator and reaching the leaderboard.

The example agent package is the one ``docs/agents.md`` prints, built from that page: installed with pip
(``--no-deps --no-build-isolation --target``, this venv's own dependencies, like ``test_packaging``'s wheel) into
a folder a subprocess puts on its path, so ``importlib.metadata`` finds its entry point as in any install.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wolfeclick.battle.policy_specs import PolicySpecError, make_policy
from wolfeclick.errors import WolfeClickError
from wolfeclick.policies.catalogue import ServedCatalogue
from wolfeclick.policies.registry import PolicyKind, PolicyRegistry, builtin_kinds

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "agents.md"
FORMAT = "gen9randombattle"


def example_files() -> dict[str, str]:
    """The files of the example package, as the doc page gives them (``<!-- file: NAME -->`` then a fenced block)."""
    text = DOC.read_text()
    return {name: body for name, body in re.findall(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```", text, re.S)}


def subprocess_env(*paths: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WOLFECLICK_RE") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), str(ROOT)])
    return env


def wolfeclick(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wolfeclick", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def agent_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("agent-src")
    files = example_files()
    assert set(files) == {"pyproject.toml", "power_agent.py"}
    for name, body in files.items():
        (source / name).write_text(body)
    site = tmp_path_factory.mktemp("agent-site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(site), str(source)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return site


# ------------------------------------------------------------------------------------------------- the registry
def test_every_builtin_kind_registers_its_name_options_description_and_gpu_need() -> None:
    registry = PolicyRegistry(builtin_kinds(), entry_points=False)
    assert registry.names() == ["random", "maxdamage", "heuristic", "search", "human", "preset", "llm", "py",
                                "showdown"]
    kinds = {kind.name: kind for kind in registry.kinds()}
    assert all(kind.description and "\n" not in kind.description for kind in kinds.values())
    assert {name for name, kind in kinds.items() if kind.gpu} == {"preset", "llm"}
    llm = {o.name: o for o in kinds["llm"].option_list()}
    assert llm["mode"].default == "score" and llm["mode"].choices == ("score", "generate")
    assert llm["samples"].type is int and llm["top_p"].type is float and llm["samples"].default == 4
    assert [spec for spec, _ in kinds["preset"].choices()] == ["preset:run1", "preset:run2", "preset:run3"]
    assert not kinds["human"].buildable and kinds["heuristic"].option_list() == ()


def test_reading_the_registry_imports_no_model_stack(tmp_path: Path) -> None:
    """The app lists kinds at cold start: reading every kind, its options and choices imports neither torch nor
    transformers (the checkpoint kinds' factories stay lazy strings until one is built)."""
    probe = ("import sys\nfrom wolfeclick.policies.registry import default_registry, describe_kinds\n"
             "r = default_registry()\ntext = describe_kinds(r.kinds())\nr.choices()\nr.lookup('llm:/x')\n"
             "assert 'max_new_tokens' in text\n"
             "assert r.spec_naming('x/openenv-smogon-rl@grpo-qwen3-4b-run2') == 'preset:run2'\n"
             "assert r.lookup('llm:/x').resolve_serving().server.__name__ == 'ModelServer'\n"
             "print(' '.join(m for m in ('torch', 'transformers', 'peft') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=subprocess_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == ""


def test_the_registry_says_how_a_checkpoint_is_served_and_what_a_logged_model_name_stands_for(
        tiny_checkpoint: Path) -> None:
    """Issue 50: the Ray engine and the importers ask the registry, not ``llm/``: a checkpoint kind's serving
    (its base, its server class, a worker's client), and the spec a model name from someone's log stands for."""
    registry = PolicyRegistry(builtin_kinds(), entry_points=False)
    for spec in ("preset:run1", "llm:/x"):
        serving = registry.lookup(spec).resolve_serving()
        assert callable(serving.base_of) and callable(serving.client) and hasattr(serving.server, "run")
    spec = f"llm:{tiny_checkpoint}"
    assert registry.lookup(spec).resolve_serving().base_of(spec) == str(tiny_checkpoint)  # resolved, not loaded
    for spec in ("heuristic", "py:x:y", "showdown:someone"):
        with pytest.raises(PolicySpecError, match="cannot be served to other processes") as refused:
            registry.lookup(spec).resolve_serving()
        assert "\n" not in str(refused.value)
    assert registry.spec_naming("Atharva2099/openenv-smogon-rl@grpo-qwen3-4b-run3") == "preset:run3"
    assert registry.spec_naming("Qwen/Qwen3-4B") is None and registry.spec_naming(None) is None


def test_unknown_or_mistyped_options_are_refused_in_one_line_naming_the_valid_ones() -> None:
    from wolfeclick.llm import CheckpointError, make_llm_policy

    cases = [
        (lambda: make_policy("heuristic?depth=2"), PolicySpecError, "unknown option(s) depth; valid options: none"),
        (lambda: make_policy("heuristic", quant_="nf4"), PolicySpecError, "unknown option(s) quant_; valid options: "),
        (lambda: make_llm_policy("llm:/nowhere", quant_="nf4"), CheckpointError, "unknown option(s) quant_"),
        (lambda: make_llm_policy("llm:/nowhere", temperature="hot"), CheckpointError, "temperature='hot' is not a valid number"),
        (lambda: make_llm_policy("llm:/nowhere?samples=2.5"), CheckpointError, "samples='2.5' is not a valid integer"),
        (lambda: make_llm_policy("llm:/nowhere", mode="dream"), CheckpointError, "is not one of score, generate"),
    ]
    for call, error, words in cases:
        with pytest.raises(error) as info:
            call()
        assert words in str(info.value) and "\n" not in str(info.value), str(info.value)
    with pytest.raises(CheckpointError) as info:
        make_llm_policy("llm:/nowhere", quant_="nf4")
    assert "mode" in str(info.value) and "max_new_tokens" in str(info.value)  # the valid ones, named


AGENTS = '''
from pathlib import Path

from wolfeclick.policies.base import Decision, policy_factory

class First:
    def decide(self, observation):
        return Decision(action=observation.legal_actions[0])

@policy_factory
def make(depth: int = 1, fast: bool = False):
    """Plays the first legal action."""
    return First()

@policy_factory
def broken():
    raise RuntimeError("no weights here")

@policy_factory
def not_a_policy():
    return 42

def unmarked(path: str = ""):
    Path(path).write_text("called")
    return First()

class Helpers:
    @staticmethod
    def make(path: str = ""):
        Path(path).write_text("called")
        return First()

def import_error():
    import no_such_module_xyz  # noqa: F401
'''


def test_py_specs_build_typed_factories_and_each_failure_is_one_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_agents.py").write_text(AGENTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    policy = make_policy("py:my_agents:make?depth=3&fast=true")
    assert policy.spec == "py:my_agents:make?depth=3&fast=true" and not policy.blocking
    assert policy.metadata()["options"] == {"depth": 3, "fast": True}
    for spec, words in [("py:no_such_pkg.agent:make", "module 'no_such_pkg.agent' not found"),
                        ("py:my_agents:missing", "has no attribute 'missing'"),
                        ("py:my_agents:broken", "the factory raised RuntimeError: no weights here"),
                        ("py:my_agents:not_a_policy", "returned int, not a policy"),
                        ("py:my_agents:make?depth=deep", "depth='deep' is not a valid integer"),
                        ("py:my_agents:make?width=2", "unknown option(s) width; valid options: depth, fast"),
                        ("py:my_agents", "is not of the form package.module:factory")]:
        with pytest.raises(PolicySpecError) as info:
            make_policy(spec)
        assert words in str(info.value) and "\n" not in str(info.value), (spec, str(info.value))
    assert make_policy("py:my_agents:First").spec == "py:my_agents:First"  # a class with decide is a factory


def test_py_names_policy_factories_never_arbitrary_callables_even_for_the_operator(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44 (2): a py: spec that names a builtin, a function not marked @policy_factory, a class without decide
    or an attribute path into another object is refused in one line before anything is called."""
    (tmp_path / "my_agents.py").write_text(AGENTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    target = tmp_path / "written"
    registry = PolicyRegistry(builtin_kinds(), entry_points=False)
    for spec in [f"py:os:system?command=touch {target}", f"py:subprocess:getoutput?cmd=touch {target}",
                 f"py:subprocess:Popen?args=touch {target}&shell=true", f"py:os:popen?cmd=touch {target}",
                 f"py:pathlib:Path.touch?self={target}", f"py:os:remove?path={target}",
                 f"py:shutil:copyfile?src=/etc/passwd&dst={target}", f"py:builtins:exec?source=open('{target}','w')",
                 f"py:my_agents:unmarked?path={target}", f"py:my_agents:Helpers.make?path={target}",
                 "py:urllib.request:urlopen?url=http://127.0.0.1:9/"]:
        for attempt in (registry.build, registry.check, make_policy):
            with pytest.raises(PolicySpecError) as info:
                attempt(spec)
            message = str(info.value)
            assert "\n" not in message and ("not a policy factory" in message or "attribute path" in message), \
                (spec, message)
        assert not target.exists(), spec


def test_check_refuses_what_build_would_with_the_same_line_and_builds_nothing(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: tournaments check every spec as their config is made (``PolicyRegistry.check``); a kind with a body
    says how its body is checked, so a new kind cannot skip it unnoticed."""
    kinds = builtin_kinds()
    assert all(kind.check is not None for kind in kinds if kind.body and kind.buildable)
    registry = PolicyRegistry(kinds, entry_points=False)
    (tmp_path / "my_agents.py").write_text(AGENTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec in ["heuristc", "heuristic?depth=2", "human", "py:my_agents:missing", "py:my_agents:make?width=2",
                 "preset:run9", "llm:/nowhere?mode=dream", "showdown:Not An Id"]:
        with pytest.raises(WolfeClickError) as built:
            registry.build(spec)
        with pytest.raises(WolfeClickError) as checked:
            registry.check(spec)
        assert str(checked.value) == str(built.value) and "\n" not in str(checked.value), spec
    with pytest.raises(PolicySpecError, match="unknown option"):
        registry.check("random", quant_="nf4")  # a misspelt checkpoint option, whatever the spec
    monkeypatch.setattr(PolicyKind, "resolve_factory", lambda self: pytest.fail(f"{self.name} was built"))
    for spec in ["random", "py:my_agents:broken", "preset:run1?mode=generate", "showdown:someone"]:
        registry.check(spec)  # only the factory can tell a broken agent; checking never calls it


def test_the_app_and_the_cli_offer_what_the_registry_holds(capsys: pytest.CaptureFixture[str]) -> None:
    from wolfeclick.cli import main
    from wolfeclick.cli.main_parser import build_parser
    from wolfeclick.ui.live_page import policy_choices

    toy = PolicyKind("toy", "A toy agent.", "my_agents:make", external=True)
    registry = PolicyRegistry([*builtin_kinds(), toy], entry_points=False)
    catalogue = ServedCatalogue.from_registry(registry)
    agent = [spec for _, spec in policy_choices(catalogue)]
    assert agent[:6] == ["heuristic", "maxdamage", "random", "preset:run1", "preset:run2", "preset:run3"]
    assert "toy" in agent and agent[-1] == "human" and "custom" not in agent
    assert [spec for _, spec in policy_choices(catalogue, opponent=True)][:3] == ["random", "maxdamage", "heuristic"]
    record = build_parser()._subparsers._group_actions[0].choices["record"]  # type: ignore[union-attr]
    mode = next(a for a in record._actions if a.dest == "mode")
    assert tuple(mode.choices) == ("score", "generate")
    assert main(["policies", "--json"]) == 0
    listed = {row["name"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}
    assert {"random", "maxdamage", "heuristic", "human", "preset", "llm", "py"} <= set(listed)
    assert listed["llm"]["gpu"] and not listed["heuristic"]["gpu"] and not listed["human"]["buildable"]
    top_k = next(o for o in listed["llm"]["options"] if o["name"] == "top_k")
    assert top_k == {"name": "top_k", "type": "integer", "default": 20, "choices": None,
                     "help": "generate mode: top-k sampling"}


# ------------------------------------------------------------------------------------------------- third parties
def test_an_installed_agent_plays_a_tournament_by_entry_point_and_py_spec_and_reaches_the_leaderboard(
        agent_site: Path, tmp_path: Path) -> None:
    env = subprocess_env(agent_site)
    listed = wolfeclick(["policies"], env, tmp_path)
    assert listed.returncode == 0, listed.stderr[-2000:]
    (documented,) = re.findall(r"```text\n(power .*?)```", DOC.read_text(), re.S)  # the page shows what it prints
    assert documented.startswith("power  [CPU; entry point power_agent:make (wolfeclick-power-agent 0.1.0)]\n")
    assert documented in listed.stdout + "\n"
    for kind in ("random", "maxdamage", "heuristic", "human", "preset:", "llm:", "py:", "showdown:"):
        assert f"\n{kind}" in "\n" + listed.stdout, kind

    by_entry_point, by_py = "power?switch_below=0.2", "py:power_agent:make?greedy=false"
    results = tmp_path / "results"
    bench = wolfeclick(["bench", "--players", f"{by_entry_point},{by_py}", "--vs", "heuristic", "--pairs", "1",
                        "--format", FORMAT, "--seed", "5", "--out", str(results)], env, tmp_path)
    assert bench.returncode == 0, bench.stderr[-3000:]
    recordings = [json.loads(p.read_text()) for p in results.glob("*/recordings/*.json")]
    assert len(recordings) == 4 and all(r["result"]["winner"] in ("p1", "p2", None) for r in recordings)
    players = {p["policy"]: p["metadata"] for r in recordings for p in r["players"].values()}
    assert set(players) == {by_entry_point, by_py, "heuristic"}
    assert players[by_entry_point]["distribution"] == "wolfeclick-power-agent 0.1.0"
    assert players[by_entry_point]["options"] == {"switch_below": 0.2, "greedy": True}
    assert players[by_py]["kind"] == "py" and players[by_py]["options"] == {"switch_below": 0.0, "greedy": False}
    assert players[by_py]["agent"] == "power"  # the agent's own metadata is kept

    board = tmp_path / "board.json"
    shown = wolfeclick(["leaderboard", "--results", str(results), "--recordings", str(tmp_path / "none"),
                        "--min-battles", "1", "--json", str(board)], env, tmp_path)
    assert shown.returncode == 0, shown.stderr[-2000:]
    rows = {row["policy"]: row for row in json.loads(board.read_text())["rows"]}
    assert set(rows) == {by_entry_point, by_py, "heuristic"}
    assert rows["heuristic"]["battles"] == 4 and rows[by_entry_point]["battles"] == 2
    assert by_entry_point in shown.stdout and by_py in shown.stdout


def test_an_agent_plays_the_same_battle_twice_from_the_same_seed(agent_site: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Same seed, same policies, same bytes: the agent draws from the observation's seeded generator."""
    import asyncio

    from wolfeclick.battle.runner import play_battle

    monkeypatch.syspath_prepend(str(agent_site))

    def play() -> dict:
        recording = asyncio.run(play_battle(make_policy("py:power_agent:make?greedy=false"),
                                            make_policy("heuristic"), format_id=FORMAT, seed=11, max_turns=8))
        data = recording.model_dump(mode="json")
        return {"log": data["log"], "inputlog": data["inputlog"], "result": data["result"]}

    first, second = play(), play()
    assert first == second and len(first["inputlog"]) > 4


KINDS_MODULE = '''
from wolfeclick.policies.base import Decision
from wolfeclick.policies.registry import Option, PolicyKind

class Last:
    blocking = True
    def __init__(self, k):
        self.k = k
    def decide(self, observation):
        return Decision(action=observation.legal_actions[-1])

def make(k=1):
    return Last(k)

KIND = PolicyKind("ignored", "Plays the last legal action.", "ep_agents:make", gpu=True,
                  options=(Option("k", int, 1, "how many", (1, 2, 3)),))
'''


def test_entry_points_become_kinds_and_the_bad_ones_are_named_in_one_line(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution's entry points, found through ``importlib.metadata`` (a dist-info folder on ``sys.path``): a
    ``PolicyKind`` keeps its own options and GPU need, a built-in name is never taken over, a bad one is told."""
    (tmp_path / "ep_agents.py").write_text(KINDS_MODULE)
    info = tmp_path / "ep_agents-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-agents\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text("[wolfeclick.policies]\nlast = ep_agents:KIND\nrandom = ep_agents:make\n"
                                           "Bad_Name = ep_agents:make\ngone = ep_agents_missing:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = PolicyRegistry(builtin_kinds())
    assert registry.names()[-2:] == ["last", "gone"]
    offered = [(spec, label) for spec, label, _ in registry.choices()]
    assert offered[-2:] == [("last", "ep-agents 1.2"), ("gone", "ep-agents 1.2")]
    assert "ep_agents" not in sys.modules  # offered by name: nothing imported until one is chosen
    last = registry.get("last")
    assert last.gpu and last.external and last.source == "entry point ep_agents:KIND (ep-agents 1.2)"
    policy = make_policy("last?k=2", registry)
    assert policy.blocking and policy.metadata()["options"] == {"k": 2}
    assert policy.metadata()["distribution"] == "ep-agents 1.2"
    with pytest.raises(PolicySpecError, match=r"option k='5' is not one of 1, 2, 3"):
        make_policy("last?k=5", registry)
    assert make_policy("random", registry).metadata()["kind"] == "baseline"  # the built-in wins
    with pytest.raises(PolicySpecError, match="module 'ep_agents_missing' not found") as error:
        make_policy("gone", registry)
    assert "\n" not in str(error.value)
    assert [k.name for k in registry.kinds()][-1] == "last"  # listing leaves the broken one out, and says why
    problems = " | ".join(registry.problems)
    assert "'random' (ep_agents:make) is shadowed by the built-in" in problems
    assert "'Bad_Name' (ep_agents:make): not a valid kind name" in problems and "ep_agents_missing" in problems
