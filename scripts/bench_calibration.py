"""Is the rollout estimate calibrated? (issue 48, item 4)

    .venv/bin/python scripts/bench_calibration.py [--train 40] [--held-out 5] [--doc]

Plays seeded gen9randombattle heuristic-vs-heuristic battles: ``--train`` of them only to fit the baselines, and
``--held-out`` others whose every decision gets K = 64 heuristic rollouts (the first 16 of them are the K = 16
estimate: rollout *n* is the same battle either way). Each decision's estimate of p1's score is judged against how
the battle really ended (a win 1, a loss 0, a tie ½): a reliability table of 10 bins and the Brier score, beside
two baselines fitted on the training battles — the base rate (p1's score there) and a logistic fit on the
remaining-HP difference (p1's mean team HP less p2's, from each decision's snapshot).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.benchdoc import write_section  # noqa: E402
from wolfeclick.analysis.core import _Player, _Task  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.battle.specs import make_policy  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

HEADING = "## Analysis: is the rollout estimate calibrated? (issue 48, item 4)"
FORMAT = "gen9randombattle"


def score(winner: str | None) -> float:
    return 1.0 if winner == "p1" else 0.0 if winner == "p2" else 0.5


def hp_gap(turn) -> float:  # noqa: ANN001
    """p1's mean team HP less p2's, in [-1, 1]."""
    return (turn.snapshot["p1"].team_hp - turn.snapshot["p2"].team_hp) / 100


def fit_logistic(xs: list[float], ys: list[float], steps: int = 50) -> tuple[float, float]:
    """Maximum-likelihood a, b of p = 1 / (1 + exp(-(a + b x))) by Newton's method (ys may be ½ for ties)."""
    a = b = 0.0
    for _ in range(steps):
        ga = gb = haa = hab = hbb = 0.0
        for x, y in zip(xs, ys):
            p = 1 / (1 + math.exp(-(a + b * x)))
            w = p * (1 - p)
            ga += y - p
            gb += (y - p) * x
            haa += w
            hab += w * x
            hbb += w * x * x
        det = haa * hbb - hab * hab
        if det <= 1e-12:
            break
        a += (hbb * ga - hab * gb) / det
        b += (haa * gb - hab * ga) / det
    return a, b


def brier(ps: list[float], ys: list[float]) -> float:
    return sum((p - y) ** 2 for p, y in zip(ps, ys)) / len(ps)


def reliability(ps: list[float], ys: list[float]) -> list[tuple[int, float, float]]:
    """Ten equal-width bins of the prediction: (count, mean predicted, mean outcome)."""
    bins: list[list[tuple[float, float]]] = [[] for _ in range(10)]
    for p, y in zip(ps, ys):
        bins[min(9, int(p * 10))].append((p, y))
    return [(len(b), sum(p for p, _ in b) / len(b) if b else math.nan, sum(y for _, y in b) / len(b) if b else math.nan)
            for b in bins]


async def battles(first: int, count: int, pool: SimPool) -> list:  # type: ignore[type-arg]
    return list(await asyncio.gather(*[play_battle(make_policy("heuristic"), make_policy("heuristic"),
                                                   format_id=FORMAT, seed=first + n, process=pool.pick())
                                       for n in range(count)]))


async def run(train: int, held_out: int, k: int) -> str:
    load = os.getloadavg()[0]
    policy = make_policy("heuristic")
    async with SimPool(2) as pool:
        fitted = await battles(1000, train, pool)
        xs = [hp_gap(t) for r in fitted for t in r.turns]
        ys = [score(r.result.winner) for r in fitted for t in r.turns]
        a, b = fit_logistic(xs, ys)
        base = sum(score(r.result.winner) for r in fitted) / len(fitted)
        judged = await battles(2000, held_out, pool)
        rows: list[tuple[float, float, float, float]] = []  # K=16, K=64, HP logistic, outcome
        for recording in judged:
            player = _Player(recording, policy, recording.turns, 1, pool, 16, lambda n: None, None, True, True)
            outcomes = await asyncio.gather(*[player.many(_Task(t.index), range(k)) for t in recording.turns])
            await player.close()
            y = score(recording.result.winner)
            for turn, found in zip(recording.turns, outcomes):
                winners = [o.winner for o in found]
                rows.append((sum(map(score, winners[:16])) / 16, sum(map(score, winners)) / len(winners),
                             1 / (1 + math.exp(-(a + b * hp_gap(turn)))), y))
            print(f"{recording.id}: {len(recording.turns)} decisions, load {os.getloadavg()[0]:.1f}", flush=True)
    ys = [r[3] for r in rows]
    n = len(rows)
    scores = [("rollouts, K = 16", [r[0] for r in rows]), (f"rollouts, K = {k}", [r[1] for r in rows]),
              (f"logistic on the HP gap (a = {a:.2f}, b = {b:.2f})", [r[2] for r in rows]),
              (f"base rate ({base:.2f})", [base] * n)]
    table = ["| prediction | Brier score |", "| --- | --- |"] + [f"| {name} | {brier(ps, ys):.3f} |"
                                                                 for name, ps in scores]
    bins = ["", ""]
    rel = [reliability(ps, ys) for _, ps in scores[:3]]
    for i in range(10):
        cells = [f"{c} | {m:.2f} | {o:.2f}" if c else "0 | – | –" for c, m, o in (r[i] for r in rel)]
        bins.append(f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | " + " | ".join(cells) + " |")
    bins[0] = (f"| bin | K = 16: n | predicted | observed | K = {k}: n | predicted | observed | HP logistic: n | "
               "predicted | observed |")
    bins[1] = "| --- " * 10 + "|"
    end = os.getloadavg()[0]
    return (f"{HEADING}\n\n`.venv/bin/python scripts/bench_calibration.py --train {train} --held-out {held_out} "
            f"--doc`: {train} seeded {FORMAT} heuristic-vs-heuristic battles fit the baselines ({len(xs)} "
            f"decisions); {held_out} other battles ({n} decisions) are judged: at each decision, heuristic rollouts "
            f"from the true state (K = {k}; K = 16 is their first 16) against how the battle ended. Decisions of "
            f"one battle share its ending, so the {n} are far from independent: read the table as a first look, "
            f"not a verdict. Load average {load:.1f} at the start and {end:.1f} at the end (a shared, busy "
            "machine; nothing here depends on the load).\n\n" + "\n".join(table) + "\n\n" + "\n".join(bins) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=40)
    parser.add_argument("--held-out", type=int, default=5)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    text = asyncio.run(run(args.train, args.held_out, args.k))
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
