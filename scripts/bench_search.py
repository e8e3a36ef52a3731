"""How strong is ``search`` at each level, and what does a decision cost? (issue 61)

    .venv/bin/python scripts/bench_search.py [--pairs 4] [--formats gen9randombattle gen4randombattle]
        [--levels 1 2 3] [--doc]

For each format: ``search?level=L`` against ``heuristic`` for every level, and each level against the level below,
in paired battles (each seed played twice, the seats swapped). One battle at a time, so a decision's time is its
own: the search's simulator and the battle's share the machine with nothing of this script's. Reports each
pairing's score rate with its 95% Wilson interval, and the search's time per decision (mean, median, 90th
percentile, over the decisions where it had more than one option). ``--doc`` writes the section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.benchdoc import machine_busy, other_work, other_work_note, write_section  # noqa: E402
from wolfeclick.arena.stats import wilson_interval  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.battle.schema import Recording  # noqa: E402
from wolfeclick.battle.specs import make_policy  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

HEADING = "## Search: strength per level against heuristic and against the level below (issue 61)"
FORMATS = ("gen9randombattle", "gen4randombattle")
SEED_BASE = 610_000
"""Seeds the ladder is not built from (its own start elsewhere)."""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def searched_ms(recording: Recording, side: str) -> list[float]:
    """The latency of each decision of ``side`` where the search had more than one option."""
    return [t.decisions[side].latency_ms for t in recording.turns
            if side in t.decisions and isinstance((t.decisions[side].policy_info or {}).get("search"), dict)]


async def pairing(pool: SimPool, fmt: str, a: str, b: str, pairs: int, times: dict[str, list[float]]) -> list[float]:
    """``a``'s score in each of ``2 * pairs`` battles against ``b``, seeds shared by each pair, seats swapped."""
    scores = []
    for n in range(pairs):
        for seat in ("p1", "p2"):
            policies = (make_policy(a), make_policy(b)) if seat == "p1" else (make_policy(b), make_policy(a))
            recording = await play_battle(*policies, format_id=fmt, seed=SEED_BASE + n, process=pool.pick())
            winner = recording.result.winner
            scores.append(1.0 if winner == seat else 0.5 if winner is None else 0.0)
            print(f"  {fmt} seed {SEED_BASE + n} {a} as {seat} v {b}: {scores[-1]}", file=sys.stderr, flush=True)
            for side, spec in zip(("p1", "p2"), (recording.players["p1"].policy, recording.players["p2"].policy)):
                times.setdefault(spec, []).extend(searched_ms(recording, side))
    return scores


def score_cell(scores: list[float]) -> str:
    low, high = wilson_interval(sum(scores), len(scores))
    return f"{sum(scores) / len(scores):.2f} [{low:.2f}, {high:.2f}]"


def time_cell(ms: list[float]) -> str:
    if not ms:
        return "–"
    ordered = sorted(ms)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"{statistics.mean(ms) / 1000:.2f} / {statistics.median(ms) / 1000:.2f} / {p90 / 1000:.2f} s ({len(ms)})"


async def run(formats: list[str], levels: list[int], pairs: int) -> str:
    load = open("/proc/loadavg").read().split()[0]
    busy0, own0, children0, started = machine_busy(), time.process_time(), children_cpu(), time.perf_counter()
    rows = ["| format | pairing (first scores) | battles | score rate [95%] | wall |", "| --- | --- | --- | --- | --- |"]
    times: dict[tuple[str, str], list[float]] = {}
    async with SimPool(1) as pool:
        for fmt in formats:
            per_format: dict[str, list[float]] = {}
            plan = [(f"search?level={level}", "heuristic") for level in levels]
            plan += [(f"search?level={level}", f"search?level={level - 1}") for level in levels if level - 1 in levels]
            for a, b in plan:
                begun = time.perf_counter()
                scores = await pairing(pool, fmt, a, b, pairs, per_format)
                rows.append(f"| {fmt} | {a} v {b} | {len(scores)} | {score_cell(scores)} | "
                            f"{time.perf_counter() - begun:.0f} s |")
                print(rows[-1], flush=True)
            for spec, ms in per_format.items():
                times[(fmt, spec)] = ms
    time_rows = ["| format | policy | per decision: mean / median / p90 (decisions) |", "| --- | --- | --- |"]
    time_rows += [f"| {fmt} | {spec} | {time_cell(ms)} |" for (fmt, spec), ms in sorted(times.items()) if ms]
    end, other = other_work(busy0, own0, children_cpu() - children0, started)
    command = (f".venv/bin/python scripts/bench_search.py --pairs {pairs} --formats {' '.join(formats)} "
               f"--levels {' '.join(map(str, levels))} --doc")
    return (f"{HEADING}\n\n`{command}` on {os.cpu_count()} cores, one battle at a time (seeds from {SEED_BASE}, "
            "each played twice with the seats swapped), wall "
            f"{time.perf_counter() - started:.0f} s.\n\n" + "\n".join(rows) + "\n\n" + "\n".join(time_rows)
            + f"\n\n{other_work_note((load, end), other)}.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4, help="seeds per pairing (each played twice)")
    parser.add_argument("--formats", nargs="+", default=list(FORMATS))
    parser.add_argument("--levels", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--doc", action="store_true", help="write the section of docs/benchmarks.md")
    args = parser.parse_args()
    text = asyncio.run(run(args.formats, args.levels, args.pairs))
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
