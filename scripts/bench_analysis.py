"""Benchmark ``analyse``: rollouts per second, the win-probability pass of one gen9 battle, one decision's options.

    .venv/bin/python scripts/bench_analysis.py [--k 16] [--processes 1] [--concurrency 16] [--doc]

Records a seeded gen9randombattle heuristic-vs-maxdamage battle of about 30 decisions, then times (1) the
win-probability pass over every decision at ``--k`` rollouts each (heuristic both sides) and (2) the option values
of one mid-battle decision of p1 at ``--k``. Every rollout replays the recording's input prefix in one ``start``
request, reseeds, and plays on through the ordinary runner. Times scale linearly in K (each rollout is independent),
so a run at K < 64 also states the K = 64 time it implies. ``--doc`` writes the section into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.benchdoc import machine_busy, other_work_note, write_section  # noqa: E402
from wolfeclick.analysis.core import analyse  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.battle.specs import make_policy  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

HEADING = "## Analysis: rollouts per second, one battle's win probabilities, one decision's options"
GOAL_PASS_S = 60.0
GOAL_OPTIONS_S = 5.0


async def pick_battle(decisions: int) -> object:
    """The first seed whose heuristic-vs-maxdamage gen9 battle has about ``decisions`` decision points."""
    best = None
    for seed in range(1, 40):
        recording = await play_battle(make_policy("heuristic"), make_policy("maxdamage"),
                                      format_id="gen9randombattle", seed=seed)
        if best is None or abs(len(recording.turns) - decisions) < abs(len(best.turns) - decisions):
            best = recording
        if abs(len(recording.turns) - decisions) <= 2:
            break
    return best


async def measure(recording, k: int, processes: int, concurrency: int) -> dict[str, float]:
    policy = make_policy("heuristic")
    step = len(recording.turns) // 2
    while "p1" not in recording.turns[step].decisions:
        step += 1
    options = len(recording.turns[step].decisions["p1"].legal_actions)
    async with SimPool(processes) as pool:
        started, cpu = time.perf_counter(), time.process_time()
        await analyse(recording, policy, pool=pool, k=k, seed=1, concurrency=concurrency)
        pass_s, pass_cpu = time.perf_counter() - started, time.process_time() - cpu
        started = time.perf_counter()
        await analyse(recording, policy, pool=pool, k=k, seed=1, options=("p1",), at=[step], steps=[step],
                      concurrency=concurrency)
        options_s = time.perf_counter() - started
    rollouts = len(recording.turns) * k
    return {"decisions": len(recording.turns), "rollouts": rollouts, "pass_s": pass_s, "pass_cpu": pass_cpu,
            "per_s": rollouts / pass_s, "step": step, "options": options, "option_rollouts": (options + 1) * k,
            "options_s": options_s}


def section(result: dict[str, float], k: int, processes: int, concurrency: int, note: str) -> str:
    scale = 64 / k
    pass64, options64 = result["pass_s"] * scale, result["options_s"] * scale
    verdict = lambda value, goal: "meets" if value <= goal else "misses"  # noqa: E731
    rows = "\n".join([
        f"| measure | K = {k} | implied K = 64 | goal |",
        "| --- | --- | --- | --- |",
        f"| rollouts per second (win-probability pass) | {result['per_s']:.1f} | same | — |",
        f"| win-probability pass, {result['decisions']} decisions ({result['rollouts']} rollouts) | "
        f"{result['pass_s']:.1f} s | {pass64:.0f} s | ≤ {GOAL_PASS_S:.0f} s: {verdict(pass64, GOAL_PASS_S)} |",
        f"| option values of decision {result['step']} (p1, {result['options']} options, and its win probability) "
        f"| {result['options_s']:.1f} s "
        f"| {options64:.1f} s | ≤ {GOAL_OPTIONS_S:.0f} s: {verdict(options64, GOAL_OPTIONS_S)} |",
    ])
    return f"""{HEADING}

`.venv/bin/python scripts/bench_analysis.py --k {k} --processes {processes} --concurrency {concurrency} --doc` on
{platform.machine()} with {os.cpu_count()} cores, Python {platform.python_version()}: a gen9randombattle
heuristic-vs-maxdamage battle of {result['decisions']} decisions; heuristic rollouts on both sides; each rollout
replays the recording's input prefix in one `start` request, reseeds and plays on through the runner.

{rows}

Python CPU in the win-probability pass: {result['pass_cpu']:.1f} s of {result['pass_s']:.1f} s wall. {note}.
Fork vs replayed prefix: not measured (no `serializeBattle` fork is built; docs/analysis.md says why and what it
would save).
"""


def _own_cpu() -> float:
    """This process's CPU and its finished children's (the simulators, once their pool has closed)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    recording = asyncio.run(pick_battle(args.decisions))
    load_start = os.getloadavg()[0]
    busy, own = machine_busy(), _own_cpu()
    started = time.perf_counter()
    result = asyncio.run(measure(recording, args.k, args.processes, args.concurrency))
    wall = time.perf_counter() - started
    other = max(0.0, (machine_busy() - busy - (_own_cpu() - own)) / wall)
    note = other_work_note((f"{load_start:.2f}", f"{os.getloadavg()[0]:.2f}"), other)
    text = section(result, args.k, args.processes, args.concurrency, note)
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
