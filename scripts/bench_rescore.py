"""Benchmark ``rescore``: decision points re-asked per second, by replaying recordings from their own choices.

    .venv/bin/python scripts/bench_rescore.py --battles 20 --concurrency 1,8 [--doc]

Records ``--battles`` gen4 heuristic-vs-random battles, then rescores side p1 of all of them with the tiny offline
checkpoint (wolfeclick/llm/tiny.py; CPU) at each concurrency, and with ``random`` (the replay alone, no model) for
the floor. ``--doc`` writes the table into docs/benchmarks.md. The 4B shape needs a GPU session (not measured here).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchdoc import write_section  # noqa: E402  (beside this script)

from wolfeclick.battle.batch import BattleJob, run_jobs  # noqa: E402
from wolfeclick.battle.rescore import Rescore, rescore_many  # noqa: E402
from wolfeclick.battle.specs import make_policy  # noqa: E402
from wolfeclick.llm.tiny import build_tiny_checkpoint  # noqa: E402

HEADING = "## Rescore: decision points re-asked per second"


async def record(battles: int, max_turns: int) -> list:
    jobs = [BattleJob(make_policy("heuristic"), make_policy("random"), "gen4randombattle", 500 + i, max_turns)
            for i in range(battles)]
    return [recording async for _, recording in run_jobs(jobs, concurrency=4)]


def measure(recordings: list, spec: str, concurrency: int) -> tuple[float, int, float]:
    policy = make_policy(spec)
    started, cpu = time.perf_counter(), time.process_time()
    results = asyncio.run(rescore_many(recordings, policy, "p1", concurrency=concurrency))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    done = [r for r in results if isinstance(r, Rescore)]
    assert len(done) == len(recordings), [str(r) for r in results if not isinstance(r, Rescore)]
    decisions = sum(len(r.decisions) for r in done)
    batch = [d for r in done for d in r.decisions]
    return decisions / wall, decisions, cpu / max(1, len(batch))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=20)
    parser.add_argument("--max-turns", type=int, default=30)
    parser.add_argument("--concurrency", default="1,8")
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    recordings = asyncio.run(record(args.battles, args.max_turns))
    tiny = build_tiny_checkpoint(Path(tempfile.mkdtemp()) / "tiny")
    rows = []
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        for label, spec in (("replay only (random asked)", "random"), ("tiny checkpoint, score mode", f"llm:{tiny}")):
            rate, decisions, cpu_each = measure(recordings, spec, concurrency)
            rows.append((label, concurrency, decisions, rate, cpu_each * 1000))
            print(f"{label:30s} concurrency {concurrency}: {decisions} decisions, {rate:.1f}/s, "
                  f"{cpu_each * 1000:.1f} CPU ms each", flush=True)
    table = ["| asked | recordings at once | decisions | decisions/s | CPU ms per decision |", "| --- | --- | --- | --- | --- |"]
    table += [f"| {label} | {c} | {n} | {rate:.1f} | {cpu:.1f} |" for label, c, n, rate, cpu in rows]
    text = "\n".join([
        HEADING, "",
        f"`scripts/bench_rescore.py --battles {args.battles} --concurrency {args.concurrency} --doc` on "
        f"{platform.machine()} ({os.cpu_count()} cores), {args.battles} gen4 heuristic-vs-random battles "
        f"(≤ {args.max_turns} turns), side p1 re-asked at every decision by replaying each recording's own choices.",
        "", *table, "",
        "The replay alone is the floor (the simulator and both sides' views rebuilt); a checkpoint adds its scoring.",
        f"Load average at the end: {os.getloadavg()[0]:.1f} (other work shares the 2 cores; the tiny model's "
        "byte-level tokenizer makes its prompts ~1,600 tokens, so its scoring is CPU-bound attention).",
        "The 4B shape on a GPU is not measured: no GPU session was lent to this work.",
    ])
    if args.doc:
        write_section(HEADING, text)
    print(text)


if __name__ == "__main__":
    main()
