"""Benchmark ``analyse``: rollouts per second, the win-probability pass of one gen9 battle, one decision's options.

    .venv/bin/python scripts/bench_analysis.py [--k 8] [--processes 1] [--concurrency 16] [--doc]

Records a seeded gen9randombattle heuristic-vs-maxdamage battle of about 30 decisions, then times (1) the
win-probability pass over every decision at ``--k`` rollouts each (heuristic both sides) and (2) the option values
of one mid-battle decision of p1 at ``--k``, once with rollouts forked from their decision and once replaying the
prefix. Times scale linearly in K (each rollout is independent), so a run at K < 64 also states the K = 64 time it
implies (K = 64 itself takes several minutes on two shared cores). ``--doc`` writes the section into
docs/benchmarks.md.
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


async def measure(recording, k: int, processes: int, concurrency: int, fork: bool) -> dict[str, float]:
    policy = make_policy("heuristic")
    step = len(recording.turns) // 2
    while "p1" not in recording.turns[step].decisions:
        step += 1
    options = len(recording.turns[step].decisions["p1"].legal_actions)
    async with SimPool(processes) as pool:
        started, cpu = time.perf_counter(), time.process_time()
        await analyse(recording, policy, pool=pool, k=k, seed=1, concurrency=concurrency, fork=fork)
        pass_s, pass_cpu = time.perf_counter() - started, time.process_time() - cpu
        started = time.perf_counter()
        await analyse(recording, policy, pool=pool, k=k, seed=1, options=("p1",), at=[step], steps=[step],
                      concurrency=concurrency, fork=fork)
        options_s = time.perf_counter() - started
    rollouts = len(recording.turns) * k
    return {"decisions": len(recording.turns), "rollouts": rollouts, "pass_s": pass_s, "pass_cpu": pass_cpu,
            "per_s": rollouts / pass_s, "step": step, "options": options, "option_rollouts": (options + 1) * k,
            "options_s": options_s}


def section(results: dict[str, dict[str, float]], k: int, processes: int, concurrency: int, note: str) -> str:
    scale = 64 / k
    fork, replay = results["fork"], results["replay"]
    verdict = lambda value, goal: "meets" if value <= goal else "misses"  # noqa: E731
    rows = [f"| measure | fork, K = {k} | replayed prefix, K = {k} | fork, implied K = 64 | goal (K = 64) |",
            "| --- | --- | --- | --- | --- |",
            f"| rollouts per second (win-probability pass) | {fork['per_s']:.1f} | {replay['per_s']:.1f} | same | — |"]
    for key, label, goal in (("pass_s", f"win-probability pass, {fork['decisions']} decisions "
                                         f"({fork['rollouts']} rollouts at K = {k})", GOAL_PASS_S),
                             ("options_s", f"option values of decision {fork['step']} (p1, {fork['options']} "
                                           "options, and its win probability)", GOAL_OPTIONS_S)):
        implied = fork[key] * scale
        rows.append(f"| {label} | {fork[key]:.1f} s | {replay[key]:.1f} s | {implied:.1f} s | ≤ {goal:.0f} s: "
                    f"{verdict(implied, goal)} |")
    table = "\n".join(rows)
    return f"""{HEADING}

`.venv/bin/python scripts/bench_analysis.py --k {k} --processes {processes} --concurrency {concurrency} --doc` on
{platform.machine()} with {os.cpu_count()} cores, Python {platform.python_version()}: a gen9randombattle
heuristic-vs-maxdamage battle of {fork['decisions']} decisions; heuristic rollouts on both sides, {concurrency} in
flight on {processes} simulator process(es). *Fork*: each rollout is a copy of its decision (the bridge's
`snapshot`/`fork`, Showdown's `State.serializeBattle`/`deserializeBattle`); *replayed prefix*: each rollout's
`start` request replays the recording's input up to the decision. Both play the same battles (tested). Times are
linear in K (rollouts are independent), so the K = 64 column is the K = {k} time × {scale:g}.

{table}

Python CPU in the forked win-probability pass: {fork['pass_cpu']:.1f} s of {fork['pass_s']:.1f} s wall. {note}.
"""


def _own_cpu() -> float:
    """This process's CPU and its finished children's (the simulators, once their pool has closed)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    recording = asyncio.run(pick_battle(args.decisions))
    load_start = os.getloadavg()[0]
    busy, own = machine_busy(), _own_cpu()
    started = time.perf_counter()
    results = {name: asyncio.run(measure(recording, args.k, args.processes, args.concurrency, name == "fork"))
               for name in ("fork", "replay")}
    wall = time.perf_counter() - started
    other = max(0.0, (machine_busy() - busy - (_own_cpu() - own)) / wall)
    note = other_work_note((f"{load_start:.2f}", f"{os.getloadavg()[0]:.2f}"), other)
    text = section(results, args.k, args.processes, args.concurrency, note)
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
