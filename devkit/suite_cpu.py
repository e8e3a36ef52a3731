"""Where the test suite's CPU goes: a pytest plugin that charges each test the CPU its worker's process tree used while
it ran, and a summary by tier, file and test.

    .venv/bin/python -m pytest -n 2 --dist loadfile -p devkit.suite_cpu     # writes $WOLFECLICK_SUITE_CPU (a folder)
    .venv/bin/python -m devkit.suite_cpu FOLDER                               # the summary

Wall seconds (pytest's ``--durations``, the test-seconds cache) stretch with the load and with the other worker;
CPU seconds do not, so they say what a test costs and what the suite's floor is on a machine (its CPU over its
cores). A test is charged what its process and every descendant used between its start and its end, the reaped ones
included (a child's time moves into its parent's when it is reaped): the simulators, apps and Chromiums it starts,
and its share of a module fixture's. Not counted: processes that leave the tree (Ray's daemons re-parent
themselves), so Ray tests read low.
"""

from __future__ import annotations

import collections
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TIERS = ("browser", "app", "ray", "torch", "packaging", "battles", "process", "fast")
"""Every tier, in the order a test in several is counted in (the first it has)."""
_TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system, with reaped children's) of ``root`` and every live descendant."""
    stats: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        stats[int(entry.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0))[1]
        todo.extend(children.get(pid, []))
    return total / _TICKS


def _folder() -> Path:
    return Path(os.environ.get("WOLFECLICK_SUITE_CPU", "/tmp/wolfeclick-suite-cpu"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Runs where the test runs (a worker, or the only process), never in xdist's controller."""
    before, started, began = tree_cpu(os.getpid()), time.monotonic(), time.time()
    yield
    spent, wall = tree_cpu(os.getpid()) - before, time.monotonic() - started
    tiers = [tier for tier in TIERS if item.get_closest_marker(tier) is not None] or ["fast"]
    folder = _folder()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{os.getpid()}.tsv", "a", encoding="utf-8") as out:
        out.write(f"{item.nodeid}\t{spent:.2f}\t{','.join(tiers)}\t{wall:.2f}\t{began:.2f}\n")


def summary(folder: Path, top: int = 20) -> str:
    """CPU by tier (a test in several tiers counts in its heaviest-sounding one: the first of browser, app, ray,
    torch, packaging, battles, process), by file and the costliest tests."""
    by_tier: dict[str, float] = collections.defaultdict(float)
    by_file: dict[str, float] = collections.defaultdict(float)
    tests: list[tuple[float, str]] = []
    idle: list[tuple[float, str]] = []
    for path in sorted(folder.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, spent, tiers, *rest = line.split("\t")  # rest: the wall seconds, the start (epoch seconds)
            cpu = max(0.0, float(spent))
            if rest:  # the wall seconds, written since the waits were looked for
                idle.append((float(rest[0]) - cpu, nodeid))
            tier = next(t for t in TIERS if t in tiers.split(","))
            by_tier[tier] += cpu
            by_file[nodeid.split("::")[0]] += cpu
            tests.append((cpu, nodeid))
    total = sum(by_tier.values())
    lines = [f"{len(tests)} tests, {total:.0f} CPU s (floor on 2 cores: {total / 2:.0f} s of wall)", "", "by tier:"]
    lines += [f"  {cpu:7.1f}  {cpu / total:5.1%}  {tier}" for tier, cpu in sorted(by_tier.items(), key=lambda kv: -kv[1])]
    lines += ["", "by file:"] + [f"  {cpu:7.1f}  {name}" for name, cpu in sorted(by_file.items(), key=lambda kv: -kv[1])[:top]]
    lines += ["", "tests:"] + [f"  {cpu:7.1f}  {name}" for cpu, name in sorted(tests, reverse=True)[:top]]
    if idle:  # wall seconds the test's processes spent not on a core: waits, sleeps, timeouts (or a busy machine)
        lines += ["", f"waiting (wall minus CPU; {sum(w for w, _ in idle if w > 0):.0f} s in all):"]
        lines += [f"  {wait:7.1f}  {name}" for wait, name in sorted(idle, reverse=True)[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else _folder()))
