"""Analysis with lean rollouts: one battle's win probabilities and one decision's options, at K = 64.

    .venv/bin/python -m benchmarks.analysis [--k 64] [--compare-k 8] [--processes 2] [--concurrency 16] [--seed N]

Records a seeded gen9randombattle heuristic-vs-maxdamage battle of about 30 decisions, then times (1) the
win-probability pass over every decision (heuristic both sides) and (2) the option values of one mid-battle decision
of p1, with lean rollouts (winner only, ``wolfeclick.battle.lean``) forked from their decision, at ``--k`` itself;
and, at ``--compare-k``, the pass three ways on the same pool — lean forked, lean replaying the prefix, full
recorded rollouts forked — with the Python and simulator CPU each rollout cost. The older comparison of full
recorded rollouts forked and replayed is ``benchmarks.analysis_full``; both take their battle and timed passes from
here, as does ``benchmarks.simulator``. ``--seed`` plays that seed's battle instead of looking for the first of
about ``--decisions`` decisions (which plays a dozen battles first: the smoke test's shortcut).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.analysis.core import analyse
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SimPool

NAME = "analysis"
HEADING = "## Analysis with lean rollouts: one battle's win probabilities and one decision's options, at K = 64"
GOAL_PASS_S = 60.0
GOAL_OPTIONS_S = 5.0
COMPARED = (("lean-fork", True, True, "lean, forked from the decision"),
            ("lean-replay", False, True, "lean, replaying the prefix"),
            ("full-fork", True, False, "full recorded rollouts, forked (the path before)"))
"""The passes compared at ``--compare-k``: name, forked, lean, label."""


async def pick_battle(decisions: int) -> Recording:
    """The first seed whose heuristic-vs-maxdamage gen9 battle has about ``decisions`` decision points."""
    best: Recording | None = None
    for seed in range(1, 40):
        recording = await play_battle(make_policy("heuristic"), make_policy("maxdamage"),
                                      format_id="gen9randombattle", seed=seed)
        if best is None or abs(len(recording.turns) - decisions) < abs(len(best.turns) - decisions):
            best = recording
        if abs(len(recording.turns) - decisions) <= 2:
            break
    assert best is not None
    return best


async def seeded_battle(seed: int) -> Recording:
    """That seed's heuristic-vs-maxdamage gen9 battle."""
    return await play_battle(make_policy("heuristic"), make_policy("maxdamage"), format_id="gen9randombattle",
                             seed=seed)


def add_battle_arguments(parser: argparse.ArgumentParser) -> None:
    """``--decisions`` and ``--seed``: which battle ``battle`` measures on, here and in the benchmarks sharing it."""
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--seed", type=int, default=None,
                        help="play this seed's battle (default: the first of about --decisions decisions)")


def battle(decisions: int, seed: int | None) -> Recording:
    """The battle every figure is measured on: ``seed``'s, or the first of about ``decisions`` decisions."""
    return asyncio.run(pick_battle(decisions) if seed is None else seeded_battle(seed))


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


def middle_step(recording: Recording) -> int:
    """The first decision of p1 from the middle of the battle on: the one whose options are valued."""
    step = len(recording.turns) // 2
    while "p1" not in recording.turns[step].decisions:
        step += 1
    return step


async def timed_pass(recording: Recording, k: int, processes: int, concurrency: int, fork: bool, lean: bool = False,
                     options: bool = True) -> dict[str, Any]:
    """The win-probability pass over every decision (and, with ``options``, the middle decision's option values) on
    a fresh pool: wall, this process's CPU and the simulators' CPU (/proc) of the pass."""
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


def measure(recording: Recording, k: int, compare_k: int, processes: int, concurrency: int) -> dict[str, Any]:
    """The lean forked pass and options at ``k``, then the three passes of ``COMPARED`` at ``compare_k``."""
    results = {"battle": recording.id,
               "lean": asyncio.run(timed_pass(recording, k, processes, concurrency, True, lean=True))}
    for name, fork, lean, _ in COMPARED:
        results[name] = asyncio.run(timed_pass(recording, compare_k, processes, concurrency, fork, lean=lean,
                                               options=False))
    return results


def verdict(value: float, goal: float) -> str:
    return "meets" if value <= goal else "misses"


def render(result: harness.Result) -> str:
    r, p = result.results, result.params
    main, k, compare_k = r["lean"], p["k"], p["compare_k"]
    rows = ["| measure (lean rollouts forked from their decision) | measured | goal |", "| --- | --- | --- |",
            f"| win-probability pass, {main['decisions']} decisions ({main['rollouts']} rollouts at K = {k}) | "
            f"{main['pass_s']:.1f} s ({main['per_s']:.1f} rollouts/s) | ≤ {GOAL_PASS_S:.0f} s: "
            f"{verdict(main['pass_s'], GOAL_PASS_S)} |",
            f"| option values of decision {main['step']} (p1, {main['options']} options and its win probability: "
            f"{main['option_rollouts']} rollouts at K = {k}) | {main['options_s']:.1f} s | ≤ {GOAL_OPTIONS_S:.0f} s: "
            f"{verdict(main['options_s'], GOAL_OPTIONS_S)} |"]
    compare = [f"| win-probability pass at K = {compare_k} | wall | rollouts/s | Python CPU per rollout | "
               "simulator CPU per rollout |", "| --- | --- | --- | --- | --- |"]
    for name, _, _, label in COMPARED:
        c = r[name]
        compare.append(f"| {label} | {c['pass_s']:.1f} s | {c['per_s']:.1f} | "
                       f"{1000 * c['pass_cpu'] / c['rollouts']:.0f} ms | {1000 * c['pass_sim'] / c['rollouts']:.0f} ms |")
    floor = max((main["pass_sim"] + main["pass_cpu"]) / 2, main["pass_cpu"])
    cores = result.machine["cores"]
    which = (f"the {main['decisions']}-decision battle of seed {p['seed']}" if p.get("seed") is not None else
             f"the same gen9randombattle heuristic-vs-maxdamage battle of {main['decisions']} decisions as above")
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}`: {which} (`{r['battle']}`), heuristic rollouts on both sides, {p['concurrency']} in "
        f"flight on {p['processes']} simulator process(es). *Lean* rollouts (`wolfeclick.battle.lean`) play the same "
        "battles as full ones — the same simulator input to the last line, tested — but keep only what the policies "
        "see: no log, turn records, snapshots or rewards, the state text made only if a policy reads it, and a forked "
        "copy starts from the decision's poke-env state (read once per decision, then copied) instead of re-reading "
        "the prefix's output. Every figure below is a measured run at the K it names.",
        "",
        harness.describe(result),
        "",
        *rows,
        "",
        *compare,
        "",
        f"The CPU this costs: in the K = {k} pass the simulators used {main['pass_sim']:.1f} s (Showdown's own battle "
        f"engine, the bulk of it) and this process {main['pass_cpu']:.1f} s (poke-env reading the simulator's output "
        "and the heuristic deciding, mostly), so with both cores free for this pass alone it could not take less "
        f"than about {floor:.0f} s here ({cores} cores; the pool spreads rollouts over one simulator per core on "
        "more).",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--compare-k", type=int, default=8)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    add_battle_arguments(parser)
    args = parser.parse_args(argv)
    recording = battle(args.decisions, args.seed)
    with harness.measure() as run:
        results = measure(recording, args.k, args.compare_k, args.processes, args.concurrency)
    harness.finish(NAME, argv, {"k": args.k, "compare_k": args.compare_k, "processes": args.processes,
                                "concurrency": args.concurrency, "decisions": args.decisions, "seed": args.seed},
                   results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
