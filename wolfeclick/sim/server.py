"""A local ``pokemon-showdown`` server from ``node_modules``, bound to 127.0.0.1, for tests, benchmarks and users.

It runs with ``--no-security`` (no throttling, no login checks: any name logs in without a password), so it only ever
listens on the loopback address; nothing here can bind it anywhere else.

The npm package reads ``config/config.js`` and writes ``logs/`` and ``config/`` *inside its own folder*, which every
checkout here shares (``node_modules`` is one installed copy). Writing the config there would let two servers (a
test and the benchmark, say) clobber each other's port and settings. So each server runs from a **private shadow
folder**: symbolic links to every entry of the package except ``config/``, ``logs/`` and ``databases/``, which are
real, private folders (the config written fresh), and Node started with ``--preserve-symlinks`` (in
``NODE_OPTIONS``, so the server's child processes inherit it) so that the package's ``ROOT_PATH`` is the shadow
folder, not the package. The package itself is never written to. The folder is removed when the server stops.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from wolfeclick.sim.process import SHOWDOWN_DIR, SimulatorError, node_executable, session_group_follows_nice

LOOPBACK = "127.0.0.1"
PRIVATE = ("config", "logs", "databases")
"""The package entries a server writes to: private per server; everything else is a link to the package."""
READY = "now listening on"


def free_port() -> int:
    """A port free on the loopback address right now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def config_text(example: str, port: int, lean: bool = False) -> str:
    """The server's config.js: the package's example config, then our overrides (later ``exports`` win).

    ``lean``: no child processes (the simulator, validator and chat run in the server's one process): starts in
    about half the time and a fifth of the memory, for tests; the stock layout is the package's default."""
    return example + (
        "\n// WolfeClick Arena: a no-security server must never listen beyond this machine.\n"
        f"exports.bindaddress = '{LOOPBACK}';\n"
        f"exports.port = {int(port)};\n"
        "exports.repl = false;\n"
        "exports.reportbattles = false;\n"
        "exports.logchat = false;\n"
    ) + ("exports.subprocesses = 0;\n" if lean else "")


def build_shadow(package: Path, target: Path, port: int, lean: bool = False) -> None:
    """Fill ``target`` with links to ``package`` plus private config/logs/databases folders."""
    for entry in package.iterdir():
        if entry.name not in PRIVATE:
            (target / entry.name).symlink_to(entry)
    (target / "node_modules").symlink_to(package.parent)  # the package's own dependencies, as npm hoisted them
    config = target / "config"
    shutil.copytree(package / "config", config, ignore=shutil.ignore_patterns("config.js", "chat-plugins"))
    (config / "chat-plugins").mkdir()
    (config / "config.js").write_text(config_text((package / "config" / "config-example.js").read_text(), port, lean))
    (target / "logs" / "repl").mkdir(parents=True)
    if (package / "databases").is_dir():
        shutil.copytree(package / "databases", target / "databases")


def _end_with_parent() -> None:
    """In the server's process, before exec (Linux): SIGTERM it when the Python process that started it dies, even
    by SIGKILL, so a killed test or benchmark leaves no server behind (its children follow it). Best effort."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class LocalServer:
    """``pokemon-showdown start --no-security`` on 127.0.0.1 and a free port, from a private shadow folder.

    Use as a context manager (``with LocalServer() as server: server.url``) or ``start()`` / ``stop()``.
    ``kill()`` ends it at once (the tests' "server died mid-battle"). Start it from a thread that outlives it: on
    Linux the server is told to end when the thread that started it ends (so a killed caller leaves none behind).
    """

    def __init__(self, port: int | None = None, package: Path = SHOWDOWN_DIR, start_timeout: float = 90.0,
                 lean: bool = False) -> None:
        self.port = port or free_port()
        self.lean = lean
        self.package = package
        self.start_timeout = start_timeout
        self.folder: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The websocket URL clients connect to."""
        return f"ws://{LOOPBACK}:{self.port}/showdown/websocket"

    @property
    def output(self) -> str:
        """What the server printed so far (its start-up lines, crashes)."""
        if self.folder is None or not (self.folder / "server.out").exists():
            return ""
        return (self.folder / "server.out").read_text(errors="replace")

    def start(self) -> "LocalServer":
        node = node_executable()
        self.folder = Path(tempfile.mkdtemp(prefix="wolfeclick-showdown-"))
        build_shadow(self.package, self.folder, self.port, self.lean)
        env = dict(os.environ)
        env["NODE_OPTIONS"] = (env.get("NODE_OPTIONS", "") + " --preserve-symlinks --preserve-symlinks-main").strip()
        with open(self.folder / "server.out", "wb") as out:
            self.proc = subprocess.Popen(
                [node, str(self.folder / "pokemon-showdown"), "start", "--no-security", "--skip-build", str(self.port)],
                cwd=self.folder, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,  # one process group: stop() ends the server's children with it
                preexec_fn=_end_with_parent,
            )
        session_group_follows_nice(self.proc.pid)  # a session of its own: its group gets the nice it inherited
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.output.strip().splitlines()[-1:] or ["no output"]
                self.stop()
                raise SimulatorError(f"the local Showdown server exited at start: {tail[0]}")
            if READY in self.output and self._greets(deadline):
                return self
            time.sleep(0.1)
        self.stop()
        raise SimulatorError(f"the local Showdown server did not start within {self.start_timeout:g} s")

    def _greets(self, deadline: float) -> bool:
        """Whether a websocket client gets the login challenge (``|challstr|``): the first connection makes the
        server load its formats and data, which can take seconds on a busy machine; afterwards clients are quick."""
        from websockets.sync.client import connect

        try:
            with connect(self.url, open_timeout=max(1.0, deadline - time.monotonic())) as client:
                while time.monotonic() < deadline:
                    if "|challstr|" in str(client.recv(timeout=max(0.1, deadline - time.monotonic()))):
                        return True
        except (OSError, TimeoutError, ValueError) as exc:  # not listening yet, or a handshake that timed out
            del exc
        except Exception as exc:  # websockets' own errors (InvalidHandshake, ConnectionClosed…)
            if not exc.__class__.__module__.startswith("websockets"):
                raise
        return False

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """End the server and its children at once (SIGKILL), as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def stop(self) -> None:
        """SIGTERM the server's process group (SIGKILL after 10 s) and remove its folder."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
            except ProcessLookupError:
                pass
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
