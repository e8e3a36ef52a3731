"""Shared by the benchmark scripts that drive the real app: start ``app.py`` on a free 127.0.0.1 port and stop it,
read a process's RSS, and a percentile. (Scripts never import the tests; the tests keep their own server.)"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@contextlib.contextmanager
def running_app(root: Path, env: dict[str, str] | None = None, start_s: float = 120) -> Iterator[tuple[str, int]]:
    """``app.py`` serving ``root/recordings`` and ``root/results`` on 127.0.0.1 only; yields (url, pid). Its output
    goes to ``root/server.log``; it is stopped (SIGINT, then SIGKILL) on the way out."""
    import httpx

    port = free_port()
    full = {**os.environ, "WOLFECLICK_RECORDINGS": str(root / "recordings"), "WOLFECLICK_RESULTS": str(root / "results"),
            "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False",
            **(env or {})}
    log = open(root / "server.log", "wb")
    server = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=full, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + start_s
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise SystemExit(f"app.py exited: {(root / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(url + "config", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            raise SystemExit(f"app.py did not start within {start_s:.0f} s")
        yield url, server.pid
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGINT)
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
        log.close()
