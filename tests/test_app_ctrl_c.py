"""The app's Ctrl-C (``wolfeclick.ui.app_process.CtrlC``) stops it wherever the main thread is when it comes.

Python runs a signal handler in the main thread between two of its bytecodes, wherever that thread is. The handler
used to set a ``threading.Event`` that the main thread was waiting on: a Ctrl-C landing while that thread held the
event's lock (inside ``Event.wait``, between its wake-ups) waited on that lock for ever, and the app served on (a
forked test app once let a Ctrl-C go unanswered for 60 s). Here the handler is run at every line the waiting
thread reaches in turn, in a child process (a hang is a failure, not a stuck suite)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.process  # a child Python: a hang fails the test instead of holding the suite

PROBE = r"""
import signal, sys
from wolfeclick.ui.app_process import CtrlC

for n in range(1, 41):  # the handler runs at the n-th line the waiting thread reaches, in its own code or below
    ctrl_c = CtrlC()
    ctrl_c.POLL_S = 0.001  # the same lines, sooner
    ctrl_c.quiet()
    lines = 0

    def tracer(frame, event, arg):
        global lines
        if event == "line":
            lines += 1
            if lines == n:
                ctrl_c._handle(signal.SIGINT, None)
        return tracer

    sys.settrace(tracer)
    try:
        ctrl_c.wait()
    finally:
        sys.settrace(None)
print("stopped every time", flush=True)
"""


def test_a_ctrl_c_at_any_line_of_the_wait_stops_the_app() -> None:
    try:
        done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as hung:
        raise AssertionError("a Ctrl-C handled inside the wait never ended it (the handler waits on a lock the "
                             "interrupted thread holds)") from hung
    assert done.returncode == 0 and "stopped every time" in done.stdout, done.stderr[-2000:]
