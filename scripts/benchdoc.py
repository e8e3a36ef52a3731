"""Shared by the benchmark scripts: each owns one ``## `` section of docs/benchmarks.md and rewrites only that."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(heading: str, text: str, path: Path = DOC) -> None:
    """Replace the section starting at ``heading`` (up to the next ``## `` heading), or append it."""
    current = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\nMeasured by `scripts/`.\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    body = text.rstrip("\n") + "\n\n"
    if pattern.search(current):
        updated = pattern.sub(lambda _: body, current, count=1)
    else:
        updated = current.rstrip("\n") + "\n\n" + body
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(updated.rstrip("\n") + "\n", encoding="utf-8")
