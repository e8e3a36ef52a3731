"""Shared by the benchmark scripts: each owns one ``## `` section of docs/benchmarks.md and rewrites only that."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(heading: str, text: str, path: Path = DOC) -> None:
    """Replace the section starting at ``heading`` (up to the next ``## `` heading), or append it."""
    current = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\nMeasured by `scripts/`.\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    body = text.rstrip("\n") + "\n\n"
    if pattern.search(current):
        updated = pattern.sub(lambda _: body, current, count=1)
    else:
        updated = current.rstrip("\n") + "\n\n" + body
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(updated.rstrip("\n") + "\n", encoding="utf-8")


SHARED_AT = 0.1
"""Other work (cores, on average) from which a run counts as made on a shared machine."""


def machine_busy() -> float:
    """CPU seconds every core has spent busy since boot (/proc/stat: all but idle and iowait)."""
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def other_work(busy0: float, own0: float, own_children: float, started: float) -> tuple[str, float]:
    """The load average now, and the other work during the run: the machine's busy CPU since ``busy0``
    (``machine_busy``) less this benchmark's own (this process since ``own0``, ``time.process_time``, and its
    children's ``own_children`` CPU seconds), in cores, over the wall time since ``started`` (``time.perf_counter``)."""
    own = time.process_time() - own0 + own_children
    other = max(0.0, (machine_busy() - busy0 - own) / (time.perf_counter() - started))
    return open("/proc/loadavg").read().split()[0], other


def other_work_note(load: tuple[str, str], other: float) -> str:
    """Whether other work shared the cores, from ``other``: the machine's busy CPU less the benchmark's own
    processes', per second of the run (the load average only guesses: it still holds whatever ran just before)."""
    seen = (f"Load average {load[0]} at the start and {load[1]} at the end; the machine's busy CPU less this "
            f"benchmark's own processes' was {other:.2f} of a core on average: ")
    if other < SHARED_AT:
        return seen + "nothing else was running"
    return seen + ("**the machine was shared** with other work, so wall-clock rates move by tens of percent "
                   "between runs")
