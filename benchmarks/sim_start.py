"""Simulator: a fresh process's CPU to the end of its first battle, with and without the compile cache.

Every simulator process compiles Pokémon Showdown's JavaScript before its first battle; ``wolfeclick/sim/
compile_cache.js`` keeps V8's compiled code on disk for the next process. For each format, ``--starts`` pairs of
fresh processes (in turn: one reading a cache an earlier process filled, one compiling everything, the order
swapped every pair) each play the same seeded heuristic-v-heuristic battle; measured is the Node process's own CPU
(user + system) from its spawn to the battle's end, and the wall time the same. Both kinds of process must play
byte-identical battles (checked).

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
HEADING = "## Simulator: a fresh process's first battle, with and without the compile cache"
SEED = 4242


async def _first_battle(fmt: str, cache: Path | None) -> tuple[float, float, str, dict[str, int]]:
    """One fresh simulator keeping its compiled code in ``cache`` (None: none): (its CPU seconds, wall seconds to
    the battle's end, the battle's log, hello's counts)."""
    began = time.perf_counter()
    process = SimProcess(compile_cache=cache)
    await process.start()
    try:
        recording = await play_battle(make_policy("heuristic"), make_policy("heuristic"), format_id=fmt, seed=SEED,
                                      process=process)
        wall = time.perf_counter() - began
        assert process.pid is not None
        times = psutil.Process(process.pid).cpu_times()
        counts = dict(process.info.get("compile_cache", {}))
    finally:
        await process.close()
    return times.user + times.system, wall, "\n".join(recording.log), counts


def measure(starts: int, formats: Sequence[str]) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:  # a cache of this run's own, filled by its first process
        cache = Path(folder)
        for fmt in formats:
            asyncio.run(_first_battle(fmt, cache))  # fills the cache (its own cost is not counted)
            runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
            logs, counts = set(), []
            for n in range(starts):
                for cached in ((True, False) if n % 2 == 0 else (False, True)):
                    cpu, wall, log, seen = asyncio.run(_first_battle(fmt, cache if cached else None))
                    runs[cached].append((cpu, wall))
                    logs.add(log)
                    if cached:
                        counts.append(seen)
            assert len(logs) == 1, "a cached and an uncached simulator played different battles"
            assert all(c.get("compiled") == 0 and c.get("read", 0) > 0 for c in counts), counts

            def spread(values: list[float]) -> dict[str, float]:
                return {"median": statistics.median(values), "min": min(values), "max": max(values)}

            rows.append({"format": fmt, "starts": starts,
                         "cached": {"cpu_s": spread([c for c, _ in runs[True]]),
                                    "wall_s": spread([w for _, w in runs[True]])},
                         "uncached": {"cpu_s": spread([c for c, _ in runs[False]]),
                                      "wall_s": spread([w for _, w in runs[False]])},
                         "modules_read": counts[0]["read"] if counts else 0})
        size = sum(f.stat().st_size for f in cache.rglob("*.bin"))
    return {"rows": rows, "cache_mb": size / 1e6, "identical": True}


def render(result: harness.Result) -> str:
    r = result.results
    lines = [HEADING, "",
             f"`{result.command}`: fresh simulator processes, each playing the same seeded heuristic-v-heuristic "
             f"battle (seed {SEED}); in turn one reading the compile cache an earlier process filled "
             f"({r['cache_mb']:.1f} MB on disk) and one compiling everything. CPU is the Node process's own from "
             "spawn to the battle's end; both kinds played byte-identical battles.", "",
             harness.describe(result), "",
             "| format | processes each | CPU, cache (median, min–max) | CPU, no cache | saved | wall, cache | "
             "wall, no cache |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for row in r["rows"]:
        c, u = row["cached"], row["uncached"]
        saved = 1 - c["cpu_s"]["median"] / u["cpu_s"]["median"]
        lines.append(
            f"| {row['format']} | {row['starts']} | {c['cpu_s']['median']:.2f} s ({c['cpu_s']['min']:.2f}–"
            f"{c['cpu_s']['max']:.2f}) | {u['cpu_s']['median']:.2f} s ({u['cpu_s']['min']:.2f}–{u['cpu_s']['max']:.2f})"
            f" | {saved:.0%} | {c['wall_s']['median']:.2f} s | {u['wall_s']['median']:.2f} s |")
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
