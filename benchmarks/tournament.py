"""Throughput of a baseline tournament against the bare battle runner.

Both sides play exactly the same battles (the tournament's schedule): the bare runner consumes
``battle.batch.run_jobs`` and throws the recordings away; the tournament adds everything it does on top —
result rows appended and fsynced, recordings saved (atomic write + fsync), SPRT/summary bookkeeping, the
final ``results.jsonl``/``summary.json`` with a 1000-round bootstrap. Runs alternate (bare, tournament,
bare, …) and the fastest of ``--repeats`` runs is reported: on a shared machine other load only ever slows a
run down, so the minimum is the steadiest estimate of the cost itself.

    .venv/bin/python -m benchmarks.tournament [--pairs 20] [--repeats 3] [--concurrency 1,2,4]
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from typing import Any, Callable, Iterator, Sequence

from benchmarks import harness
from wolfeclick.arena import tournament as _tournament
from wolfeclick.arena.schedule import TournamentConfig, build_schedule
from wolfeclick.arena.tournament import run_tournament
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import make_policy

NAME = "tournament"
HEADING = "## Tournaments"


# Every piece of work the tournament layer adds to a battle, wrapped to add up the CPU time of the thread
# running it (``_persist`` runs in a worker thread, the rest on the event loop).
_LAYER = ("_persist", "result_row", "summary_from_rows", "sprt_status", "canonical_rows", "write_atomic",
          "build_schedule", "_read_progress")
_layer_cpu = [0.0]


def _timed(function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            _layer_cpu[0] += time.thread_time() - started
    return wrapper


@contextlib.contextmanager
def _layer_timed() -> Iterator[None]:
    """The tournament layer's functions wrapped while measuring (put back after, so importing this changes nothing)."""
    saved = {name: getattr(_tournament, name) for name in _LAYER}
    for name, function in saved.items():
        setattr(_tournament, name, _timed(function))
    try:
        yield
    finally:
        for name, function in saved.items():
            setattr(_tournament, name, function)


async def bare(config: TournamentConfig, concurrency: int) -> tuple[float, float, float]:
    """(wall, CPU, 0) seconds for run_jobs to play the schedule, recordings discarded."""
    policies = {spec: make_policy(spec) for spec in config.players}
    jobs = [BattleJob(policies[b.p1], policies[b.p2], config.format, b.seed, config.max_turns, b.battle_id)
            for b in build_schedule(config)]
    wall, cpu = time.perf_counter(), harness.cpu_seconds()
    async for _ in run_jobs(jobs, concurrency=concurrency):
        pass
    return time.perf_counter() - wall, harness.cpu_seconds() - cpu, 0.0


async def tournament(config: TournamentConfig, concurrency: int,
                     keep_recordings: bool) -> tuple[float, float, float]:
    """(wall, CPU, CPU inside the tournament layer's own code) seconds for run_tournament from scratch."""
    policies = {spec: make_policy(spec) for spec in config.players}
    with tempfile.TemporaryDirectory() as out:
        wall, cpu, _layer_cpu[0] = time.perf_counter(), harness.cpu_seconds(), 0.0
        await run_tournament(config, out, concurrency=concurrency, keep_recordings=keep_recordings,
                             policies=policies)
        return time.perf_counter() - wall, harness.cpu_seconds() - cpu, _layer_cpu[0]


def measure(config: TournamentConfig, repeats: int, levels: list[int]) -> dict[str, Any]:
    """Per concurrency level, the rates and CPU per battle of the fastest of ``repeats`` runs of each side."""
    battles = len(build_schedule(config))
    rows = []
    for concurrency in levels:
        runs: dict[str, list[tuple[float, float, float]]] = {"bare": [], "keep": [], "none": []}
        for _ in range(repeats):
            runs["bare"].append(asyncio.run(bare(config, concurrency)))
            runs["keep"].append(asyncio.run(tournament(config, concurrency, True)))
            runs["none"].append(asyncio.run(tournament(config, concurrency, False)))
        best = {k: (min(r[0] for r in v), min(r[1] for r in v), min(r[2] for r in v)) for k, v in runs.items()}
        print(f"concurrency {concurrency}: " + "; ".join(
            f"{k} {battles / best[k][0]:.2f} battles/s, {1000 * best[k][1] / battles:.0f} CPU ms/battle, layer "
            f"{1000 * best[k][2] / battles:.1f} ms/battle (runs wall/cpu/layer: "
            f"{' '.join(f'{w:.1f}/{c:.1f}/{l:.2f}' for w, c, l in v)})" for k, v in runs.items()), flush=True)
        (w_b, c_b, _), (w_k, c_k, l_k), (w_n, _, _) = best["bare"], best["keep"], best["none"]
        rows.append({"concurrency": concurrency, "bare_per_s": battles / w_b, "tournament_per_s": battles / w_k,
                     "no_recordings_per_s": battles / w_n, "bare_cpu_ms": 1000 * c_b / battles,
                     "tournament_cpu_ms": 1000 * c_k / battles, "layer_cpu_ms": 1000 * l_k / battles,
                     "layer_cost": l_k / c_b})
    return {"battles": battles, "rows": rows}


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    lines = [
        HEADING,
        "",
        f"`{result.command}`: a round robin of {', '.join(p['players'])} ({p['format']}, "
        f"{p['pairs']} pairs per pairing = {r['battles']} battles, seed {p['seed']}), played by the bare runner "
        "(`battle.batch.run_jobs`, recordings discarded) and by the tournament layer (`arena.tournament."
        "run_tournament`: result rows appended and fsynced, recordings saved, summary with a 1000-round bootstrap). "
        f"Same battles on both sides, runs alternating, fastest of {p['repeats']} kept; policies built outside the "
        "timing.",
        "",
        harness.describe(result),
        "",
        "| concurrency | bare runner: battles/s | tournament: battles/s | no recordings: battles/s "
        "| bare CPU ms/battle | tournament CPU ms/battle | layer's own CPU ms/battle | layer cost |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in r["rows"]:
        lines.append(
            f"| {row['concurrency']} | {row['bare_per_s']:.2f} | {row['tournament_per_s']:.2f} "
            f"| {row['no_recordings_per_s']:.2f} | {row['bare_cpu_ms']:.0f} | {row['tournament_cpu_ms']:.0f} "
            f"| {row['layer_cpu_ms']:.1f} | {100 * row['layer_cost']:.1f}% |"
        )
    lines += [
        "",
        "CPU is user + system time of the Python process and the simulator processes. The *layer's own CPU* is the "
        "CPU time spent inside the tournament layer's code — building result rows, saving recordings and appending "
        "rows (in a worker thread, so battles in flight never wait on the disk), the SPRT check, and the final "
        "summary with its bootstrap — measured per thread; *layer cost* is that over the bare runner's CPU. It is "
        "the robust figure: the wall-clock and whole-process columns move by tens of percent from run to run on a "
        "shared machine, in both directions.",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20, help="pairs per pairing (default 20: 120 battles)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the fastest is kept")
    parser.add_argument("--concurrency", default="1,2,4", help="comma-separated concurrency levels")
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    players = ("random", "maxdamage", "heuristic")
    config = TournamentConfig(players=players, pairs=args.pairs, format=args.format, seed=args.seed)
    levels = [int(c) for c in args.concurrency.split(",")]
    with harness.measure() as run, _layer_timed():
        results = measure(config, args.repeats, levels)
    params = {"players": list(players), "pairs": args.pairs, "repeats": args.repeats, "concurrency": levels,
              "format": args.format, "seed": args.seed}
    harness.finish(NAME, argv, params, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
