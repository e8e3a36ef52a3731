"""How long the value model takes to evaluate a whole battle (issue 48: goal ≤ 50 ms for a 30-decision battle).

    .venv/bin/python scripts/bench_value_model.py [--battles 10] [--repeats 20] [--doc]

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

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.benchdoc import write_section  # noqa: E402
from wolfeclick.analysis import value_model as vm  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.battle.store import load_recording  # noqa: E402
from wolfeclick.interop.sniff import read_any  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

HEADING = "## Analysis: the value model's whole-battle evaluation (issue 48, item 3)"
GOAL_MS = 50.0
FIRST_GOAL_S = 0.3
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
                                      text=True, cwd=ROOT).stdout) for _ in range(runs)]


async def played(count: int) -> list:  # type: ignore[type-arg]
    async with SimPool(2) as pool:
        return list(await asyncio.gather(*[play_battle(make_policy("heuristic"), make_policy("heuristic"),
                                                       format_id="gen9randombattle", seed=3000 + n,
                                                       process=pool.pick()) for n in range(count)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--cold", type=int, default=10, help="fresh processes timing the first evaluation")
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    sample = sorted((ROOT / "recordings").glob("gen9randombattle-*.json"))[0]
    cold = cold_first(sample, args.cold)
    fixtures = ROOT / "tests" / "data" / "interop"
    recordings = ([load_recording(p) for p in sorted((ROOT / "recordings").glob("*.json"))]
                  + [read_any(p.read_bytes(), p.name) for p in (fixtures / "showdown_replay.json",
                                                                fixtures / "showdown_hostile.log")]
                  + asyncio.run(played(args.battles)))
    started = time.perf_counter()
    model = vm.load_model()
    vm.estimate_battle(model, recordings[0])
    first_ms = (time.perf_counter() - started) * 1000
    lines, per_30 = [], []
    for recording in recordings:
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            vm.estimate_battle(model, recording)
            times.append((time.perf_counter() - t0) * 1000)
        median = statistics.median(times)
        per_30.append(median * 30 / len(recording.turns))
        lines.append((recording.id, recording.format, len(recording.turns), median, max(times)))
    end = os.getloadavg()[0]
    worst = max(per_30)
    table = "\n".join(f"| {rid} | {fmt} | {n} | {med:.2f} | {top:.2f} |" for rid, fmt, n, med, top in lines)
    cold_flag = f" --cold {args.cold}" if args.cold != 10 else ""
    firsts = sorted(c["first"] for c in cold)
    imports = sorted(c["import"] for c in cold)
    cold_text = (f"\n\n**The first evaluation, cold** (issue 62), in {len(cold)} fresh processes on `{sample.name}` "
                 f"({len(load_recording(sample).turns)} decisions): reading the weights, the generation's Pokédex "
                 f"and type chart, then every decision's features and the model took {statistics.median(firsts):.3f} "
                 f"s (median; slowest {firsts[-1]:.3f} s) against the goal of {FIRST_GOAL_S} s: "
                 f"**{'met' if firsts[-1] <= FIRST_GOAL_S else 'not met'}**. Importing the module before it (numpy, "
                 f"pydantic's schema, poke-env through `game.state`: what any reader of a recording imports anyway) "
                 f"took {statistics.median(imports):.2f} s (median). The first evaluation's CPU time (the "
                 f"process's user and system time, which the other work on the machine does not stretch as it "
                 f"stretches the wall clock): {statistics.median(c['first_cpu'] for c in cold):.3f} s median, "
                 f"{max(c['first_cpu'] for c in cold):.3f} s slowest.")
    text = (f"{HEADING}\n\n`.venv/bin/python scripts/bench_value_model.py --battles {args.battles} --repeats "
            f"{args.repeats}{cold_flag}{' --doc' if args.doc else ''}` on {platform.machine()} with {os.cpu_count()} cores, "
            f"load average {load:.1f} at the start and {end:.1f} at the end (a shared machine). "
            f"`estimate_battle` (every decision's features read from the recording, then the model) per battle, "
            f"median and slowest of {args.repeats} calls; the first call of the process, which also reads the "
            f"weights file ({vm.MODEL_PATH.stat().st_size / 1024:.1f} KiB) and the generation's Pokédex, took "
            f"{first_ms:.0f} ms.\n\n| battle | format | decisions | median ms | slowest ms |\n| --- | --- | --- | --- "
            f"| --- |\n{table}\n\nScaled to 30 decisions the slowest median is {worst:.2f} ms against the goal of "
            f"{GOAL_MS:.0f} ms: **{'met' if worst <= GOAL_MS else 'not met'}**.{cold_text}\n")
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
