"""A public app runs nobody's code (issue 44). A visitor — every UI event and every ``/gradio_api/`` call — picks
only from the operator's served catalogue; a spec outside it (``py:``, an ``llm:`` local path, ``showdown:``, a typo)
is refused in one line before any import, file access or connection, and no visitor can start more than the app's
bounds allow. The operator (CLI, environment) still names any policy factory.

A canary module records being imported (and its factory records being called) in files; a TCP listener on
127.0.0.1 records any connection. Every refused spec is tried through each tab's own handler (Live agent and
opponent, take over — typed and "as recorded" from an uploaded file —, Compare, the battle-stream API) and, once,
over HTTP against ``python app.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.policies.catalogue import PolicyRefused, ServedCatalogue
from wolfeclick.policies.registry import PolicyRegistry, builtin_kinds, default_registry
from wolfeclick.ui.app import build_app
from wolfeclick.ui.choice_refusals import REFUSAL
from wolfeclick.ui.context import AppContext, Settings
from wolfeclick.ui.library import Library

ROOT = Path(__file__).resolve().parents[1]
CANARY = '''
import os
from pathlib import Path

from wolfeclick.policies.base import policy_factory

Path(os.environ.get("WC_CANARY_DIR", "{dir}"), "imported").write_text("imported")


class Agent:
    def decide(self, observation):
        from wolfeclick.policies.base import Decision
        return Decision(action=observation.legal_actions[0])


@policy_factory
def make(path: str = ""):
    Path(os.environ.get("WC_CANARY_DIR", "{dir}"), "called").write_text("called")
    return Agent()
'''
OPERATOR_AGENT = '''
from wolfeclick.policies.base import Decision, policy_factory


class First:
    def decide(self, observation):
        return Decision(action=observation.allowed()[0])


@policy_factory
def make(depth: int = 1):
    """Plays the first allowed action."""
    return First()
'''


@pytest.fixture()
def canary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path with ``wc_canary_mod`` (writes ``imported``/``called`` beside itself) and a listener."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "wc_canary_mod.py").write_text(CANARY.format(dir=site))
    (site / "wc_operator_agent.py").write_text(OPERATOR_AGENT)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "wc_canary_mod", raising=False)
    return site


@pytest.fixture()
def listener(monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """A TCP listener on 127.0.0.1; ``$WOLFECLICK_SERVER`` points there, so a ``showdown:`` seat would connect."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    monkeypatch.setenv("WOLFECLICK_SERVER", f"ws://127.0.0.1:{sock.getsockname()[1]}/showdown/websocket")
    yield sock
    sock.close()


def connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def hostile_specs(site: Path, port: int) -> list[str]:
    marker = site / "written"
    return [
        f"py:wc_canary_mod:make?path={marker}",
        f"py:os:system?command=touch {marker}",
        f"py:subprocess:Popen?args=touch {marker}&shell=true",
        f"py:pathlib:Path.touch?self={marker}",
        f"py:shutil:copyfile?src=/etc/passwd&dst={marker}",
        f"py:urllib.request:urlopen?url=http://127.0.0.1:{port}/",
        " PY:wc_canary_mod:make ", "py: wc_canary_mod : make",
        f"llm:{site}", f"llm:{site}/model+{site}/adapter", "llm:someone/some-model",
        "preset:run1+/etc", "preset:run9", "showdown:canarybot", "showdown:canarybot?server=ws://127.0.0.1:1",
        "heuristic?depth=1", "random?x=1", "preset:run1?device=cuda:7", "preset:run1?samples=100000",
        "preset:run1?profile=../../etc/passwd", "nosuchpolicy", "heuristic\nrandom", "x" * 400,
    ]


def nothing_happened(site: Path, sock: socket.socket) -> None:
    assert not (site / "imported").exists(), "the canary module was imported"
    assert not (site / "called").exists() and not (site / "written").exists(), "a factory was called"
    assert "wc_canary_mod" not in sys.modules
    assert not connected(sock), "something connected to the listener"


def session(name: str) -> Any:
    return SimpleNamespace(session_hash=name)


def api_fn(demo: Any, name: str) -> Any:
    return next(f for f in demo.fns.values() if f.api_name == name).fn


def run_stream(fn: Any, *args: Any, request: Any = None) -> list[dict]:
    import inspect

    extra = {"progress": lambda *a, **k: None} if "progress" in inspect.signature(fn).parameters else {}

    async def go() -> list[dict]:
        return [u async for u in fn(*args, request=request or session("v"), **extra)]
    return asyncio.run(go())


def texts(updates: list[dict]) -> list[str]:
    """Every string a handler sent to the page (its status lines), in order."""
    found = []
    for update in updates:
        values = update.values() if isinstance(update, dict) else [update]
        found.extend(v for v in values if isinstance(v, str))
    return found


def app(tmp_path: Path, **bounds: Any) -> Any:
    library = Library(tmp_path / "recordings")
    ctx = AppContext(library=library, results=tmp_path / "results", settings=Settings(live_pace=0.0, **bounds),
                     catalogue=ServedCatalogue.from_registry(default_registry(), ["py:wc_operator_agent:make"]))
    return build_app(library, ctx)


def stored_battle(demo: Any, recording: Any = None) -> Any:
    """A short real battle (or ``recording``) saved in the app's recordings folder, for the Replays handlers."""
    recording = recording or asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"),
                                                     format_id="gen4randombattle", seed=7, max_turns=6))
    library = demo.wolfeclick_context.library
    library.directory.mkdir(parents=True, exist_ok=True)
    (library.directory / f"{recording.id}.json").write_text(recording.to_json(), encoding="utf-8")
    return recording


# --------------------------------------------------------------------------------------------------------- pure
def test_admit_is_pure_matching_against_the_catalogue() -> None:
    """The rule itself: offered specs pass (with the options a visitor may set), everything else is one line, and
    deciding it touches nothing of the registry (a registry that fails on any use is never asked)."""
    catalogue = ServedCatalogue.from_registry(PolicyRegistry(builtin_kinds(), entry_points=False),
                                              ["llm:org/model@main", "llm:org/other?mode=score"])
    assert catalogue.admit("heuristic") == "heuristic" and catalogue.admit(" random ") == "random"
    assert catalogue.admit("human") == "human" and catalogue.admit("llm:org/model@main") == "llm:org/model@main"
    assert catalogue.admit("preset:run2?mode=generate&samples=2") == "preset:run2?mode=generate&samples=2"
    assert catalogue.admit("llm:org/other?mode=score") == "llm:org/other?mode=score"
    assert catalogue.admit("llm:org/model@main?mode=generate") == "llm:org/model@main?mode=generate"
    for spec, words in [("py:os:system", "not offered"), ("llm:/tmp/x", "not offered"),
                        ("showdown:bot", "not offered"), ("preset:run1?device=cuda:1", "cannot be set here"),
                        ("preset:run1?samples=100000", "must be from 1 to 8"),
                        ("llm:org/other?mode=generate", "not offered"),
                        ("llm:org/model@main?device=cpu", "cannot be set here"),
                        ("heuristic?depth=2", "cannot be set here"), (42, "chosen by name"), ("", "choose a policy")]:
        with pytest.raises(PolicyRefused) as info:
            catalogue.admit(spec)
        assert words in str(info.value) and "\n" not in str(info.value), (spec, str(info.value))
    with pytest.raises(PolicyRefused, match="cannot play here"):
        catalogue.admit("human", human=False)

    class Untouchable:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"the registry was asked {name}")

    catalogue._registry = Untouchable()  # type: ignore[assignment]
    for spec in hostile_specs(Path("/nowhere"), 9):
        if not spec.startswith("preset:run1?") and spec not in ("heuristic?depth=1", "random?x=1"):
            with pytest.raises(PolicyRefused):
                catalogue.admit(spec)


def test_an_operator_list_that_names_no_policy_is_one_line_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from wolfeclick.errors import InputError

    registry = PolicyRegistry(builtin_kinds(), entry_points=False)
    for listed, words in [(["nosuch"], "$WOLFECLICK_APP_POLICIES: unknown policy spec"),
                          (["human"], "cannot be served")]:
        with pytest.raises(InputError) as info:
            ServedCatalogue.from_registry(registry, listed)
        assert words in str(info.value) and "\n" not in str(info.value)
    monkeypatch.setenv("WOLFECLICK_APP_POLICIES", "heuristic?x=1, , llm:a/b")
    from wolfeclick.settings import settings

    assert settings().app_policies == ("heuristic?x=1", "llm:a/b")
    monkeypatch.setenv("WOLFECLICK_APP_ENGINES", "local,cluster")
    with pytest.raises(InputError, match="WOLFECLICK_APP_ENGINES"):
        settings()


# ------------------------------------------------------------------------------------------- every tab's handler
def test_every_tab_and_api_refuses_a_visitor_spec_before_any_import_file_or_connection(
        tmp_path: Path, canary: Path, listener: socket.socket) -> None:
    demo = app(tmp_path)
    port = listener.getsockname()[1]
    parent = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen4randombattle",
                                     seed=5, max_turns=6))
    library = demo.wolfeclick_context.library
    library.directory.mkdir(parents=True, exist_ok=True)
    (library.directory / f"{parent.id}.json").write_text(parent.to_json(), encoding="utf-8")
    live, takeover, compare = (api_fn(demo, n) for n in ("live_start", "takeover_start", "compare_run"))
    stream = api_fn(demo, "battle_stream")
    for spec in hostile_specs(canary, port):
        said = {
            "live agent": texts(run_stream(live, spec, "random", "gen4randombattle", "1", "score", 0, "")),
            "live opponent": texts(run_stream(live, "random", spec, "gen4randombattle", "1", "score", 0, "")),
            "take over p1": texts(run_stream(takeover, spec, "recorded", "score", 0, parent.id, 2, "")),
            "take over p2": texts(run_stream(takeover, "recorded", spec, "score", 0, parent.id, 2, "")),
            "compare": texts(run_stream(compare, ["random", spec], 2, "gen4randombattle", "1", "score", "local")),
        }
        said["battle stream"] = [e["error"] for e in asyncio.run(_collect(stream("random", spec, "gen9randombattle",
                                                                                 1, 5)))]
        for where, lines in said.items():
            refusal = lines[-1] if lines else ""
            assert "⚠" in refusal or where == "battle stream", (spec, where, lines)
            assert refusal and "\n" not in refusal.strip(), (spec, where, lines)
            assert any(w in refusal for w in ("not offered", "cannot be set here", "must be from",
                                              "too long", "not one line")), (spec, where, refusal)
        nothing_happened(canary, listener)
    assert sorted(p.name for p in library.directory.glob("*.json")) == [f"{parent.id}.json"]  # nothing was played


async def _collect(stream: Any) -> list[dict]:
    return [event async for event in stream]


def test_a_recorded_policy_outside_the_catalogue_is_refused_when_taking_over(
        tmp_path: Path, canary: Path, listener: socket.socket) -> None:
    """An uploaded recording names any spec it likes: "as recorded" plays it only if the app serves it."""
    demo = app(tmp_path)
    parent = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen4randombattle",
                                     seed=6, max_turns=5))
    data = json.loads(parent.to_json())
    data["players"]["p1"]["policy"] = f"py:wc_canary_mod:make?path={canary / 'written'}"
    data["id"] = "uploaded-canary"
    library = demo.wolfeclick_context.library
    library.directory.mkdir(parents=True, exist_ok=True)
    (library.directory / "uploaded-canary.json").write_text(json.dumps(data), encoding="utf-8")
    updates = run_stream(api_fn(demo, "takeover_start"), "recorded", "random", "score", 0, "uploaded-canary", 2, "")
    last = texts(updates)[-1]
    assert last.startswith("⚠ Cannot take over") and "does not serve" in last and "\n" not in last
    nothing_happened(canary, listener)


def test_visitor_bounds_are_refused_in_one_line(tmp_path: Path) -> None:
    """Analysis K and battle length, Compare's size and engine, each above the app's bound: one line, nothing run."""
    demo = app(tmp_path, max_k=8, max_decisions=3, max_battles=4)
    parent = stored_battle(demo)
    library = demo.wolfeclick_context.library
    analyse = next(f.fn for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "analysis_start")
    for k, words in [(9, "from 1 to 8"), (2.5, "whole number"), (10**30, "from 1 to 8"), (4, "at most 3")]:
        said = [u for u in texts(run_stream(analyse, parent.id, k, "both")) if "wc-message" in u]
        assert words in said[-1] and "\n" not in said[-1].strip(), (k, said)
    compare = api_fn(demo, "compare_run")
    for args, words in [((["random", "maxdamage", "heuristic"], 2), "at most 4"),
                        ((["random", "maxdamage"], 6), "at most 4")]:
        last = texts(run_stream(compare, *args, "gen4randombattle", "1", "score", "local"))[-1]
        assert words in last and "\n" not in last, last
    last = texts(run_stream(compare, ["random", "maxdamage"], 2, "gen4randombattle", "1", "score", "ray"))[-1]
    assert "not open in this app" in last
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
    from wolfeclick.analysis.schema import ANALYSIS_DIR

    assert not (library.directory / ANALYSIS_DIR).exists()  # where an analysis would have been stored


def test_ask_a_policy_takes_only_served_policies_and_battles_within_the_bound(tmp_path: Path) -> None:
    """The Replays tab's rescore button: a spec outside the catalogue, a person, a bad side or a battle longer than
    the app's bound is one line, and nothing is stored; a served policy's answers are stored where the CLI's go."""
    from wolfeclick.battle.rescore import RESCORE_DIR

    demo = app(tmp_path, max_decisions=40)
    parent = stored_battle(demo)
    library = demo.wolfeclick_context.library
    ask = next(f.fn for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "rescore_start")
    for spec, side, words in [("py:os:system", "p1", "not offered"), ("human", "p1", "a person cannot"),
                              ("heuristic", "p3", "p1 or p2"), ("llm:/etc", "p2", "not offered")]:
        said = [t for t in texts([asyncio.run(ask(parent.id, spec, side))]) if "wc-message" in t]
        assert words in said[-1] and "\n" not in said[-1].strip(), (spec, said)
    assert not (library.directory / RESCORE_DIR).exists()
    short = app(tmp_path / "short", max_decisions=3)
    stored_battle(short, parent)
    ask_short = next(f.fn for f in short.fns.values() if getattr(f.fn, "__name__", "") == "rescore_start")
    said = [t for t in texts([asyncio.run(ask_short(parent.id, "random", "p1"))]) if "wc-message" in t]
    assert "at most 3" in said[-1], said
    said = [t for t in texts([asyncio.run(ask(parent.id, "maxdamage", "p2"))]) if "wc-message" in t]
    assert "agrees with the recorded choice" in said[-1], said
    assert len(list((library.directory / RESCORE_DIR / parent.id).glob("maxdamage-p2.json"))) == 1


def test_an_operator_listed_spec_is_offered_and_plays(tmp_path: Path, canary: Path) -> None:
    demo = app(tmp_path)
    ctx = demo.wolfeclick_context
    agent = next(c for c in demo.blocks.values() if getattr(c, "elem_id", None) == "wc-live-agent")
    assert "py:wc_operator_agent:make" in [value for _, value in agent.choices]
    updates = run_stream(api_fn(demo, "live_start"), "py:wc_operator_agent:make", "random", "gen4randombattle",
                         "3", "score", 0, "")
    assert any("Recorded as" in t for t in texts(updates)), texts(updates)[-3:]
    (recording,) = ctx.library.directory.glob("*.json")
    assert json.loads(recording.read_text())["players"]["p1"]["policy"] == "py:wc_operator_agent:make"


def test_the_operator_records_with_a_py_factory_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "agent.py").write_text(OPERATOR_AGENT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    done = subprocess.run([sys.executable, "-m", "wolfeclick", "record", "--p1", "py:mypkg.agent:make?depth=2",
                           "--p2", "random", "--format", "gen4randombattle", "--seed", "4", "--n", "1", "--out",
                           str(tmp_path / "out")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = (tmp_path / "out").glob("*.json")
    assert json.loads(path.read_text())["players"]["p1"]["policy"] == "py:mypkg.agent:make?depth=2"


# ------------------------------------------------------------------------------------------------------- HTTP
def test_over_http_nothing_a_visitor_sends_is_imported_or_connected(tmp_path: Path) -> None:
    """The same refusals through ``/gradio_api/`` against ``python app.py``, the canary on the server's path."""
    from devkit.appserver import Server, app_client

    site = tmp_path / "site"
    site.mkdir()
    (site / "wc_canary_mod.py").write_text(CANARY.format(dir=site))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    server = Server(hostile=False, extra_env={"PYTHONPATH": os.pathsep.join([str(ROOT), str(site)]),
                                              "WOLFECLICK_SERVER": f"ws://127.0.0.1:{port}/showdown/websocket"})
    try:
        client = app_client(server.url)
        before = server.files()
        for spec in [f"py:wc_canary_mod:make?path={site / 'written'}", f"py:os:system?command=touch {site / 'x'}",
                     f"llm:{site}", "showdown:canarybot", f"py:urllib.request:urlopen?url=http://127.0.0.1:{port}/"]:
            events = client.submit("random", spec, "gen9randombattle", 1, 5, api_name="/battle_stream")
            said = list(events)
            assert said and "not offered" in str(said[-1]), (spec, said)
            for args, api in [((spec, "random", "gen4randombattle", "1", "score", 0), "/live_start"),
                              (([spec, "random"], 2, "gen4randombattle", "1", "score"), "/compare_run")]:
                job = client.submit(*args, api_name=api)
                try:
                    job.result()
                except Exception as exc:  # the app's one line for a value outside a dropdown's choices
                    assert str(exc) == REFUSAL or "not offered" in str(exc), (spec, api, exc)
                else:
                    last = json.dumps(job.outputs()[-1], default=str)
                    assert "not offered" in last, (spec, api, last[:300])
        assert not (site / "imported").exists() and not (site / "called").exists()
        assert not (site / "written").exists() and not (site / "x").exists()
        assert not connected(sock)
        assert server.files() == before  # nothing was played
    finally:
        server.stop(wait=False)
        sock.close()
