"""No script, benchmark or devkit module puts a folder on ``sys.path`` (issue 66): a script needing only the package
runs as ``python scripts/NAME.py`` (the package is installed, editable), one that imports ``devkit``, ``scripts`` or
``benchmarks`` runs as ``python -m scripts.NAME`` (or ``python -m benchmarks.NAME``) from the checkout. The last ones
that did (scripts/bench_app.py, bench_public_load.py) moved into ``benchmarks/``; none may be added."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDIT = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*\+?=")


def test_no_script_edits_sys_path() -> None:
    edits = sorted(str(p.relative_to(ROOT)) for folder in ("scripts", "benchmarks", "devkit")
                   for p in (ROOT / folder).rglob("*.py") if EDIT.search(p.read_text(encoding="utf-8")))
    assert edits == [], f"sys.path edited in {edits}: run the script with python -m instead"
