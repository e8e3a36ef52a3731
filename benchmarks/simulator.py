"""The floor under the analysis figures: Showdown alone replaying the very rollouts an analysis played.

    .venv/bin/python -m benchmarks.simulator [--k 64] [--processes 2] [--concurrency 16] [--seed N]

Plays, as ``benchmarks.analysis`` does, the lean forked rollouts of the same seeded 31-decision
gen9randombattle battle (heuristic both sides): the options of its middle decision (p1's options and its win
probability) and the win-probability pass over every decision, timing each on the pool. Then feeds the input log of
every one of those rollouts to ``benchmarks/simulator.js``, which replays them in one Node process with no
requests, replies, pipes or Python: each a copy of its decision (``State.deserializeBattle``) fed its own choices
in one go, checked to end with the winner the analysis saw. That CPU is what Showdown's battle engine needs for
this work whatever this project does around it, so its half on two cores is the least wall time any change to the
Python side, the bridge or the pool could reach on this machine. ``--seed`` plays that seed's heuristic-vs-maxdamage
battle instead of looking for the first of about 30 decisions (which plays a dozen battles first: the smoke test's
shortcut).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from benchmarks.analysis import GOAL_OPTIONS_S, GOAL_PASS_S, _sim_cpu, battle, middle_step
from wolfeclick.analysis.core import DEFAULT_MARGIN, _local_outcomes, _Player, _Task
from wolfeclick.analysis.racing import DEFAULT_BATCH
from wolfeclick.analysis.rollout import Outcome, prefix_lines
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SHOWDOWN_DIR, SimPool, node_executable

NAME = "simulator"
HEADING = "## Analysis: the floor under it, Showdown alone replaying the same rollouts (issue 31)"
REPLAYER = Path(__file__).with_name("simulator.js")


async def play(recording: Recording, tasks: list[_Task], k: int, processes: int, concurrency: int) -> dict[str, Any]:
    """The K lean forked rollouts of each task on a fresh pool, as ``analyse`` plays them, with their cost."""
    policy = make_policy("heuristic")
    turns = [turn for turn in recording.turns if turn.index in {task.step for task in tasks}]
    async with SimPool(processes) as pool:
        started, cpu, sim = time.perf_counter(), time.process_time(), _sim_cpu(pool)
        player = _Player(recording, policy, turns, 1, pool, concurrency, lambda n: None, None, True, True)
        by_task, _ = await _local_outcomes(player, tasks, k, "uniform", DEFAULT_BATCH, 0.0, DEFAULT_MARGIN)
        return {"outcomes": [by_task[task.key()] for task in tasks], "wall_s": time.perf_counter() - started,
                "python_s": time.process_time() - cpu, "sim_s": _sim_cpu(pool) - sim}


def groups(recording: Recording, tasks: list[_Task], outcomes: list[list[Outcome]]) -> list[dict[str, Any]]:
    """Per task, the decision's prefix and each rollout's input after it, with the winner's name (what Showdown's
    ``battle.winner`` holds); a rollout stopped at the turn limit is expected to be unfinished."""
    names: dict[str, str] = {side: info.name for side, info in recording.players.items()}
    found = []
    for task, played in zip(tasks, outcomes):
        prefix = prefix_lines(recording, task.step)
        rollouts, winners = [], []
        for outcome in played:
            if outcome.inputlog[:len(prefix)] != prefix:
                raise SystemExit(f"decision {task.step}: a rollout's input log does not start with its prefix")
            rollouts.append(outcome.inputlog[len(prefix):])
            winners.append("unfinished" if outcome.reason == "turn_limit" else
                           names[outcome.winner] if outcome.winner else None)
        found.append({"prefix": prefix, "rollouts": rollouts, "winners": winners})
    return found


def showdown_alone(found: list[dict[str, Any]], rounds: int) -> list[dict[str, Any]]:
    payload = json.dumps({"showdown": str(SHOWDOWN_DIR), "groups": found, "rounds": rounds})
    done = subprocess.run([node_executable(), str(REPLAYER)], input=payload, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"the replay failed: {done.stderr.strip()}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def measure(k: int, processes: int, concurrency: int, seed: int | None = None) -> dict[str, Any]:
    """The options of the middle decision and the whole pass: played by the analysis, then by Showdown alone."""
    recording = battle(30, seed)
    step = middle_step(recording)
    actions = recording.turns[step].decisions["p1"].legal_actions
    work = {"options": [_Task(step), *(_Task(step, "p1", action) for action in actions)],
            "pass": [_Task(turn.index) for turn in recording.turns]}
    results: dict[str, Any] = {"battle": recording.id, "step": step, "choices": len(actions), "decisions": len(recording.turns),
                               "node": subprocess.run([node_executable(), "--version"], capture_output=True,
                                                      text=True, check=True).stdout.strip()}
    for name, tasks in work.items():
        played = asyncio.run(play(recording, tasks, k, processes, concurrency))
        found = groups(recording, tasks, played.pop("outcomes"))
        results[name] = {**played, "alone": showdown_alone(found, 3 if name == "options" else 1)}
        print(name, results[name], file=sys.stderr, flush=True)
    return results


def reading(results: dict[str, Any], cores: int) -> str:
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


def render(result: harness.Result) -> str:
    p, results = result.params, result.results
    cores = result.machine["cores"] or 1
    rows = [f"| work (lean rollouts forked from their decision, K = {p['k']}) | rollouts | analysis wall, "
            f"{p['processes']} simulators | this process's CPU | simulators' CPU | Showdown alone: CPU (rounds) | of "
            f"it, the forks | floor on {cores} cores | goal |",
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
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}`, Node {results['node']}: the rollouts `analyse` plays for "
        + (f"the {results['decisions']}-decision gen9 battle of seed {p['seed']}" if p.get("seed") is not None else
           f"the same {results['decisions']}-decision gen9 battle as the analysis sections above")
        + (f" (`{results['battle']}`)" if "battle" in results else "")
        + f" (heuristic both sides, {p['concurrency']} in flight), "
        "timed on the pool, then every one of them replayed by `benchmarks/simulator.js` in one Node process from its "
        "input log: a copy of its decision (`deserializeBattle`, as the bridge's `fork`) fed its own choices in one "
        "go, no request, reply, pipe or Python, each checked to end with the winner the analysis saw. That is the CPU "
        "Showdown's battle engine needs for this work whatever is done around it; the floor column is it spread over "
        "every core with nothing else to do. The last round is the one in the CPU column (Node's JIT warms over the "
        "first).",
        "",
        harness.describe(result),
        "",
        *rows,
        "",
        reading(results, cores),
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=None,
                        help="play this seed's battle (default: the first of about 30 decisions)")
    args = parser.parse_args(argv)
    with harness.measure() as run:
        results = measure(args.k, args.processes, args.concurrency, args.seed)
    harness.finish(NAME, argv, {"k": args.k, "processes": args.processes, "concurrency": args.concurrency,
                                "seed": args.seed}, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
