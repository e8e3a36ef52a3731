"""Benchmark ``analyse``: rollouts per second, the win-probability pass of one gen9 battle, one decision's options.

    .venv/bin/python scripts/bench_analysis.py [--k 64] [--compare-k 8] [--processes 2] [--concurrency 16] [--doc]
    .venv/bin/python scripts/bench_analysis.py --full --k 8 --processes 1 [--doc]

Records a seeded gen9randombattle heuristic-vs-maxdamage battle of about 30 decisions, then times (1) the
win-probability pass over every decision (heuristic both sides) and (2) the option values of one mid-battle decision
of p1. By default with lean rollouts (winner only, ``wolfeclick.battle.lean``) forked from their decision, measured
at ``--k`` itself, and, at ``--compare-k``, the pass three ways on the same pool — lean forked, lean replaying the
prefix, full recorded rollouts forked — with the Python and simulator CPU each rollout cost. ``--full`` measures the
full recorded rollouts only, forked and replayed, and states the K = 64 time a smaller K implies (the older
section). ``--doc`` writes the section into docs/benchmarks.md.
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
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

HEADING = "## Analysis: rollouts per second, one battle's win probabilities, one decision's options"
LEAN_HEADING = "## Analysis with lean rollouts: one battle's win probabilities and one decision's options, at K = 64"
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


def _sim_cpu(pool: SimPool) -> float:
    """CPU seconds the pool's simulator processes have used so far (Linux /proc; 0 elsewhere)."""
    total = 0.0
    for process in pool.processes:
        try:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def middle_step(recording) -> int:
    step = len(recording.turns) // 2
    while "p1" not in recording.turns[step].decisions:
        step += 1
    return step


async def measure(recording, k: int, processes: int, concurrency: int, fork: bool, lean: bool = False,
                  options: bool = True) -> dict[str, float]:
    policy = make_policy("heuristic")
    step = middle_step(recording)
    choices = len(recording.turns[step].decisions["p1"].legal_actions)
    async with SimPool(processes) as pool:
        started, cpu, sim = time.perf_counter(), time.process_time(), _sim_cpu(pool)
        await analyse(recording, policy, pool=pool, k=k, seed=1, concurrency=concurrency, fork=fork, lean=lean)
        pass_s, pass_cpu = time.perf_counter() - started, time.process_time() - cpu
        pass_sim = _sim_cpu(pool) - sim
        options_s = 0.0
        if options:
            started = time.perf_counter()
            await analyse(recording, policy, pool=pool, k=k, seed=1, options=("p1",), at=[step], steps=[step],
                          concurrency=concurrency, fork=fork, lean=lean)
            options_s = time.perf_counter() - started
    rollouts = len(recording.turns) * k
    return {"decisions": len(recording.turns), "rollouts": rollouts, "pass_s": pass_s, "pass_cpu": pass_cpu,
            "pass_sim": pass_sim, "per_s": rollouts / pass_s, "step": step, "options": choices,
            "option_rollouts": (choices + 1) * k, "options_s": options_s}


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

`.venv/bin/python scripts/bench_analysis.py --full --k {k} --processes {processes} --concurrency {concurrency} --doc` on
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


def lean_section(results: dict[str, dict[str, float]], k: int, compare_k: int, processes: int, concurrency: int,
                 note: str) -> str:
    main = results["lean"]
    verdict = lambda value, goal: "meets" if value <= goal else "misses"  # noqa: E731
    rows = ["| measure (lean rollouts forked from their decision) | measured | goal |", "| --- | --- | --- |",
            f"| win-probability pass, {main['decisions']} decisions ({main['rollouts']} rollouts at K = {k}) | "
            f"{main['pass_s']:.1f} s ({main['per_s']:.1f} rollouts/s) | ≤ {GOAL_PASS_S:.0f} s: "
            f"{verdict(main['pass_s'], GOAL_PASS_S)} |",
            f"| option values of decision {main['step']} (p1, {main['options']} options and its win probability: "
            f"{main['option_rollouts']} rollouts at K = {k}) | {main['options_s']:.1f} s | ≤ {GOAL_OPTIONS_S:.0f} s: "
            f"{verdict(main['options_s'], GOAL_OPTIONS_S)} |"]
    compare = [f"| win-probability pass at K = {compare_k} | wall | rollouts/s | Python CPU per rollout | "
               "simulator CPU per rollout |", "| --- | --- | --- | --- | --- |"]
    for name, label in (("lean-fork", "lean, forked from the decision"),
                        ("lean-replay", "lean, replaying the prefix"),
                        ("full-fork", "full recorded rollouts, forked (the path before)")):
        r = results[name]
        compare.append(f"| {label} | {r['pass_s']:.1f} s | {r['per_s']:.1f} | {1000 * r['pass_cpu'] / r['rollouts']:.0f} ms"
                       f" | {1000 * r['pass_sim'] / r['rollouts']:.0f} ms |")
    floor = max((main["pass_sim"] + main["pass_cpu"]) / 2, main["pass_cpu"])
    return f"""{LEAN_HEADING}

`.venv/bin/python scripts/bench_analysis.py --k {k} --compare-k {compare_k} --processes {processes} --concurrency \
{concurrency} --doc` on {platform.machine()} with {os.cpu_count()} cores, Python {platform.python_version()}: the
same gen9randombattle heuristic-vs-maxdamage battle of {main['decisions']} decisions as above, heuristic rollouts on
both sides, {concurrency} in flight on {processes} simulator process(es). *Lean* rollouts
(`wolfeclick.battle.lean`) play the same battles as full ones — the same simulator input to the last line,
tested — but keep only what the policies see: no log, turn records, snapshots or rewards, the state text made only
if a policy reads it, and a forked copy starts from the decision's poke-env state (read once per decision, then
copied) instead of re-reading the prefix's output. Every figure below is a measured run at the K it names.

{chr(10).join(rows)}

{chr(10).join(compare)}

The CPU this costs: in the K = {k} pass the simulators used {main['pass_sim']:.1f} s (Showdown's own battle
engine, the bulk of it) and this process {main['pass_cpu']:.1f} s (poke-env reading the simulator's output and the
heuristic deciding, mostly), so with both cores free for this pass alone it could not take less than about
{floor:.0f} s here ({os.cpu_count()} cores; the pool spreads rollouts over one simulator per core on more). {note}.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=None, help="64 with lean rollouts, 8 with --full")
    parser.add_argument("--compare-k", type=int, default=8)
    parser.add_argument("--processes", type=int, default=None, help="2 with lean rollouts, 1 with --full")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--full", action="store_true", help="full recorded rollouts only (the older section)")
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    k = args.k or (8 if args.full else 64)
    processes = args.processes or (1 if args.full else 2)
    recording = asyncio.run(pick_battle(args.decisions))
    load_start = os.getloadavg()[0]
    busy, own = machine_busy(), _own_cpu()
    started = time.perf_counter()
    if args.full:
        results = {name: asyncio.run(measure(recording, k, processes, args.concurrency, name == "fork"))
                   for name in ("fork", "replay")}
    else:
        results = {"lean": asyncio.run(measure(recording, k, processes, args.concurrency, True, lean=True))}
        for name, fork, lean in (("lean-fork", True, True), ("lean-replay", False, True),
                                 ("full-fork", True, False)):
            results[name] = asyncio.run(measure(recording, args.compare_k, processes, args.concurrency, fork,
                                                lean=lean, options=False))
    wall = time.perf_counter() - started
    other = max(0.0, (machine_busy() - busy - (_own_cpu() - own)) / wall)
    note = other_work_note((f"{load_start:.2f}", f"{os.getloadavg()[0]:.2f}"), other)
    if args.full:
        text, heading = section(results, k, processes, args.concurrency, note), HEADING
    else:
        text, heading = lean_section(results, k, args.compare_k, processes, args.concurrency, note), LEAN_HEADING
    print(text)
    if args.doc:
        write_section(heading, text)


if __name__ == "__main__":
    main()
