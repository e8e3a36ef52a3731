"""No script, benchmark or devkit module puts a folder on ``sys.path`` (issue 66): a script needing only the package
runs as ``python scripts/NAME.py`` (the package is installed, editable), one that imports ``devkit``, ``scripts`` or
``benchmarks`` runs as ``python -m scripts.NAME`` from the checkout. The scripts still to convert are named here, so
that the list can only shrink."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EDIT = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*\+?=")
NOT_YET = {"scripts/bench_app.py"}
"""bench_app is the next to move into ``benchmarks/`` (issue 66, item 1)."""


def test_no_script_edits_sys_path() -> None:
    edits = {str(p.relative_to(ROOT)) for folder in ("scripts", "benchmarks", "devkit") for p in (ROOT / folder).glob("*.py")
             if EDIT.search(p.read_text(encoding="utf-8"))}
    assert edits <= NOT_YET, f"sys.path edited in {sorted(edits - NOT_YET)}: run the script with python -m instead"
    assert edits == NOT_YET, f"{sorted(NOT_YET - edits)} no longer edit sys.path: take them off NOT_YET"
