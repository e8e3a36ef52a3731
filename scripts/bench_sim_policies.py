"""How strong are the simulator's own rollout policies (``sim:``) beside the Python baselines? (issue 48, item 2)

    .venv/bin/python scripts/bench_sim_policies.py [--battles 100] [--python 40] [--doc]

Plays seeded gen9randombattle battles from their first decision, each pairing both ways round (half the battles
with each policy as p1): the ``sim:`` policies against each other inside the simulator (the bridge's ``playout``
with one policy per side), and the Python baselines against each other through the ordinary runner, and reports
each pairing's score rate with its 95% Wilson interval and the battles per second.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.benchdoc import machine_busy, other_work, other_work_note, write_section  # noqa: E402
from wolfeclick.arena.stats import wilson_interval  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402
from wolfeclick.sim.protocol import derive_seed, start_lines  # noqa: E402

HEADING = "## Simulator rollout policies (sim:) against each other and beside the Python baselines"
PAIRS = (("heuristic", "random"), ("maxdamage", "random"), ("heuristic", "maxdamage"))
FORMAT = "gen9randombattle"


async def sim_pair(pool: SimPool, a: str, b: str, battles: int) -> tuple[float, float]:
    """``a``'s score against ``b`` over ``battles`` simulator-side battles (seats alternate), and the seconds."""
    score = 0.0
    started = time.perf_counter()

    async def one(n: int) -> float:
        process = pool.pick()
        key = f"strength-{a}-{b}-{n}"
        await process.call("start", battle=key, format=FORMAT, lines=start_lines(FORMAT, n, {"p1": "A", "p2": "B"}))
        await process.call("snapshot", battle=key, snapshot=key)
        await process.call("close", battle=key)
        seats = {"p1": a, "p2": b} if n % 2 == 0 else {"p1": b, "p2": a}
        reply = await process.call("playout", snapshot=key, lines=[], policy=seats, seed=derive_seed(n, "strength"),
                                   maxTurns=1000, first={})
        await process.call("forget", snapshot=key)
        mine = "p1" if n % 2 == 0 else "p2"
        return 1.0 if reply["winner"] == mine else 0.5 if reply["winner"] is None else 0.0

    for result in await asyncio.gather(*[one(n) for n in range(battles)]):
        score += result
    return score, time.perf_counter() - started


async def python_pair(a: str, b: str, battles: int) -> tuple[float, float]:
    score = 0.0
    started = time.perf_counter()
    async with SimPool(2) as pool:
        async def one(n: int) -> float:
            first, second = (a, b) if n % 2 == 0 else (b, a)
            recording = await play_battle(make_policy(first), make_policy(second), format_id=FORMAT, seed=n,
                                          process=pool.pick())
            mine = "p1" if n % 2 == 0 else "p2"
            winner = recording.result.winner
            return 1.0 if winner == mine else 0.5 if winner is None else 0.0

        for result in await asyncio.gather(*[one(n) for n in range(battles)]):
            score += result
    return score, time.perf_counter() - started


def row(label: str, score: float, n: int, seconds: float) -> str:
    low, high = wilson_interval(score, n)
    return f"| {label} | {n} | {score / n:.2f} [{low:.2f}, {high:.2f}] | {n / seconds:.1f} |"


def children_cpu() -> float:
    """CPU seconds of this process's reaped children (the simulators, once their pools have closed)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def run(battles: int, python: int) -> str:
    load = open("/proc/loadavg").read().split()[0]
    busy0, own0, children0, started = machine_busy(), time.process_time(), children_cpu(), time.perf_counter()
    rows = ["| pairing (first scores) | battles | score rate [95%] | battles/s |", "| --- | --- | --- | --- |"]
    async with SimPool(2) as pool:
        for a, b in PAIRS:
            score, seconds = await sim_pair(pool, a, b, battles)
            rows.append(row(f"sim:{a} v sim:{b}", score, battles, seconds))
    for a, b in PAIRS:
        if python:
            score, seconds = await python_pair(a, b, python)
            rows.append(row(f"{a} v {b} (Python)", score, python, seconds))
    end, other = other_work(busy0, own0, children_cpu() - children0, started)
    return (f"{HEADING}\n\n`.venv/bin/python scripts/bench_sim_policies.py --battles {battles} --python {python} "
            f"--doc` on {os.cpu_count()} cores, two simulator processes: seeded {FORMAT} battles from their first "
            "decision, seats alternating. The sim: rows play whole battles inside the simulator (`playout`); the "
            "Python rows through the runner with poke-env.\n\n" + "\n".join(rows)
            + f"\n\n{other_work_note((load, end), other)}. The battles/s are only comparable within a run.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=100)
    parser.add_argument("--python", type=int, default=40)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    text = asyncio.run(run(args.battles, args.python))
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
