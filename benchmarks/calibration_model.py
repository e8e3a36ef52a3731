"""The value model on the calibration bench's battles (issue 62): ``benchmarks.calibration --model-only`` writes its
results under this name, and this module renders them.

    .venv/bin/python -m benchmarks.calibration_model [--train 40] [--model-held-out 1000]
    # = benchmarks.calibration --model-only …
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import calibration, harness

NAME = "calibration_model"
HEADING = "## Analysis: the value model on the calibration bench's 1000 battles (issue 62)"


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    return (f"{HEADING}\n\n`{result.command}`: the value-model part of *Analysis: is the rollout estimate "
            f"calibrated?* again, for the shipped model (issue 62's: {r['recipe']}, temperature {r['temperature']}), "
            f"the rollouts left out. {p['train']} seeded {calibration.FORMAT} heuristic-vs-heuristic battles (seeds "
            f"1000 on) fit the HP logistic (a = {r['a']:.2f}, b = {r['b']:.2f}: its input is the snapshots' HP gap) and "
            f"the base rate. {calibration.NOTHING_ON_LOAD}\n\n{harness.describe(result)}\n\n"
            + calibration.model_text(r["model"]))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return calibration.main(["--model-only", *argv])


if __name__ == "__main__":
    raise SystemExit(main())
