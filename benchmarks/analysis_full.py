"""Analysis with full recorded rollouts: rollouts per second, one battle's win probabilities, one decision's options.

    .venv/bin/python -m benchmarks.analysis_full [--k 8] [--processes 1] [--concurrency 16] [--seed N]

The older comparison (before lean rollouts, ``benchmarks.analysis``): on the same seeded gen9randombattle
heuristic-vs-maxdamage battle of about 30 decisions, the win-probability pass over every decision and the option
values of p1's middle decision with full recorded rollouts, forked from their decision and replaying the prefix, at
``--k``, with the K = 64 time that K implies (times are linear in K).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Sequence

from benchmarks import harness
from benchmarks.analysis import GOAL_OPTIONS_S, GOAL_PASS_S, add_battle_arguments, battle, timed_pass, verdict

NAME = "analysis_full"
HEADING = "## Analysis: rollouts per second, one battle's win probabilities, one decision's options"


def render(result: harness.Result) -> str:
    r, p = result.results, result.params
    k = p["k"]
    scale = 64 / k
    fork, replay = r["fork"], r["replay"]
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
    which = (f"the {fork['decisions']}-decision gen9randombattle heuristic-vs-maxdamage battle of seed {p['seed']}"
             if p.get("seed") is not None else
             f"a gen9randombattle heuristic-vs-maxdamage battle of {fork['decisions']} decisions")
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}`: {which} (`{r['battle']}`); heuristic rollouts on both sides, {p['concurrency']} in "
        f"flight on {p['processes']} simulator process(es). *Fork*: each rollout is a copy of its decision (the "
        "bridge's `snapshot`/`fork`, Showdown's `State.serializeBattle`/`deserializeBattle`); *replayed prefix*: "
        "each rollout's `start` request replays the recording's input up to the decision. Both play the same battles "
        f"(tested). Times are linear in K (rollouts are independent), so the K = 64 column is the K = {k} time "
        f"× {scale:g}.",
        "",
        harness.describe(result),
        "",
        *rows,
        "",
        f"Python CPU in the forked win-probability pass: {fork['pass_cpu']:.1f} s of {fork['pass_s']:.1f} s wall.",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=16)
    add_battle_arguments(parser)
    args = parser.parse_args(argv)
    recording = battle(args.decisions, args.seed)
    with harness.measure() as run:
        results: dict[str, Any] = {"battle": recording.id}
        for name in ("fork", "replay"):
            results[name] = asyncio.run(timed_pass(recording, args.k, args.processes, args.concurrency,
                                                   name == "fork"))
    harness.finish(NAME, argv, {"k": args.k, "processes": args.processes, "concurrency": args.concurrency,
                                "decisions": args.decisions, "seed": args.seed}, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
