"""Benchmark ``rescore``: decision points re-asked per second, by replaying recordings from their own choices.

    .venv/bin/python -m benchmarks.rescore --battles 20 --concurrency 1,8

Records ``--battles`` gen4 heuristic-vs-random battles, then rescores side p1 of all of them with the tiny offline
checkpoint (wolfeclick/llm/tiny.py; CPU) at each concurrency, and with ``random`` (the replay alone, no model) for
the floor. The 4B shape needs a GPU session (not measured here).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.rescore import Rescore, rescore_many
from wolfeclick.battle.schema import Recording

NAME = "rescore"
HEADING = "## Rescore: decision points re-asked per second"


async def record(battles: int, max_turns: int) -> list[Recording]:
    jobs = [BattleJob(make_policy("heuristic"), make_policy("random"), "gen4randombattle", 500 + i, max_turns)
            for i in range(battles)]
    return [recording async for _, recording in run_jobs(jobs, concurrency=4)]


def measure(recordings: list[Recording], spec: str, concurrency: int) -> tuple[float, int, float]:
    policy = make_policy(spec)
    started, cpu = time.perf_counter(), time.process_time()
    results = asyncio.run(rescore_many(recordings, policy, "p1", concurrency=concurrency))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    done = [r for r in results if isinstance(r, Rescore)]
    assert len(done) == len(recordings), [str(r) for r in results if not isinstance(r, Rescore)]
    decisions = sum(len(r.decisions) for r in done)
    batch = [d for r in done for d in r.decisions]
    return decisions / wall, decisions, cpu / max(1, len(batch))


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    table = ["| asked | recordings at once | decisions | decisions/s | CPU ms per decision |",
             "| --- | --- | --- | --- | --- |"]
    table += [f"| {row['asked']} | {row['concurrency']} | {row['decisions']} | {row['per_s']:.1f} | {row['cpu_ms']:.1f} |"
              for row in r["rows"]]
    return "\n".join([
        HEADING, "",
        f"`{result.command}`: {p['battles']} gen4 heuristic-vs-random battles (≤ {p['max_turns']} turns), side p1 "
        "re-asked at every decision by replaying each recording's own choices.",
        "", harness.describe(result),
        "", *table, "",
        "The replay alone is the floor (the simulator and both sides' views rebuilt); a checkpoint adds its scoring.",
        "The tiny model's byte-level tokenizer makes its prompts ~1,600 tokens, so its scoring is CPU-bound attention.",
        "The 4B shape on a GPU is not measured: no GPU session was lent to this work.",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=20)
    parser.add_argument("--max-turns", type=int, default=30)
    parser.add_argument("--concurrency", default="1,8")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from wolfeclick.llm.tiny import build_tiny_checkpoint  # torch: loaded to measure, not to render

    rows: list[dict[str, Any]] = []
    with harness.measure() as run:
        recordings = asyncio.run(record(args.battles, args.max_turns))
        tiny = build_tiny_checkpoint(Path(tempfile.mkdtemp()) / "tiny")
        for concurrency in levels:
            for label, spec in (("replay only (random asked)", "random"), ("tiny checkpoint, score mode", f"llm:{tiny}")):
                rate, decisions, cpu_each = measure(recordings, spec, concurrency)
                rows.append({"asked": label, "concurrency": concurrency, "decisions": decisions, "per_s": rate,
                             "cpu_ms": cpu_each * 1000})
                print(f"{label:30s} concurrency {concurrency}: {decisions} decisions, {rate:.1f}/s, "
                      f"{cpu_each * 1000:.1f} CPU ms each", flush=True)
    params = {"battles": args.battles, "max_turns": args.max_turns, "concurrency": levels}
    harness.finish(NAME, argv, params, {"rows": rows}, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
