"""``wolfeclick setup`` while another process installs the simulator says that it waits, and for whom, instead of
staying silent for the minutes the other install takes (issue 65, item 13)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from wolfeclick.sim.install import install_dir

HOLD = """
import fcntl, os, sys
lock = open(sys.argv[1], "a+")
fcntl.flock(lock, fcntl.LOCK_EX)
lock.seek(0); lock.truncate(); lock.write(str(os.getpid())); lock.flush()
print("held", flush=True)
sys.stdin.read()  # until the test closes it
"""


def test_setup_says_it_waits_for_another_install_by_its_pid(tmp_path: Path, monkeypatch) -> None:
    env = {**os.environ, "WOLFECLICK_CACHE": str(tmp_path / "cache")}
    env.pop("WOLFECLICK_SHOWDOWN", None)
    monkeypatch.setenv("WOLFECLICK_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WOLFECLICK_SHOWDOWN", raising=False)
    final = install_dir()
    final.parent.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(final.parent / f"{final.name}.lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    waiter = None
    try:
        assert holder.stdout.readline().strip() == "held"
        waiter = subprocess.Popen([sys.executable, "-m", "wolfeclick", "setup"], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 60  # a hang guard only: the line comes before the waiter blocks
        line = ""
        while "Waiting" not in line and time.monotonic() < deadline:
            ready, _, _ = select.select([waiter.stderr], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break  # silent while it waits: what the issue found
            line = waiter.stderr.readline()
            if not line:
                break
        assert line.strip() == f"Waiting for another install of the simulator (pid {holder.pid}) to finish…", line
        assert waiter.poll() is None  # and it does wait
    finally:
        if waiter is not None and waiter.poll() is None:
            os.killpg(waiter.pid, 9)
            waiter.wait(10)
        holder.stdin.close()
        holder.wait(10)
