"""App: cold start and idle memory.

``benchmarks.app --start-only`` writes its results under this name, and this module renders them; run as
``benchmarks.app_start`` it adds ``--start-only`` itself.

    .venv/bin/python -m benchmarks.app_start --starts 7 --python /work/lean/venv/bin/python
    # = benchmarks.app --start-only --starts 7 --python /work/lean/venv/bin/python
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import app, harness

NAME = "app_start"
HEADING = app.START_HEADING


def render(result: harness.Result) -> str:
    return app.render_start(result)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return app.main(argv if "--start-only" in argv else ["--start-only", *argv])


if __name__ == "__main__":
    raise SystemExit(main())
