"""Throughput of a baseline tournament against the bare battle runner, written to docs/benchmarks.md.

Both sides play exactly the same battles (the tournament's schedule): the bare runner consumes
``battle.batch.run_jobs`` and throws the recordings away; the tournament adds everything it does on top —
result rows appended and fsynced, recordings saved (atomic write + fsync), SPRT/summary bookkeeping, the
final ``results.jsonl``/``summary.json`` with a 1000-round bootstrap. Runs alternate (bare, tournament,
bare, …) and the fastest of ``--repeats`` runs is reported: on a shared machine other load only ever slows a
run down, so the minimum is the steadiest estimate of the cost itself.

    .venv/bin/python scripts/bench_tournament.py [--pairs 20] [--repeats 3] [--concurrency 1,2,4] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout first: its devkit/, scripts/ and wolfeclick/
from scripts.benchdoc import DOC, write_section  # noqa: E402
from wolfeclick.arena import tournament as _tournament  # noqa: E402
from wolfeclick.arena.schedule import TournamentConfig, build_schedule  # noqa: E402
from wolfeclick.arena.tournament import run_tournament  # noqa: E402
from wolfeclick.battle.batch import BattleJob, run_jobs  # noqa: E402
from wolfeclick.battle.specs import make_policy  # noqa: E402

HEADING = "## Tournaments"


def _cpu() -> float:
    """CPU seconds used so far by this process and its reaped children (the simulator processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# Every piece of work the tournament layer adds to a battle, wrapped to add up the CPU time of the thread
# running it (``_persist`` runs in a worker thread, the rest on the event loop).
_LAYER = ("_persist", "result_row", "summary_from_rows", "sprt_status", "canonical_rows", "write_atomic",
          "build_schedule", "_read_progress")
_layer_cpu = [0.0]


def _timed(function):  # type: ignore[no-untyped-def]
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            _layer_cpu[0] += time.thread_time() - started
    return wrapper


for _name in _LAYER:
    setattr(_tournament, _name, _timed(getattr(_tournament, _name)))


async def bare(config: TournamentConfig, concurrency: int) -> tuple[float, float, float]:
    """(wall, CPU, 0) seconds for run_jobs to play the schedule, recordings discarded."""
    policies = {spec: make_policy(spec) for spec in config.players}
    jobs = [BattleJob(policies[b.p1], policies[b.p2], config.format, b.seed, config.max_turns, b.battle_id)
            for b in build_schedule(config)]
    wall, cpu = time.perf_counter(), _cpu()
    async for _ in run_jobs(jobs, concurrency=concurrency):
        pass
    return time.perf_counter() - wall, _cpu() - cpu, 0.0


async def tournament(config: TournamentConfig, concurrency: int,
                     keep_recordings: bool) -> tuple[float, float, float]:
    """(wall, CPU, CPU inside the tournament layer's own code) seconds for run_tournament from scratch."""
    policies = {spec: make_policy(spec) for spec in config.players}
    with tempfile.TemporaryDirectory() as out:
        wall, cpu, _layer_cpu[0] = time.perf_counter(), _cpu(), 0.0
        await run_tournament(config, out, concurrency=concurrency, keep_recordings=keep_recordings,
                             policies=policies)
        return time.perf_counter() - wall, _cpu() - cpu, _layer_cpu[0]


def section(config: TournamentConfig, battles: int, repeats: int,
            table: list[tuple[int, dict[str, tuple[float, float, float]]]], load: tuple[float, ...]) -> str:
    lines = [
        HEADING,
        "",
        f"`scripts/bench_tournament.py`: a round robin of {', '.join(config.players)} ({config.format}, "
        f"{config.pairs} pairs per pairing = {battles} battles, seed {config.seed}), played by the bare runner "
        "(`battle.batch.run_jobs`, recordings discarded) and by the tournament layer (`arena.tournament."
        "run_tournament`: result rows appended and fsynced, recordings saved, summary with a 1000-round bootstrap). "
        f"Same battles on both sides, runs alternating, fastest of {repeats} kept; policies built outside the "
        "timing.",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}, {platform.system()}; measured {datetime.date.today().isoformat()}, load "
        f"average {load[0]:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (other work on the machine).",
        "",
        "| concurrency | bare runner: battles/s | tournament: battles/s | no recordings: battles/s "
        "| bare CPU ms/battle | tournament CPU ms/battle | layer's own CPU ms/battle | layer cost |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for concurrency, best in table:
        (w_b, c_b, _), (w_k, c_k, l_k), (w_n, _, _) = best["bare"], best["keep"], best["none"]
        lines.append(
            f"| {concurrency} | {battles / w_b:.2f} | {battles / w_k:.2f} | {battles / w_n:.2f} "
            f"| {1000 * c_b / battles:.0f} | {1000 * c_k / battles:.0f} | {1000 * l_k / battles:.1f} "
            f"| {100 * l_k / c_b:.1f}% |"
        )
    lines += [
        "",
        "CPU is user + system time of the Python process and the simulator processes. The *layer's own CPU* is the "
        "CPU time spent inside the tournament layer's code — building result rows, saving recordings and appending "
        "rows (in a worker thread, so battles in flight never wait on the disk), the SPRT check, and the final "
        "summary with its bootstrap — measured per thread; *layer cost* is that over the bare runner's CPU. It is "
        "the robust figure: the wall-clock and whole-process columns move by tens of percent from run to run on a "
        "shared machine, in both directions.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20, help="pairs per pairing (default 20: 120 battles)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the fastest is kept")
    parser.add_argument("--concurrency", default="1,2,4", help="comma-separated concurrency levels")
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print the section instead of writing the doc")
    args = parser.parse_args()
    config = TournamentConfig(players=("random", "maxdamage", "heuristic"), pairs=args.pairs, format=args.format,
                              seed=args.seed)
    battles = len(build_schedule(config))
    load = os.getloadavg()
    table = []
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        runs: dict[str, list[tuple[float, float, float]]] = {"bare": [], "keep": [], "none": []}
        for _ in range(args.repeats):
            runs["bare"].append(asyncio.run(bare(config, concurrency)))
            runs["keep"].append(asyncio.run(tournament(config, concurrency, True)))
            runs["none"].append(asyncio.run(tournament(config, concurrency, False)))
        best = {k: (min(r[0] for r in v), min(r[1] for r in v), min(r[2] for r in v)) for k, v in runs.items()}
        print(f"concurrency {concurrency}: " + "; ".join(
            f"{k} {battles / best[k][0]:.2f} battles/s, {1000 * best[k][1] / battles:.0f} CPU ms/battle, layer "
            f"{1000 * best[k][2] / battles:.1f} ms/battle (runs wall/cpu/layer: "
            f"{' '.join(f'{w:.1f}/{c:.1f}/{l:.2f}' for w, c, l in v)})" for k, v in runs.items()), flush=True)
        table.append((concurrency, best))
    text = section(config, battles, args.repeats, table, load)
    if args.no_write:
        print(text)
    else:
        write_section(HEADING, text)
        print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
