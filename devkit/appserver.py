"""A real ``python app.py`` on a free 127.0.0.1 port with its own recordings and results folders: ``Server`` (the
tests' session app, started in its constructor) and ``running_app`` (a script's ``with``), one launcher under both;
the page's load event called as a browser does (``raw_load``); a process's RSS and a percentile for benchmarks."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import IO, Any, Iterator

import httpx

from benchmarks.harness import percentile  # noqa: F401  (the benchmarks' one percentile, for the scripts here)
from devkit import ROOT
from devkit.app_forker import ForkedApp, Forkers, per_app
from devkit.samples import HOSTILE_ID, SAMPLES, hostile_data


def app_client(url: str, **options: Any) -> Any:
    """A ``gradio_client.Client`` for an app on this machine (plain http): without certificate checks, which it
    would otherwise set up afresh for every request (a TLS context reading the system's CA bundle, about 20 ms of
    CPU each: 64 CPU s of a suite run's workers, measured with py-spy). ``options``: the Client's own."""
    from gradio_client import Client

    return Client(url, verbose=False, ssl_verify=False, **options)


LOCAL = {"verify": False}
"""httpx arguments for a request to a server on this machine (plain http): no TLS context to set up (about 20 ms)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


_FORKERS: list[Forkers] = []
"""The suite's app forkers while ``fork_apps()`` is on (one ``Forkers``), else empty."""


def fork_apps(on: bool = True) -> None:
    """From now on a ``Server`` forks its app from a process that has imported the app's packages once
    (``devkit.app_forker``) instead of starting an interpreter: about 1.3 CPU s and 2 s of wall less a start.
    ``on=False`` ends the forkers (pytest calls it as the session ends)."""
    if on and not _FORKERS:
        _FORKERS.append(Forkers())
    elif not on:
        while _FORKERS:
            _FORKERS.pop().close()


def start_app(root: Path, port: int, env: dict[str, str] | None = None,
              start_s: float = 600, fork: bool = False) -> tuple[subprocess.Popen[bytes] | ForkedApp, IO[bytes]]:
    """``app.py`` serving ``root/recordings`` and ``root/results`` on 127.0.0.1:``port`` only, its output in
    ``root/server.log``; returns once ``/config`` answers (RuntimeError with the log's tail if it exits or hangs).
    ``fork``: forked (``fork_apps``) when the suite has turned that on, else started."""
    full = {**os.environ, "WOLFECLICK_RECORDINGS": str(root / "recordings"), "WOLFECLICK_RESULTS": str(root / "results"),
            "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False",
            **(env or {})}
    log = open(root / "server.log", "wb")
    proc: subprocess.Popen[bytes] | ForkedApp
    if fork and _FORKERS:
        proc = _FORKERS[0].start(ROOT / "app.py", ROOT, full, root / "server.log")
    else:
        proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=full, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + start_s  # a hang guard: a cold start took 28-60 s on a machine loaded 12-18
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.close()
            raise RuntimeError(f"app.py exited: {(root / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(url + "config", timeout=1, **LOCAL).status_code == 200:
                return proc, log
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    stop_app(proc, log)
    raise RuntimeError(f"app.py did not start serving within {start_s:.0f} s")


def stop_app(proc: subprocess.Popen[bytes] | ForkedApp, log: IO[bytes]) -> None:
    """Ctrl-C (the app closes cleanly and removes its temp files), then SIGKILL if it does not end."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    log.close()


@contextlib.contextmanager
def running_app(root: Path, env: dict[str, str] | None = None, start_s: float = 120) -> Iterator[tuple[str, int]]:
    """``app.py`` serving ``root/recordings`` and ``root/results``; yields (url, pid); stopped on the way out."""
    port = free_port()
    proc, log = start_app(root, port, env, start_s)
    try:
        yield f"http://127.0.0.1:{port}/", proc.pid
    finally:
        stop_app(proc, log)


TEST_VISITORS = {"WOLFECLICK_APP_LIVE_PER_VISITOR": "8", "WOLFECLICK_APP_HEAVY_PER_VISITOR": "8",
                 "WOLFECLICK_SIM_NICE": "0"}
"""Every page a test opens comes from 127.0.0.1, one address standing for many visitors (two people playing at
once, a test's battle still ending as the next one starts): the per-visitor run quotas are opened wide for them.
The quotas themselves are tested apart (``tests/test_trust_quotas.py``); ``extra_env`` can set them back.

The tests' app also runs its simulators at its own priority: the public app's nice 10 lets its pages go first, but
beside the other pytest worker (a training test on every core) a niced simulator got a tenth of a CPU, and CI's
phone-width test waited 240 s for the default tournament that takes 20 s alone. Niceness is tested apart too."""


class Server:
    """``app.py`` on a free port with its own copies of the sample recordings (and the hostile one), started here
    (forked, once the suite has called ``fork_apps``).

    ``pace``: Live's seconds between turns; ``keep``: leave the folder (and its ``server.log``) behind;
    ``extra_env``: the operator's own settings ($WOLFECLICK_APP_POLICIES, a bound)."""

    def __init__(self, hostile: bool = True, pace: float = 0.0, keep: bool = False,
                 extra_env: dict[str, str] | None = None) -> None:
        self.keep = keep
        self.root = Path(tempfile.mkdtemp(prefix="wolfeclick-ui-test-"))
        self.recordings = self.root / "recordings"
        self.results = self.root / "results"
        self.recordings.mkdir()
        for path in SAMPLES:
            shutil.copy(path, self.recordings / path.name)
        if hostile:
            (self.recordings / f"{HOSTILE_ID}.json").write_text(json.dumps(hostile_data()), encoding="utf-8")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {"WOLFECLICK_LIVE_PACE": str(pace), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
               **TEST_VISITORS, **(extra_env or {})}
        self.started = time.monotonic()
        # An app whose interpreter the test changes (another PYTHONPATH: a sitecustomize hiding an extra) starts for
        # real; an app that differs only in its own settings is forked (fork_apps)
        own_settings_only = all(per_app(name) for name in (extra_env or {}))
        self.proc, self.log = start_app(self.root, self.port, env, fork=own_settings_only)
        self.startup_s = time.monotonic() - self.started

    def files(self) -> set[str]:
        return {p.name for p in self.recordings.iterdir()}

    def stop(self, wait: bool = True) -> None:
        """Stopped and its folder removed (unless ``keep``). ``wait=False``: in a thread of this process, which
        ``finish_stops`` joins: the app's Ctrl-C waits 5 s for a client's kept-alive connection (Gradio's server
        join), often 15 s (then SIGKILL) after battles, and a test file's teardown need not wait for it."""
        if not wait:
            thread = threading.Thread(target=self.stop, name=f"stop app :{self.port}")
            _stopping.append(thread)
            thread.start()
            return
        stop_app(self.proc, self.log)
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


_stopping: list[threading.Thread] = []


def finish_stops() -> None:
    """Until every app stopped with ``Server.stop(wait=False)`` has ended (pytest calls it at the session's end)."""
    while _stopping:
        _stopping.pop().join()


def raw_load(server: Server, query: str) -> list:
    """Call the page's load event the way a browser does, with the page's query string on queue/join."""
    config = httpx.get(server.url + "config", **LOCAL).json()
    fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "open_share_link")
    session = uuid.uuid4().hex[:11]
    join = httpx.post(f"{server.url}gradio_api/queue/join?{query}",
                      json={"data": [], "event_data": None, "fn_index": fn_index, "trigger_id": None,
                            "session_hash": session}, timeout=10, **LOCAL)
    assert join.status_code == 200, join.text
    with httpx.stream("GET", f"{server.url}gradio_api/queue/data", params={"session_hash": session},
                      timeout=20, **LOCAL) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed":
                assert message.get("success"), message
                return message["output"]["data"]
    raise AssertionError("no result from the load event")
