"""Simulator: a fresh process's CPU to the end of its first battle: from the startup snapshot, with the compile cache,
with neither.

Every simulator process loads Pokémon Showdown's JavaScript and the format's data before its first battle. Two
things cut that: ``wolfeclick/sim/compile_cache.js`` keeps V8's compiled code on disk for the next process, and
``wolfeclick/sim/snapshot.js`` starts the process from a V8 startup snapshot with Showdown and the random formats'
data already loaded (the default). For each format, ``--starts`` rounds of three fresh processes (one of each kind,
the order turned every round) each play the same seeded heuristic-v-heuristic battle; measured is the Node
process's own CPU (user + system) from its spawn to the battle's end, and the wall time the same. Every process
must play the byte-identical battle (checked).

    .venv/bin/python -m benchmarks.sim_start [--starts 10] [--formats gen9randombattle gen4randombattle]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import psutil

from benchmarks import harness
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.sim.process import SimProcess

NAME = "sim_start"
HEADING = "## Simulator: a fresh process's first battle: snapshot, compile cache, neither"
SEED = 4242
KINDS = ("snapshot", "cache", "none")
"""From the startup snapshot; a plain start reading the compile cache; a plain start compiling everything."""


async def _first_battle(fmt: str, kind: str, cache: Path) -> tuple[float, float, str, dict[str, Any]]:
    """One fresh simulator of ``kind``: (its CPU seconds, wall seconds to the battle's end, the battle's log,
    hello's reply)."""
    began = time.perf_counter()
    process = SimProcess(compile_cache=cache if kind == "cache" else None, snapshot=kind == "snapshot")
    await process.start()
    try:
        recording = await play_battle(make_policy("heuristic"), make_policy("heuristic"), format_id=fmt, seed=SEED,
                                      process=process)
        wall = time.perf_counter() - began
        assert process.pid is not None
        times = psutil.Process(process.pid).cpu_times()
        info = dict(process.info)
    finally:
        await process.close()
    return times.user + times.system, wall, "\n".join(recording.log), info


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(starts: int, formats: Sequence[str]) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:  # a compile cache of this run's own, filled by its first process
        cache = Path(folder)
        for fmt in formats:
            for kind in ("cache", "snapshot"):  # fills the cache, builds the snapshot (not counted)
                asyncio.run(_first_battle(fmt, kind, cache))
            runs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
            logs, infos = set(), []
            for n in range(starts):
                for kind in KINDS[n % 3:] + KINDS[:n % 3]:
                    cpu, wall, log, info = asyncio.run(_first_battle(fmt, kind, cache))
                    runs[kind].append((cpu, wall))
                    logs.add(log)
                    infos.append((kind, info))
            assert len(logs) == 1, "simulators started differently played different battles"
            for kind, info in infos:
                assert info.get("start") == ("snapshot" if kind == "snapshot" else "plain"), (kind, info)
                counts = info.get("compile_cache", {})
                if kind == "cache":
                    assert counts.get("compiled") == 0 and counts.get("read", 0) > 0, counts
            read = [info.get("compile_cache", {}).get("read", 0) for kind, info in infos if kind == "cache"]
            rows.append({"format": fmt, "starts": starts, "modules_read": read[0] if read else 0,
                         "kinds": {kind: {"cpu_s": _spread([c for c, _ in runs[kind]]),
                                          "wall_s": _spread([w for _, w in runs[kind]])} for kind in KINDS}})
        size = sum(f.stat().st_size for f in cache.rglob("*.bin"))
    return {"rows": rows, "cache_mb": size / 1e6, "identical": True}


def _kinds(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A row's measurements by kind; results from before the snapshot (2026-12-07) had the two plain kinds only."""
    if "kinds" in row:
        return dict(row["kinds"])
    return {"cache": row["cached"], "none": row["uncached"]}


def render(result: harness.Result) -> str:
    r = result.results
    lines = [HEADING, "",
             f"`{result.command}`: fresh simulator processes, each playing the same seeded heuristic-v-heuristic "
             f"battle (seed {SEED}), in turn: one started from the startup snapshot (`wolfeclick/sim/snapshot.js`), "
             f"one started plainly reading the compile cache an earlier process filled ({r['cache_mb']:.1f} MB on "
             "disk), one compiling everything. CPU is the Node process's own from spawn to the battle's end; every "
             "process played the byte-identical battle.", "",
             harness.describe(result), "",
             "| format | processes each | kind | CPU (median, min–max) | less than neither | wall (median) |",
             "|---|---:|---|---:|---:|---:|"]
    names = {"snapshot": "snapshot", "cache": "compile cache", "none": "neither"}
    for row in r["rows"]:
        kinds = _kinds(row)
        base = kinds["none"]["cpu_s"]["median"]
        for kind in KINDS:
            if kind not in kinds:
                continue
            c = kinds[kind]
            lines.append(
                f"| {row['format']} | {row['starts']} | {names[kind]} | {c['cpu_s']['median']:.2f} s "
                f"({c['cpu_s']['min']:.2f}–{c['cpu_s']['max']:.2f}) | {1 - c['cpu_s']['median'] / base:.0%} | "
                f"{c['wall_s']['median']:.2f} s |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=10, help="pairs of fresh processes per format")
    parser.add_argument("--formats", nargs="+", default=["gen9randombattle", "gen4randombattle"])
    args = parser.parse_args(argv)
    with harness.measure() as run:
        results = measure(args.starts, args.formats)
    harness.finish(NAME, argv, {"starts": args.starts, "formats": args.formats}, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
