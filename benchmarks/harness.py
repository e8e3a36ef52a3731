"""What every benchmark shares: one machine description, one percentile, one JSON result per run, one renderer.

A benchmark is a module in this package run as ``python -m benchmarks.NAME [options]`` from the checkout (no
``sys.path`` edits: ``-m`` puts the checkout first, and pytest's ``pythonpath`` does the same for the tests). It
measures inside ``measure()``, which takes the load average at the start and the end, the wall time, this process's
and its children's CPU time (user + system: the figure other work moves least) and the other work on the machine
meanwhile (its busy CPU less ours, in cores); ``save`` writes one JSON file a run under ``benchmarks/results/``
(``NAME-YYYYMMDDTHHMMSSZ.json``: the command, the machine, the run, the parameters and the results). The module's
``render(result)`` turns a result into its ``## `` section of docs/benchmarks.md, and ``python -m benchmarks``
rewrites every migrated benchmark's section from its newest result (``--check``: exit 1 if the page differs). A
benchmark run in pieces (``POOLED = True``: ``benchmarks.search``) renders all its runs together instead
(``render_pool``), each still its own result file.

Every benchmark lives here now. The scripts that are not benchmarks but write a section of the page themselves
(``scripts/train_value_model.py``, ``eval_value_model.py``, ``check_yardstick_scale.py``) do it through
``scripts/benchdoc.py``, which takes ``write_section`` and the other-work figures from here.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import platform
import re
import resource
import shlex
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]
"""The checkout."""
DOC = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "benchmarks" / "results"
BENCHMARKS = ("tournament", "leaderboard", "rescore", "sim_policies", "value_model", "recording_size", "ladder", "simulator",
              "analysis_full", "analysis", "racing_live", "racing", "env", "env_server_memory",
              "llm", "ray_tournament", "import_logs", "search", "calibration", "calibration_policies", "calibration_model",
              "battles", "battles_alternate", "battles_profile", "battles_python", "upload_load", "visitors",
              "public_load", "app", "app_start", "app_viewer", "public_views", "sim_start")
"""The benchmarks in this package (``benchmarks/NAME.py``), in the order their sections were first written."""
SCHEMA = "wolfeclick.benchmark/1"
SHARED_AT = 0.1
"""Other work (cores, on average) from which a run counts as made on a shared machine."""


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile: the smallest value that at least ``share`` of the values are at or below
    (``sorted(values)[ceil(share * n) - 1]``; no interpolation, so it is always a value that was measured). "p95" in
    docs/benchmarks.md means this from here on. Until 2026-12-06 two definitions were in use: devkit's
    ``sorted[min(n - 1, floor(share * n))]`` (the same value unless ``share * n`` is a whole number, where it took
    the next value up) and scripts/bench_app.py's ``sorted[floor(share * (n - 1))]`` (at or below this one)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= share <= 1:
        raise ValueError(f"share must be in [0, 1], not {share}")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered) - 1e-9) - 1)]


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or the architecture where that is not readable."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """The one machine description every result carries."""
    return {"cores": os.cpu_count(), "cpu": cpu_model(), "arch": platform.machine(),
            "system": platform.system(), "python": platform.python_version()}


def machine_busy() -> float:
    """CPU seconds every core has spent busy since boot (/proc/stat: all but idle and iowait)."""
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its reaped children (simulators, once they have ended)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


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


@dataclass
class Run:
    """One run's conditions, filled by ``measure``."""

    started: str = ""
    """UTC, ISO 8601 to the second."""
    load_start: float | None = None
    """The 1-minute load average (None: not recorded)."""
    load_end: float | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    """This process's and its reaped children's user + system CPU seconds."""
    other_cores: float | None = None
    """The machine's busy CPU less ours over the run, in cores on average (None: not measured)."""
    note: str = ""
    """Conditions in words where they were not measured (a result carried over from a run before the harness)."""


@contextlib.contextmanager
def measure() -> Iterator[Run]:
    run = Run(started=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              load_start=os.getloadavg()[0])
    busy0, cpu0, wall0 = machine_busy(), cpu_seconds(), time.perf_counter()
    try:
        yield run
    finally:
        run.wall_s = time.perf_counter() - wall0
        run.cpu_s = cpu_seconds() - cpu0
        run.other_cores = max(0.0, (machine_busy() - busy0 - run.cpu_s) / max(run.wall_s, 1e-9))
        run.load_end = os.getloadavg()[0]


@dataclass
class Result:
    benchmark: str
    command: str
    params: dict[str, Any]
    results: dict[str, Any]
    run: Run
    machine: dict[str, Any] = field(default_factory=machine)
    schema: str = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        if data.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} result: schema {data.get('schema')!r}")
        return cls(benchmark=data["benchmark"], command=data["command"], params=data["params"],
                   results=data["results"], run=Run(**data["run"]), machine=data["machine"])


def command_line(name: str, argv: Sequence[str]) -> str:
    """How the run was started, as one would type it in the checkout."""
    return shlex.join([".venv/bin/python", "-m", f"benchmarks.{name}", *argv])


def save(result: Result, results_dir: Path = RESULTS) -> Path:
    """Write one run's JSON file (never replacing another run's)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    stamp = result.run.started.replace("-", "").replace(":", "")
    path = results_dir / f"{result.benchmark}-{stamp}.json"
    n = 2
    while path.exists():
        path = results_dir / f"{result.benchmark}-{stamp}-{n}.json"
        n += 1
    path.write_text(json.dumps(result.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _files(name: str, results_dir: Path) -> list[Path]:
    """Benchmark ``name``'s result files, oldest first (by the start time in their names)."""
    return sorted(results_dir.glob(f"{name}-*.json"),
                  key=lambda p: (p.stem[len(name) + 1:].split("-")[0], len(p.stem), p.stem))


def latest(name: str, results_dir: Path = RESULTS) -> Result | None:
    """The newest result of benchmark ``name`` (by the start time in its file name), or None."""
    found = _files(name, results_dir)
    if not found:
        return None
    return Result.from_dict(json.loads(found[-1].read_text(encoding="utf-8")))


def pooled(name: str, result: Result, results_dir: Path = RESULTS) -> list[Result]:
    """Every result of ``name`` in ``results_dir`` up to ``result``, oldest first, ``result`` last: what a benchmark
    that pools its runs (one made in pieces) renders its section from."""
    earlier = [Result.from_dict(json.loads(path.read_text(encoding="utf-8"))) for path in _files(name, results_dir)]
    earlier = [r for r in earlier if r.run.started <= result.run.started and r.to_dict() != result.to_dict()]
    return [*earlier, result]


def describe(result: Result) -> str:
    """The machine and the run in one paragraph, the same wording for every benchmark."""
    m, run = result.machine, result.run
    what = [f"{m['cores']} cores" + (f" ({m['cpu']})" if m.get("cpu") else ""), m.get("arch"),
            m.get("python") and f"Python {m['python']}", m.get("system")]
    loads = [f"{load:.1f} at the {when}" for load, when in ((run.load_start, "start"), (run.load_end, "end"))
             if load is not None]
    text = (f"Machine: {', '.join(w for w in what if w)}; measured {run.started[:10]}"
            + (f", load average {' and '.join(loads)}" if loads else ""))
    if run.other_cores is not None:
        shared = ("**the machine was shared** with other work, so wall-clock rates move by tens of percent between runs"
                  if run.other_cores >= SHARED_AT else "nothing else was running")
        text += (f"; the machine's busy CPU less this benchmark's own processes' was {run.other_cores:.2f} of a core "
                 f"on average: {shared}")
    if run.note:
        text += f" ({run.note})"
    if run.wall_s:
        text += f"; {run.wall_s:.0f} s in all, {run.cpu_s:.0f} CPU s of this process and its children"
    return text + "."


def write_section(heading: str, text: str, path: Path = DOC) -> None:
    """Replace the section starting at ``heading`` (up to the next ``## `` heading), or append it."""
    current = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\nMeasured by `scripts/`.\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(replace_section(current, heading, text), encoding="utf-8")


def replace_section(current: str, heading: str, text: str) -> str:
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    body = text.rstrip("\n") + "\n\n"
    if pattern.search(current):
        updated = pattern.sub(lambda _: body, current, count=1)
    else:
        updated = current.rstrip("\n") + "\n\n" + body
    return updated.rstrip("\n") + "\n"


def render(name: str, result: Result, results_dir: Path = RESULTS) -> tuple[str, str]:
    """(heading, section text) of benchmark ``name`` for ``result``. A module with ``POOLED = True`` (a benchmark
    run in pieces) renders every run up to ``result`` in ``results_dir`` together (``pooled``)."""
    import importlib

    module = importlib.import_module(f"benchmarks.{name}")
    if getattr(module, "POOLED", False):
        return module.HEADING, module.render_pool(pooled(name, result, results_dir))
    return module.HEADING, module.render(result)


def render_doc(current: str, results_dir: Path = RESULTS, names: Sequence[str] = BENCHMARKS) -> str:
    """``current`` (docs/benchmarks.md's text) with every benchmark's section rendered from its newest result."""
    for name in names:
        result = latest(name, results_dir)
        if result is not None:
            heading, text = render(name, result, results_dir)
            current = replace_section(current, heading, text)
    return current


def parser(description: str) -> argparse.ArgumentParser:
    """A benchmark's argument parser, with the options every benchmark takes."""
    out = argparse.ArgumentParser(description=description)
    out.add_argument("--results", type=Path, default=RESULTS, help="the folder its JSON result goes to")
    return out


def finish(name: str, argv: Sequence[str], params: dict[str, Any], results: dict[str, Any], run: Run,
           results_dir: Path) -> Path:
    """Save a run's result and print where, with the section it renders to."""
    result = Result(benchmark=name, command=command_line(name, argv), params=params, results=results, run=run)
    path = save(result, results_dir)
    print(render(name, result, results_dir)[1])
    print(f"wrote {path}; `.venv/bin/python -m benchmarks` puts it into docs/benchmarks.md", file=sys.stderr)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks [--check]``: docs/benchmarks.md's sections from the newest results."""
    args = argparse.ArgumentParser(description="Render docs/benchmarks.md's sections from benchmarks/results/.")
    args.add_argument("--check", action="store_true", help="exit 1 if the page is not what the results render")
    args.add_argument("--doc", type=Path, default=DOC)
    args.add_argument("--results", type=Path, default=RESULTS)
    parsed = args.parse_args(argv)
    current = parsed.doc.read_text(encoding="utf-8")
    updated = render_doc(current, parsed.results)
    if parsed.check:
        if updated != current:
            print(f"{parsed.doc} differs from what {parsed.results} renders: run `.venv/bin/python -m benchmarks`")
            return 1
        return 0
    if updated != current:
        parsed.doc.write_text(updated, encoding="utf-8")
        print(f"rewrote {parsed.doc}")
    return 0
