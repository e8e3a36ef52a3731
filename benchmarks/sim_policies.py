"""How strong are the simulator's own rollout policies (``sim:``) beside the Python baselines? (issue 48, item 2)

    .venv/bin/python -m benchmarks.sim_policies [--battles 100] [--python 40]

Plays seeded gen9randombattle battles from their first decision, each pairing both ways round (half the battles
with each policy as p1): the ``sim:`` policies against each other inside the simulator (the bridge's ``playout``
with one policy per side), and the Python baselines against each other through the ordinary runner, and reports
each pairing's score rate with its 95% Wilson interval and the battles per second.
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.arena.stats import wilson_interval
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.protocol import derive_seed, start_lines

NAME = "sim_policies"
HEADING = "## Simulator rollout policies (sim:) against each other and beside the Python baselines"
PAIRS = (("heuristic", "random"), ("maxdamage", "random"), ("heuristic", "maxdamage"))
FORMAT = "gen9randombattle"


def _score(winner: str | None, mine: str) -> float:
    return 1.0 if winner == mine else 0.5 if winner is None else 0.0


async def sim_pair(pool: SimPool, a: str, b: str, battles: int) -> tuple[float, float]:
    """``a``'s score against ``b`` over ``battles`` simulator-side battles (seats alternate), and the seconds."""
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
        return _score(reply["winner"], "p1" if n % 2 == 0 else "p2")

    score = sum(await asyncio.gather(*[one(n) for n in range(battles)]))
    return score, time.perf_counter() - started


async def python_pair(a: str, b: str, battles: int) -> tuple[float, float]:
    """``a``'s score against ``b`` over ``battles`` battles through the runner (seats alternate), and the seconds."""
    started = time.perf_counter()
    async with SimPool(2) as pool:
        async def one(n: int) -> float:
            first, second = (a, b) if n % 2 == 0 else (b, a)
            recording = await play_battle(make_policy(first), make_policy(second), format_id=FORMAT, seed=n,
                                          process=pool.pick())
            return _score(recording.result.winner, "p1" if n % 2 == 0 else "p2")

        score = sum(await asyncio.gather(*[one(n) for n in range(battles)]))
    return score, time.perf_counter() - started


async def measure(battles: int, python: int) -> dict[str, Any]:
    """One row a pairing: the sim: pairings on one pool of two simulators, then the Python ones (if ``python``)."""
    rows: list[dict[str, Any]] = []
    async with SimPool(2) as pool:
        for a, b in PAIRS:
            score, seconds = await sim_pair(pool, a, b, battles)
            rows.append({"side": "sim", "first": a, "second": b, "battles": battles, "score": score,
                         "seconds": round(seconds, 3)})
    for a, b in PAIRS:
        if python:
            score, seconds = await python_pair(a, b, python)
            rows.append({"side": "python", "first": a, "second": b, "battles": python, "score": score,
                         "seconds": round(seconds, 3)})
    return {"rows": rows}


def _label(row: dict[str, Any]) -> str:
    if row["side"] == "sim":
        return f"sim:{row['first']} v sim:{row['second']}"
    return f"{row['first']} v {row['second']} (Python)"


def _rate(rows: list[dict[str, Any]]) -> float:
    return sum(r["battles"] for r in rows) / sum(r["seconds"] for r in rows)


def render(result: harness.Result) -> str:
    rows = result.results["rows"]
    lines = [
        HEADING,
        "",
        f"`{result.command}`, two simulator processes: seeded {FORMAT} battles from their first decision, seats "
        "alternating. The sim: rows play whole battles inside the simulator (`playout`); the Python rows through the "
        "runner with poke-env. The battles/s are only comparable within a run.",
        "",
        harness.describe(result),
        "",
        "| pairing (first scores) | battles | score rate [95%] | battles/s |",
        "| --- | --- | --- | --- |",
    ]
    for row in rows:
        low, high = wilson_interval(row["score"], row["battles"])
        lines.append(f"| {_label(row)} | {row['battles']} | {row['score'] / row['battles']:.2f} "
                     f"[{low:.2f}, {high:.2f}] | {row['battles'] / row['seconds']:.1f} |")
    sim = [r for r in rows if r["side"] == "sim"]
    python = [r for r in rows if r["side"] == "python"]
    if python:
        lines += [
            "",
            "So the simulator-side policies order as the Python ones do (heuristic over maxdamage over random, by "
            f"similar margins within these intervals), and whole sim: battles ran about {_rate(sim) / _rate(python):.0f}"
            "× as many per second as Python ones in the same run. They are not the same players: sim:heuristic reads "
            "the true state and is simpler than poke-env's SimpleHeuristicsPlayer.",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=100, help="battles a sim: pairing")
    parser.add_argument("--python", type=int, default=40, help="battles a Python pairing (0: none)")
    args = parser.parse_args(argv)
    with harness.measure() as run:
        results = asyncio.run(measure(args.battles, args.python))
    harness.finish(NAME, argv, {"battles": args.battles, "python": args.python, "format": FORMAT}, results, run,
                   args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
