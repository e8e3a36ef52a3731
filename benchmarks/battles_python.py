"""Battle core, the Python side alone, per turn.

``benchmarks.battles --python N`` writes its results under this name, and this module renders them.

    .venv/bin/python -m benchmarks.battles_python --python 5 --baseline df479d4 --python-instructions
    # = benchmarks.battles --python 5 --baseline df479d4 --python-instructions
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import battles, harness

NAME = "battles_python"
HEADING = battles.PYTHON_HEADING


def render(result: harness.Result) -> str:
    return battles.render_python(result)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--python" not in argv:
        raise SystemExit("benchmarks.battles_python: --python N is required (it picks this kind of run)")
    return battles.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
