"""Battle core, WolfeClick and stock alternating.

``benchmarks.battles --alternate N`` writes its results under this name, and this module renders them.

    .venv/bin/python -m benchmarks.battles_alternate --alternate 5 --battles 100 --concurrency 4 16 --warmup 5
    # = benchmarks.battles --alternate 5 --battles 100 --concurrency 4 16 --warmup 5
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import battles, harness

NAME = "battles_alternate"
HEADING = battles.ALTERNATE_HEADING


def render(result: harness.Result) -> str:
    return battles.render_alternate(result)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--alternate" not in argv:
        raise SystemExit("benchmarks.battles_alternate: --alternate N is required (it picks this kind of run)")
    return battles.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
