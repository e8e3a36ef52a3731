"""Battle core, where the CPU goes per decision point.

``benchmarks.battles --profile N`` writes its results under this name, and this module renders them.

    .venv/bin/python -m benchmarks.battles_profile --profile 30 --profile-rounds 2 --baseline 02a6ff5 --warmup 5
    # = benchmarks.battles --profile 30 --profile-rounds 2 --baseline 02a6ff5 --warmup 5
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import battles, harness

NAME = "battles_profile"
HEADING = battles.PROFILE_HEADING


def render(result: harness.Result) -> str:
    return battles.render_profile(result)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--profile" not in argv:
        raise SystemExit("benchmarks.battles_profile: --profile N is required (it picks this kind of run)")
    return battles.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
