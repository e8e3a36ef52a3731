"""Simulate the pairing verdicts: does "about N more pairs" keep its promise, and how often does a verdict claim
what is not so? Results go in docs/tournaments.md (section "How often the verdicts are wrong").

Pair outcomes are drawn as two independent games of the logistic model (A wins each with probability p, no
ties), seeded numpy, and every verdict is the one the tables print (`verdicts.pairing_verdict` on
`stats.paired_summary`). Four measurements:

1. promised vs simulated power: `pairs_for_power` fed the true pair-outcome distribution gives N and the power
   it promises; the share of runs of N pairs whose interval leaves out ½ is the simulated power;
2. "as used": after n0 pairs the verdict says "about M more pairs"; the share of runs that, after M more, are
   separated (the estimate assumes the edge seen so far is the truth, which after a few pairs it is not);
3. false claims at p = ½: "X is stronger" read once at n pairs, and read after every pair up to n (repeated
   looks: the share of runs that say "stronger" at some point);
4. false claims at the equivalence margin (+δ Elo): "no detectable difference" read once at n pairs.

    .venv/bin/python scripts/sim_verdicts.py            # full: about 2 minutes of one core
    .venv/bin/python scripts/sim_verdicts.py --quick    # fewer runs: about 25 seconds of one core
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from wolfeclick.arena.sprt import elo_to_score
from wolfeclick.arena.stats import PAIR_OUTCOMES, paired_summary
from wolfeclick.arena.verdicts import EQUIVALENCE_ELO, equivalent, pairing_verdict, pairs_for_power

P_GRID = (0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def pentanomial(p: float) -> np.ndarray:
    """Probabilities of the pair scores 0, ½, 1, 1½, 2 for A from two independent games won with chance p."""
    game = np.array([1.0 - p, 0.0, p])
    return np.convolve(game, game)


def draw(rng: np.random.Generator, p: float, runs: int, pairs: int) -> np.ndarray:
    """Pair scores (0..2), shape (runs, pairs)."""
    return np.array(PAIR_OUTCOMES)[rng.choice(5, size=(runs, pairs), p=pentanomial(p))]


def separated(scores: np.ndarray) -> bool:
    return paired_summary(list(scores)).ci_low > 0.5


def se(rate: float, runs: int) -> float:
    return math.sqrt(max(rate * (1 - rate), 1e-12) / runs)


def promised_power(rng: np.random.Generator, runs: int) -> list[str]:
    lines = ["| p | Elo | N (pairs) | promised power | simulated power (± 1 s.e.) | difference |", "|---|---|---|---|---|---|"]
    for p in P_GRID:
        found = pairs_for_power(pentanomial(p))
        assert found is not None
        n, promised = found
        got = float(np.mean([separated(row) for row in draw(rng, p, runs, n)]))
        elo = 400 * math.log10(p / (1 - p))
        lines.append(f"| {p:.2f} | +{elo:.0f} | {n} | {promised:.3f} | {got:.3f} ± {se(got, runs):.3f} | "
                     f"{100 * (got - promised):+.1f} points |")
    return lines


def as_used(rng: np.random.Generator, runs: int) -> list[str]:
    lines = ["| p | after n0 pairs | runs given an estimate | separated after the M more pairs promised |",
             "|---|---|---|---|"]
    for p in (0.6, 0.75, 0.9):
        for n0 in (2, 5, 10):
            hits, given = 0, 0
            for _ in range(runs):
                first = draw(rng, p, 1, n0)[0]
                verdict = pairing_verdict("a", "b", paired_summary(list(first)))
                if verdict.kind != "not_separable" or verdict.more_pairs is None or verdict.favoured != "a":
                    continue
                given += 1
                hits += separated(np.concatenate([first, draw(rng, p, 1, verdict.more_pairs)[0]]))
            rate = hits / given if given else float("nan")
            lines.append(f"| {p:.2f} | {n0} | {given} of {runs} | {rate:.3f} |")
    return lines


def claim(scores: np.ndarray) -> str:
    """The verdict's kind as the tables print it (without the further-pairs estimate, which does not change it)."""
    return pairing_verdict("a", "b", paired_summary(list(scores)), estimate=False).kind


def false_claims(rng: np.random.Generator, runs: int) -> list[str]:
    lines = ["| truth | read | pairs | claim | share of runs (± 1 s.e.) |", "|---|---|---|---|---|"]

    def row(truth: str, read: str, pairs: str, said: str, rate: float) -> None:
        lines.append(f"| {truth} | {read} | {pairs} | {said} | {rate:.3f} ± {se(rate, runs):.3f} |")

    for n in (10, 30, 100):
        rate = float(np.mean([claim(r) == "stronger" for r in draw(rng, 0.5, runs, n)]))
        row("p = 0.5 (0 Elo)", "once", str(n), '"X is stronger"', rate)
    looks = 100
    ever = [any(claim(r[:k]) == "stronger" for k in range(2, looks + 1)) for r in draw(rng, 0.5, runs, looks)]
    row("p = 0.5 (0 Elo)", "after every pair", f"2..{looks}", '"X is stronger" at some point', float(np.mean(ever)))
    margin = elo_to_score(EQUIVALENCE_ELO)
    for n in (100, 400, 1000):
        scores = draw(rng, margin, runs, n)
        rate = float(np.mean([claim(r) == "no_difference" for r in scores]))
        row(f"+{EQUIVALENCE_ELO:g} Elo (the margin)", "once", str(n), '"no detectable difference"', rate)
        raw = float(np.mean([equivalent(paired_summary(list(r))) for r in scores]))
        row(f"+{EQUIVALENCE_ELO:g} Elo (the margin)", "once", str(n), "equivalence test passes (shown or not)",
            raw)
    for n in (400, 1000):
        rate = float(np.mean([claim(r) == "no_difference" for r in draw(rng, 0.5, runs, n)]))
        row("p = 0.5 (0 Elo; a true claim)", "once", str(n), '"no detectable difference"', rate)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer simulated runs (about 25 seconds of one core)")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args(argv)
    runs = 400 if args.quick else 2000
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"## promised vs simulated power ({runs} runs per p)\n")
    print("\n".join(promised_power(rng, runs)))
    print(f"\n## the estimate as used ({runs // 8} runs per row)\n")
    print("\n".join(as_used(rng, runs // 8)))
    print(f"\n## false claims ({runs // 4} runs per row)\n")
    print("\n".join(false_claims(rng, runs // 4)))
    print(f"\n({time.perf_counter() - started:.0f} s, seed {args.seed})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
