"""App: key → painted frame in the browser, desktop and phone.

``benchmarks.app --viewer-only`` writes its results under this name, and this module renders them; run as
``benchmarks.app_viewer`` it adds ``--viewer-only`` itself.

    .venv/bin/python -m benchmarks.app_viewer --keys 100
    # = benchmarks.app --viewer-only --keys 100
"""

from __future__ import annotations

import sys
from typing import Sequence

from benchmarks import app, harness

NAME = "app_viewer"
HEADING = app.VIEWER_HEADING


def render(result: harness.Result) -> str:
    return app.render_viewer(result)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    return app.main(argv if "--viewer-only" in argv else ["--viewer-only", *argv])


if __name__ == "__main__":
    raise SystemExit(main())
