"""The test suite's app starts, forked: one process per pytest worker imports what the app imports from other
packages (Gradio, FastAPI, pandas, Plotly...) once, and each test's ``python app.py`` is a fork of it that runs
``app.py`` as ``__main__``. A start took about 2 CPU s and 3 s of wall here, two thirds of it importing Gradio; a
forked one 0.65 s of each.

What a forked app shares with a started one: the same ``app.py`` run from the top (``serve()``: its Ctrl-C handling,
the app's own imports, Gradio's launch), its own session (Ctrl-C by process group), environment, working folder,
output in the log, exit code, and an ordinary interpreter exit (atexit handlers run). What it does not: the
interpreter's start and the imports of those packages, which the fork inherits. So the forker imports only packages
that start no thread and read no setting of the app's (the app's settings are all ``WOLFECLICK_*`` and read after
the fork), and it is keyed by the rest of the environment: an app whose environment differs elsewhere (another
``PYTHONPATH``, a Gradio setting) gets a forker of its own. The app's own start, unforked, stays tested where it is
the subject (``tests/test_cli_arguments.py``, ``benchmarks.app_start`` and its smoke test).

    python -m devkit.app_forker      # the forker itself: JSON requests on stdin, replies on stdout
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import selectors
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import IO, Any

PRELOADED = ("gradio", "fastapi", "uvicorn", "starlette", "httpx", "pydantic", "pandas", "plotly.graph_objects",
             "huggingface_hub", "numpy", "PIL.Image", "orjson")
"""What the forker imports: the app's heavy imports from other packages (none of them starts a thread)."""

PER_APP_PREFIXES = ("WOLFECLICK_", "PYTEST_")
PER_APP_NAMES = frozenset({"GRADIO_SERVER_PORT"})
"""Environment variables an app may set for itself: read by the app after the fork, never by what the forker
imported. Every other variable keys the forker. (pytest sets ``PYTEST_CURRENT_TEST`` to the running test's name: in
the key, every app had a forker of its own and forking saved nothing.)"""


def per_app(name: str) -> bool:
    """Whether an app may set the environment variable ``name`` for itself, apart from its forker's."""
    return name in PER_APP_NAMES or name.startswith(PER_APP_PREFIXES)


def forker_key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The part of an app's environment its forker must have been started with."""
    return tuple(sorted((k, v) for k, v in env.items() if not per_app(k)))


# ---------------------------------------------------------------------------------------------------------------
# The forker's side (python -m devkit.app_forker)
# ---------------------------------------------------------------------------------------------------------------


def _reply(out: IO[bytes], message: dict[str, Any]) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def _run_app(request: dict[str, Any], settled: int) -> int:
    """In the forked child: become the app's process (``settled`` is closed once it leads a session of its own),
    then run ``app.py`` as ``__main__``; its exit code."""
    os.setsid()  # a session and process group of its own, as start_new_session=True gives a started app
    os.close(settled)  # the forker answers with the pid only now: a Ctrl-C to the group reaches the app, as with Popen
    null = os.open(os.devnull, os.O_RDONLY)
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    script = request["script"]
    sys.argv = [script]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:  # as the interpreter does for an uncaught exception: the traceback in the log, exit 1
        traceback.print_exc()
        return 1
    return 0


def serve_forks() -> int:
    """Import the preloaded packages, then fork an app for each request line until stdin ends."""
    from wolfeclick.ui.app_process import prepare_app_process

    prepare_app_process()
    for name in PRELOADED:
        importlib.import_module(name)
    requests, out = sys.stdin.buffer, sys.stdout.buffer
    if threading.active_count() != 1:  # a fork would lose a thread something relies on: refuse, the caller starts
        _reply(out, {"refused": f"threads after the imports: {[t.name for t in threading.enumerate()]}"})
        return 1
    _reply(out, {"ready": os.getpid()})
    selector = selectors.DefaultSelector()
    selector.register(requests, selectors.EVENT_READ)
    watched: set[int] = set()  # the pidfds of the apps forked and not yet ended
    accepting = True
    while True:
        for key, _ in selector.select():
            if key.data is None:  # a request (the pidfds carry their pid)
                line = requests.readline()
                if not line:  # no more apps to fork: end once those forked have ended (their exit codes are awaited)
                    selector.unregister(requests)
                    accepting = False
                    if not watched:
                        return 0
                    continue
                request = json.loads(line)
                wait_end, settled = os.pipe()
                pid = os.fork()
                if pid == 0:  # the app: none of the forker's descriptors stays open in it
                    selector.close()
                    for fd in (*watched, wait_end):
                        os.close(fd)
                    return _run_app(request, settled)
                os.close(settled)
                os.read(wait_end, 1)  # end of file: the child has closed it, after setsid (or has died)
                os.close(wait_end)
                pidfd = os.pidfd_open(pid)
                watched.add(pidfd)
                selector.register(pidfd, selectors.EVENT_READ, pid)
                _reply(out, {"pid": pid})
            else:  # an app ended: reaped, its exit code sent
                pid = key.data
                selector.unregister(key.fileobj)
                watched.discard(key.fd)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                _reply(out, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})
                if not watched and not accepting:
                    return 0


# ---------------------------------------------------------------------------------------------------------------
# The worker's side
# ---------------------------------------------------------------------------------------------------------------


class ForkedApp:
    """What ``subprocess.Popen`` offers of a started app (``pid``, ``poll``, ``wait``, ``returncode``), for an app
    forked by a ``Forker``."""

    def __init__(self, forker: Forker, pid: int, args: list[str]) -> None:
        self.forker, self.pid, self.args = forker, pid, args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        with self.forker.changed:
            self.returncode = self.forker.codes.get(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        with self.forker.changed:
            if not self.forker.changed.wait_for(lambda: self.pid in self.forker.codes or self.forker.gone, timeout):
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            if self.pid not in self.forker.codes:
                raise RuntimeError(f"the app forker ended before app {self.pid} did")
            self.returncode = self.forker.codes[self.pid]
        return self.returncode


class Forker:
    """A ``python -m devkit.app_forker`` process with one environment; ``start`` forks an app from it."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env = env
        self.proc = subprocess.Popen([sys.executable, "-m", "devkit.app_forker"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        first = json.loads(self.proc.stdout.readline() or b'{"refused": "the forker exited at start"}')
        if "ready" not in first:
            self.proc.wait()
            raise RuntimeError(f"app forker: {first.get('refused', first)}")
        self.codes: dict[int, int] = {}
        self.gone = False
        self.changed = threading.Condition()
        self._started: list[int] = []
        self._lock = threading.Lock()  # one request and its pid reply at a time
        self._reader = threading.Thread(target=self._read, name="app forker replies", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.changed:
                if "pid" in message:
                    self._started.append(message["pid"])
                else:
                    self.codes[message["exit"]] = message["code"]
                self.changed.notify_all()
        with self.changed:
            self.gone = True
            self.changed.notify_all()

    def start(self, script: Path, cwd: Path, env: dict[str, str], log: Path) -> ForkedApp:
        """``python script`` in ``cwd`` with ``env`` (keyed as this forker's), its output appended to ``log``."""
        assert forker_key(env) == forker_key(self.env), "an app's environment must match its forker's"
        assert self.proc.stdin is not None
        request = {"script": str(script), "cwd": str(cwd), "env": env, "log": str(log)}
        with self._lock, self.changed:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
            if not self.changed.wait_for(lambda: self._started or self.gone, 60):
                raise RuntimeError("the app forker did not answer in 60 s")
            if not self._started:
                raise RuntimeError("the app forker ended")
            pid = self._started.pop(0)
        return ForkedApp(self, pid, [sys.executable, str(script)])

    def close(self, wait: bool = True) -> None:
        """Fork no more: the forker ends once every app it forked has ended (their ``wait`` still gets the exit
        code). ``wait``: until then (10 s at most, then it is killed and its apps' codes are lost)."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        if not wait:
            return
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(10)


class Forkers:
    """One ``Forker`` per environment key, started on first use and kept for the session (a test suite's context:
    ``devkit.appserver.fork_apps``)."""

    KEEP = 2

    def __init__(self) -> None:
        self._forkers: dict[tuple[tuple[str, str], ...], Forker] = {}
        self._lock = threading.Lock()

    def start(self, script: Path, cwd: Path, env: dict[str, str], log: Path) -> ForkedApp:
        key = forker_key(env)
        with self._lock:
            forker = self._forkers.get(key)
            if forker is None or forker.proc.poll() is not None:
                if len(self._forkers) >= self.KEEP:  # keep the newest: an old environment rarely comes back
                    self._forkers.pop(next(iter(self._forkers))).close(wait=False)  # its apps may still be running
                forker = self._forkers[key] = Forker({k: v for k, v in key}, cwd)
        return forker.start(script, cwd, env, log)

    def close(self) -> None:
        with self._lock:
            for forker in self._forkers.values():
                forker.close()
            self._forkers.clear()


if __name__ == "__main__":
    raise SystemExit(serve_forks())
