"""The suite's forked app starts (devkit/app_forker.py): a forked app is the app as `python app.py` runs it — its own
settings, library, session, log and exit code — and one whose environment differs beyond its own settings is never
forked from a forker started with another."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from devkit import ROOT, appserver
from devkit.app_forker import Forkers, forker_key
from devkit.appserver import free_port, raw_load, start_app, stop_app
from devkit.samples import SAMPLES

pytestmark = pytest.mark.app


def _library(root: Path, names: list[str]) -> Path:
    (root / "recordings").mkdir(parents=True)
    for path in SAMPLES:
        if path.stem in names:
            (root / "recordings" / path.name).write_bytes(path.read_bytes())
    return root


def _config(url: str) -> dict:
    return httpx.get(url + "config", timeout=30).json()


def _library_shown(port: int) -> set[str]:
    """The sample recordings the page's load event offers (the app reads its library from its own
    WOLFECLICK_RECORDINGS)."""
    text = json.dumps(raw_load(SimpleNamespace(url=f"http://127.0.0.1:{port}/"), ""))  # type: ignore[arg-type]
    return {path.stem for path in SAMPLES if path.stem in text}


@pytest.fixture
def forking():
    appserver.fork_apps(False)
    appserver.fork_apps()
    yield appserver._FORKERS[0]
    appserver.fork_apps(False)


def test_a_forked_app_serves_what_a_started_one_does_with_its_own_library_and_stops_on_ctrl_c(forking, tmp_path):
    first, second = SAMPLES[0].stem, SAMPLES[1].stem
    started_root, a_root, b_root = (_library(tmp_path / name, [sample]) for name, sample in
                                    (("started", first), ("a", first), ("b", second)))
    started, log = start_app(started_root, port := free_port())
    try:
        plain, plain_shown = _config(f"http://127.0.0.1:{port}/"), _library_shown(port)
    finally:
        stop_app(started, log)
    apps = [(start_app(root, p := free_port(), fork=True), p) for root in (a_root, b_root)]
    try:
        (a, _), (b, _) = apps
        assert type(a[0]).__name__ == type(b[0]).__name__ == "ForkedApp"  # not started: forked
        configs = [_config(f"http://127.0.0.1:{p}/") for _, p in apps]
        assert [_library_shown(p) for _, p in apps] == [{first}, {second}] and plain_shown == {first}
        # the same page: the same components and events as the started app's, whatever its library holds
        def shape(config: dict) -> tuple:
            return (sorted(c["type"] for c in config["components"]),
                    sorted(str(d.get("api_name")) for d in config["dependencies"]))
        assert shape(configs[0]) == shape(plain)
        assert os.getpgid(a[0].pid) == a[0].pid != os.getpgid(0)  # a session of its own: Ctrl-C by process group
    finally:
        for (proc, log), _ in apps:
            stop_app(proc, log)
    for (proc, _), _ in apps:
        assert proc.returncode == 0  # Ctrl-C: the app closed cleanly
    for root in (a_root, b_root):
        assert "Closing server" in (root / "server.log").read_text()  # its output went to its own log


def test_a_forked_app_that_fails_says_why_in_one_line_and_the_forker_forks_on(forking, tmp_path, monkeypatch):
    root = _library(tmp_path / "bad", [])
    with pytest.raises(RuntimeError, match="app.py exited") as failed:
        start_app(root, free_port(), env={"WOLFECLICK_APP_LIVE_PER_VISITOR": "many"}, fork=True)
    assert "WOLFECLICK_APP_LIVE_PER_VISITOR" in str(failed.value)
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "the next test (call)")  # as pytest sets it for every test
    good = _library(tmp_path / "good", [SAMPLES[0].stem])
    proc, log = start_app(good, free_port(), fork=True)
    stop_app(proc, log)
    assert proc.returncode == 0
    assert len(forking._forkers) == 1  # one forker for both: the next test's apps are forked from it too


def test_an_environment_that_differs_beyond_the_apps_own_settings_gets_its_own_forker(tmp_path):
    base = dict(os.environ, PYTHONPATH=str(ROOT))
    assert forker_key({**base, "WOLFECLICK_RECORDINGS": "a", "GRADIO_SERVER_PORT": "1", "PYTEST_CURRENT_TEST": "a"}) \
        == forker_key({**base, "WOLFECLICK_RECORDINGS": "b", "GRADIO_SERVER_PORT": "2", "PYTEST_CURRENT_TEST": "b"})
    other = {**base, "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    assert forker_key(other) != forker_key(base)
    forkers = Forkers()
    try:
        logs = []
        for n, env in enumerate((base, other)):
            (tmp_path / f"app{n}").mkdir()
            logs.append(tmp_path / f"app{n}" / "server.log")
            logs[-1].write_bytes(b"")
            env = {**env, "GRADIO_SERVER_PORT": str(free_port()), "GRADIO_SERVER_NAME": "127.0.0.1",
                   "WOLFECLICK_RECORDINGS": str(tmp_path / f"app{n}"), "GRADIO_ANALYTICS_ENABLED": "False"}
            app = forkers.start(ROOT / "app.py", ROOT, env, logs[-1])
            # Killed: how an app stops on Ctrl-C is tested apart (once, here, an app let a Ctrl-C sent at once go
            # unanswered for 60 s: the app's handler waited on a lock its own thread held, tests/test_app_ctrl_c.py)
            os.killpg(app.pid, signal.SIGKILL)
            assert app.wait(60) == -signal.SIGKILL
        assert len(forkers._forkers) == 2  # one per environment
    finally:
        forkers.close()
