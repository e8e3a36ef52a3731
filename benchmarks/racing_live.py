"""Analysis by racing, timed: one battle's win probabilities and one decision's options (issue 48).

    .venv/bin/python -m benchmarks.racing_live [--processes 2] [--k 64] [--seed N]

On the seeded gen9randombattle heuristic-vs-maxdamage battle of about 30 decisions that ``benchmarks.analysis``
uses, times racing (and uniform K where affordable) with the Python heuristic and ``sim:heuristic`` as the rollout
policy: the win-probability pass over every decision, then the options of p1's middle decision and its win
probability, each on one pool: rollouts played, wall, this process's and the simulators' CPU. ``--seed`` plays that
seed's battle instead of looking for one of about ``--decisions`` (the smoke test's shortcut).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any, Sequence

from benchmarks import harness
from benchmarks.analysis import _sim_cpu, add_battle_arguments, battle, middle_step
from wolfeclick.analysis.core import analyse
from wolfeclick.analysis.racing import uniform_width
from wolfeclick.analysis.sim_rollout import rollout_policy
from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SimPool

NAME = "racing_live"
HEADING = "## Analysis by racing, timed: one battle's win probabilities and one decision's options"
RUNS = (("heuristic", "racing", False), ("sim:heuristic", "racing", False), ("sim:heuristic", "uniform", False),
        ("heuristic", "racing", True), ("heuristic", "uniform", True), ("sim:heuristic", "racing", True),
        ("sim:heuristic", "uniform", True))
"""(rollout policy, sampling, the middle decision's options rather than the win-probability pass)."""
QUIET_AT = "cf1f131"
"""The commit whose docs/benchmarks.md holds the two quiet runs (2026-12-05) that docs/analysis.md and the findings
quote."""


async def timed(recording: Recording, processes: int, k: int) -> list[dict[str, Any]]:
    step = middle_step(recording)
    rows = []
    async with SimPool(processes) as pool:
        for spec, sampling, options in RUNS:
            policy = rollout_policy(spec)
            extra: dict[str, Any] = {"options": ("p1",), "at": [step], "steps": [step]} if options else {}
            started, cpu, sim = time.perf_counter(), time.process_time(), _sim_cpu(pool)
            analysis = await analyse(recording, policy, pool=pool, k=k, seed=1, sampling=sampling, **extra)
            wall = time.perf_counter() - started
            cpu, sim = time.process_time() - cpu, _sim_cpu(pool) - sim
            used = sum(d.win.rollouts + sum(o.estimate.rollouts for t in d.options.values() for o in t.options)
                       for d in analysis.decisions)
            rows.append({"policy": spec, "sampling": sampling, "options": options, "rollouts": used, "wall_s": wall,
                         "python_s": cpu, "sim_s": sim, "load": os.getloadavg()[0]})
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def render(result: harness.Result) -> str:
    r, p = result.results, result.params
    k = p["k"]
    what = {False: f"win-probability pass, {r['decisions']} decisions",
            True: f"options of decision {r['step']} ({r['choices']}) and its win probability"}
    rows = ["| rollout policy | sampling | measure | rollouts | wall | CPU: Python + simulators | CPU per rollout | "
            "load (1 min) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    rows += [f"| {row['policy']} | {row['sampling']} | {what[row['options']]} | {row['rollouts']} | "
             f"{row['wall_s']:.1f} s | {row['python_s']:.1f} + {row['sim_s']:.1f} s | "
             f"{1000 * (row['python_s'] + row['sim_s']) / max(1, row['rollouts']):.0f} ms | {row['load']:.1f} |"
             for row in r["rows"]]
    which = (f"the {r['decisions']}-decision battle of seed {p['seed']}" if p.get("seed") is not None else
             f"the seeded gen9randombattle heuristic-vs-maxdamage battle of {r['decisions']} decisions that "
             "`benchmarks.analysis` uses")
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}`: {which} (`{r['battle']}`), K = {k} (racing: the most any estimate gets; batch 8; win "
        f"probabilities stop at the width uniform K = {k} gives at one half, {uniform_width(k):.3f}), on "
        f"{p['processes']} simulator process(es). The rollout counts are exact, and the CPU seconds (this process, "
        "and the simulator processes from /proc) are the load-independent cost; with both cores free a pass takes "
        "about half its CPU seconds.",
        "",
        harness.describe(result) + (
            "" if (result.run.other_cores or 0) < harness.SHARED_AT else
            f" The runs on a quiet machine that docs/analysis.md and the findings below quote (2026-12-05) are in this "
            f"page at commit {QUIET_AT}."),
        "",
        *rows,
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--k", type=int, default=64)
    add_battle_arguments(parser)
    args = parser.parse_args(argv)
    recording = battle(args.decisions, args.seed)
    step = middle_step(recording)
    with harness.measure() as run:
        rows = asyncio.run(timed(recording, args.processes, args.k))
    results = {"battle": recording.id, "decisions": len(recording.turns), "step": step,
               "choices": len(recording.turns[step].decisions["p1"].legal_actions), "rows": rows}
    harness.finish(NAME, argv, {"processes": args.processes, "k": args.k, "decisions": args.decisions,
                                "seed": args.seed}, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
