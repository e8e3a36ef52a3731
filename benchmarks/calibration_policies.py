"""Is each rollout policy's estimate calibrated? (issue 48, item 2): ``benchmarks.calibration --policies`` writes its
results under this name, and this module renders them.

    .venv/bin/python -m benchmarks.calibration_policies --held-out 5 --policies heuristic maxdamage random ...
    # = benchmarks.calibration --policies …
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import calibration, harness

NAME = "calibration_policies"
HEADING = "## Analysis: is each rollout policy's estimate calibrated? (issue 48, item 2)"


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    k, held_out, n = p["k"], p["held_out"], r["decisions"]
    rows = ["| rollout policy | Brier, K = 16 | Brier, K = " + str(k) + " | Brier, its own base rate | p1 scores "
            "(mean of the continuations) | largest gap between predicted and observed, bins of ≥ 10 |",
            "| --- | --- | --- | --- | --- | --- |"]
    rows += [f"| {row['spec']} | {row['brier_16']:.3f} | {row['brier']:.3f} | {row['brier_base']:.3f} | "
             f"{row['rate']:.2f} | {'–' if row['gap'] is None else format(row['gap'], '.2f')} |" for row in r["rows"]]
    bins = ["| bin (K = " + str(k) + ") | " + " | ".join(f"{row['spec']}: n · predicted → observed" for row in r["rows"])
            + " |", "| --- " * (len(r["rows"]) + 1) + "|"]
    for i in range(10):
        cells = [f"{c} · {m:.2f} → {o:.2f}" if c and m is not None and o is not None else "0"
                 for c, m, o in (row["bins"][i] for row in r["rows"])]
        bins.append(f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | " + " | ".join(cells) + " |")
    return (f"{HEADING}\n\n`{result.command}`: the {held_out} held-out {calibration.FORMAT} heuristic-vs-heuristic "
            f"battles of *Analysis: is the rollout estimate calibrated?* ({n} decisions). At each decision each "
            f"rollout policy's estimate (K = {k} rollouts of it from the true state; K = 16 is their first 16) is "
            f"judged against how the battle ends when that policy plays both sides on from there (rollout number "
            f"{k}, which shares no luck with the {k}): the outcome of a battle between the rollout policies "
            "themselves, one per decision, so the decisions are independent draws here. A policy's own base rate "
            f"is the mean of its continuations (fitted on the outcomes it is judged on: a floor, not a rival). "
            f"{calibration.NOTHING_ON_LOAD}\n\n{harness.describe(result)}\n\n" + "\n".join(rows) + "\n\n"
            + "\n".join(bins))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--policies" not in argv:
        raise SystemExit("benchmarks.calibration_policies: --policies SPEC … is required")
    return calibration.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
