"""The floor under the analysis figures: Showdown alone replaying the very rollouts an analysis played.

    .venv/bin/python scripts/bench_simulator.py [--k 64] [--processes 2] [--concurrency 16] [--doc]

Plays, as ``scripts/bench_analysis.py`` does, the lean forked rollouts of the same seeded 31-decision
gen9randombattle battle (heuristic both sides): the options of its middle decision (p1's options and its win
probability) and the win-probability pass over every decision, timing each on the pool. Then feeds the input log of
every one of those rollouts to ``scripts/bench_simulator.js``, which replays them in one Node process with no
requests, replies, pipes or Python: each a copy of its decision (``State.deserializeBattle``) fed its own choices
in one go, checked to end with the winner the analysis saw. That CPU is what Showdown's battle engine needs for
this work whatever this project does around it, so its half on two cores is the least wall time any change to the
Python side, the bridge or the pool could reach on this machine. ``--doc`` writes the section into
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.bench_analysis import (  # noqa: E402
    GOAL_OPTIONS_S,
    GOAL_PASS_S,
    _own_cpu,
    _sim_cpu,
    middle_step,
    pick_battle,
)
from scripts.benchdoc import machine_busy, other_work_note, write_section  # noqa: E402
from wolfeclick.analysis.core import _local_outcomes, _Task  # noqa: E402
from wolfeclick.analysis.rollout import Outcome, prefix_lines  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.sim.process import SHOWDOWN_DIR, SimPool, node_executable  # noqa: E402

HEADING = "## Analysis: the floor under it, Showdown alone replaying the same rollouts (issue 31)"
REPLAYER = Path(__file__).with_name("bench_simulator.js")


async def play(recording, tasks: list[_Task], k: int, processes: int, concurrency: int) -> dict:
    """The K lean forked rollouts of each task on a fresh pool, as ``analyse`` plays them, with their cost."""
    policy = make_policy("heuristic")
    turns = [turn for turn in recording.turns if turn.index in {task.step for task in tasks}]
    async with SimPool(processes) as pool:
        started, cpu, sim = time.perf_counter(), time.process_time(), _sim_cpu(pool)
        outcomes = await _local_outcomes(recording, policy, tasks, turns, k, 1, pool, concurrency, lambda n: None,
                                         None, True, True)
        return {"outcomes": outcomes, "wall_s": time.perf_counter() - started,
                "python_s": time.process_time() - cpu, "sim_s": _sim_cpu(pool) - sim}


def groups(recording, tasks: list[_Task], k: int, outcomes: list[Outcome]) -> list[dict]:
    """Per task, the decision's prefix and each rollout's input after it, with the winner's name (what Showdown's
    ``battle.winner`` holds); a rollout stopped at the turn limit is expected to be unfinished."""
    found = []
    for index, task in enumerate(tasks):
        prefix = prefix_lines(recording, task.step)
        rollouts, winners = [], []
        for outcome in outcomes[index * k:(index + 1) * k]:
            if outcome.inputlog[:len(prefix)] != prefix:
                raise SystemExit(f"decision {task.step}: a rollout's input log does not start with its prefix")
            rollouts.append(outcome.inputlog[len(prefix):])
            winners.append("unfinished" if outcome.reason == "turn_limit" else
                           recording.players[outcome.winner].name if outcome.winner else None)
        found.append({"prefix": prefix, "rollouts": rollouts, "winners": winners})
    return found


def showdown_alone(found: list[dict], rounds: int) -> list[dict]:
    payload = json.dumps({"showdown": str(SHOWDOWN_DIR), "groups": found, "rounds": rounds})
    done = subprocess.run([node_executable(), str(REPLAYER)], input=payload, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"the replay failed: {done.stderr.strip()}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def section(results: dict, k: int, processes: int, concurrency: int, note: str) -> str:
    cores = os.cpu_count() or 1
    rows = ["| work (lean rollouts forked from their decision, K = " f"{k}) | rollouts | analysis wall, {processes} "
            "simulators | this process's CPU | simulators' CPU | Showdown alone: CPU (rounds) | of it, the forks | "
            f"floor on {cores} cores | goal |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, label, goal in (("options", f"options of decision {results['step']} (p1, {results['choices']} options "
                                          "and its win probability)", GOAL_OPTIONS_S),
                              ("pass", f"win-probability pass, {results['decisions']} decisions", GOAL_PASS_S)):
        r = results[name]
        alone = r["alone"][-1]
        rounds = ", ".join(f"{a['cpu_s']:.1f}" for a in r["alone"])
        rows.append(f"| {label} | {alone['rollouts']} | {r['wall_s']:.1f} s | {r['python_s']:.1f} s | "
                    f"{r['sim_s']:.1f} s | {alone['cpu_s']:.1f} s ({rounds} s) | {alone['fork_cpu_s']:.1f} s | "
                    f"{alone['cpu_s'] / cores:.1f} s | ≤ {goal:.0f} s |")
    return f"""{HEADING}

`.venv/bin/python scripts/bench_simulator.py --k {k} --processes {processes} --concurrency {concurrency} --doc` on
{platform.machine()} with {cores} cores, Python {platform.python_version()}, Node {results['node']}: the
rollouts `analyse` plays for the same 31-decision gen9 battle as the analysis sections above (heuristic both sides,
{concurrency} in flight), timed on the pool, then every one of them replayed by `scripts/bench_simulator.js` in one
Node process from its input log: a copy of its decision (`deserializeBattle`, as the bridge's `fork`) fed its own
choices in one go, no request, reply, pipe or Python, each checked to end with the winner the analysis saw. That is
the CPU Showdown's battle engine needs for this work whatever is done around it; the floor column is it spread over
every core with nothing else to do. The last round is the one in the CPU column (Node's JIT warms over the first).

{chr(10).join(rows)}

{reading(results, cores)} {note}.
"""


def reading(results: dict, cores: int) -> str:
    """What the table says against the goals: the bare engine's floor on ``cores``, and what the analysis adds."""
    said = []
    for name, what, goal in (("options", "the options", GOAL_OPTIONS_S), ("pass", "the pass", GOAL_PASS_S)):
        r = results[name]
        cold, warm = r["alone"][0]["cpu_s"], r["alone"][-1]["cpu_s"]
        extra = r["sim_s"] - cold
        total = r["python_s"] + r["sim_s"]
        rounds = (f"warm ({cold:.1f} s in its first, cold round)" if len(r["alone"]) > 1 else "in one round")
        said.append(f"For {what}, Showdown alone needs {warm:.1f} s of CPU {rounds}, {warm / cores:.1f} s on "
                    f"{cores} cores against the {goal:.0f} s goal; the analysis "
                    f"spent {total:.1f} s of CPU ({total / cores:.1f} s on {cores} cores, {r['wall_s']:.1f} s wall): "
                    f"this process {r['python_s']:.1f} s (poke-env reading each turn, the heuristic choosing) and "
                    f"the simulators {extra:.1f} s more than the bare engine's first round (not broken down "
                    "here: the bridge's requests and replies, the second process's JIT warm-up, the snapshot each "
                    "process makes once per decision).")
    return " ".join(said)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    recording = asyncio.run(pick_battle(30))
    step = middle_step(recording)
    actions = recording.turns[step].decisions["p1"].legal_actions
    work = {"options": [_Task(step), *(_Task(step, "p1", action) for action in actions)],
            "pass": [_Task(turn.index) for turn in recording.turns]}
    load_start, busy, own, started = os.getloadavg()[0], machine_busy(), _own_cpu(), time.perf_counter()
    results: dict = {"step": step, "choices": len(actions), "decisions": len(recording.turns),
                     "node": subprocess.run([node_executable(), "--version"], capture_output=True, text=True,
                                            check=True).stdout.strip()}
    for name, tasks in work.items():
        played = asyncio.run(play(recording, tasks, args.k, args.processes, args.concurrency))
        found = groups(recording, tasks, args.k, played.pop("outcomes"))
        results[name] = {**played, "alone": showdown_alone(found, 3 if name == "options" else 1)}
        print(name, results[name], flush=True)
    wall = time.perf_counter() - started
    other = max(0.0, (machine_busy() - busy - (_own_cpu() - own)) / wall)
    text = section(results, args.k, args.processes, args.concurrency,
                   other_work_note((f"{load_start:.2f}", f"{os.getloadavg()[0]:.2f}"), other))
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
