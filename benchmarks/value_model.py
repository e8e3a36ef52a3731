"""How long the value model takes to evaluate a whole battle (issue 48: goal ≤ 50 ms for a 30-decision battle).

    .venv/bin/python -m benchmarks.value_model [--battles 10] [--repeats 20] [--cold 10]

Times ``wolfeclick.analysis.value_model.estimate_battle`` — the features of every decision read from the recording
and the model evaluated on them, what the viewer does when a replay opens — on the committed sample recordings, the
imported public-log fixtures and ``--battles`` freshly played gen9randombattle heuristic-vs-heuristic battles: the
first call in this process (it reads the weights file and the generation's Pokédex) and then the median of
``--repeats`` calls per battle.

The first evaluation is also measured cold, in ``--cold`` fresh Python processes (issue 62: goal ≤ 0.3 s): the
module imported and a recording loaded, then the clock runs from reading the weights through the first whole-battle
estimate (``default_model`` + ``estimate_battle``), as the app's first replay pays it; the import is timed apart.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from devkit.samples import SAMPLES
from wolfeclick.analysis import value_model as vm
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import load_recording
from wolfeclick.interop.sniff import read_any
from wolfeclick.sim.process import SimPool

NAME = "value_model"
HEADING = "## Analysis: the value model's whole-battle evaluation (issue 48, item 3)"
GOAL_MS = 50.0
FIRST_GOAL_S = 0.3
COLD_SAMPLE = SAMPLES[2]
"""gen9randombattle-s1-heuristic-vs-maxdamage: the recording the cold processes evaluate."""
COLD = """
import json, sys, time
started = time.perf_counter()
from wolfeclick.analysis import value_model as vm
from wolfeclick.battle.store import load_recording
imported = time.perf_counter()
recording = load_recording(sys.argv[1])
begin, cpu = time.perf_counter(), time.process_time()
vm.estimate_battle(vm.default_model(), recording)
print(json.dumps({"import": imported - started, "first": time.perf_counter() - begin,
                  "first_cpu": time.process_time() - cpu}))
"""
"""One fresh process: the import, then the first evaluation (weights, Pokédex, features, model) of a recording."""


def cold_first(path: Path, runs: int) -> list[dict[str, float]]:
    """``runs`` fresh processes' import and first-evaluation times, in seconds."""
    return [json.loads(subprocess.run([sys.executable, "-c", COLD, str(path)], check=True, capture_output=True,
                                      text=True, cwd=harness.ROOT).stdout) for _ in range(runs)]


async def played(count: int) -> list[Recording]:
    async with SimPool(2) as pool:
        return list(await asyncio.gather(*[play_battle(make_policy("heuristic"), make_policy("heuristic"),
                                                       format_id="gen9randombattle", seed=3000 + n,
                                                       process=pool.pick()) for n in range(count)]))


def measure(battles: int, repeats: int, cold_runs: int) -> dict[str, Any]:
    """The cold first evaluations, the first in this process, then median and slowest of ``repeats`` per battle."""
    cold = cold_first(COLD_SAMPLE, cold_runs)
    fixtures = harness.ROOT / "tests" / "data" / "interop"
    recordings = ([load_recording(p) for p in SAMPLES]
                  + [read_any(p.read_bytes(), p.name) for p in (fixtures / "showdown_replay.json",
                                                                fixtures / "showdown_hostile.log")]
                  + asyncio.run(played(battles)))
    started = time.perf_counter()
    model = vm.load_model()
    vm.estimate_battle(model, recordings[0])
    first_ms = (time.perf_counter() - started) * 1000
    rows = []
    for recording in recordings:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            vm.estimate_battle(model, recording)
            times.append((time.perf_counter() - t0) * 1000)
        rows.append({"battle": recording.id, "format": recording.format, "decisions": len(recording.turns),
                     "median_ms": round(statistics.median(times), 4), "slowest_ms": round(max(times), 4)})
    return {"first_ms": round(first_ms, 3), "weights_kib": round(vm.MODEL_PATH.stat().st_size / 1024, 2),
            "rows": rows, "cold": {"sample": COLD_SAMPLE.name, "decisions": len(load_recording(COLD_SAMPLE).turns),
                                   "runs": cold}}


def render(result: harness.Result) -> str:
    r, p = result.results, result.params
    rows, cold = r["rows"], r["cold"]
    worst = max(row["median_ms"] * 30 / row["decisions"] for row in rows)
    lines = [
        HEADING,
        "",
        f"`{result.command}`. `estimate_battle` (every decision's features read from the recording, then the model) "
        f"per battle, median and slowest of {p['repeats']} calls; the first call of the process, which also reads "
        f"the weights file ({r['weights_kib']:.1f} KiB) and the generation's Pokédex, took {r['first_ms']:.0f} ms.",
        "",
        harness.describe(result),
        "",
        "| battle | format | decisions | median ms | slowest ms |",
        "| --- | --- | --- | --- | --- |",
        *(f"| {row['battle']} | {row['format']} | {row['decisions']} | {row['median_ms']:.2f} "
          f"| {row['slowest_ms']:.2f} |" for row in rows),
        "",
        f"Scaled to 30 decisions the slowest median is {worst:.2f} ms against the goal of {GOAL_MS:.0f} ms: "
        f"**{'met' if worst <= GOAL_MS else 'not met'}**.",
    ]
    runs = cold["runs"]
    if runs:
        firsts = sorted(c["first"] for c in runs)
        lines += [
            "",
            f"**The first evaluation, cold** (issue 62), in {len(runs)} fresh processes on `{cold['sample']}` "
            f"({cold['decisions']} decisions): reading the weights, the generation's Pokédex and type chart, then "
            f"every decision's features and the model took {statistics.median(firsts):.3f} s (median; slowest "
            f"{firsts[-1]:.3f} s) against the goal of {FIRST_GOAL_S} s: "
            f"**{'met' if firsts[-1] <= FIRST_GOAL_S else 'not met'}**. Importing the module before it (numpy, "
            "pydantic's schema, poke-env through `game.state`: what any reader of a recording imports anyway) took "
            f"{statistics.median(c['import'] for c in runs):.2f} s (median). The first evaluation's CPU time (the "
            "process's user and system time, which the other work on the machine does not stretch as it stretches "
            f"the wall clock): {statistics.median(c['first_cpu'] for c in runs):.3f} s median, "
            f"{max(c['first_cpu'] for c in runs):.3f} s slowest.",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=10, help="heuristic-vs-heuristic battles played to time")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--cold", type=int, default=10, help="fresh processes timing the first evaluation")
    args = parser.parse_args(argv)
    with harness.measure() as run:
        results = measure(args.battles, args.repeats, args.cold)
    harness.finish(NAME, argv, {"battles": args.battles, "repeats": args.repeats, "cold": args.cold}, results, run,
                   args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
