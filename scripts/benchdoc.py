"""The scripts not yet moved to ``benchmarks/`` write their ``## `` section of docs/benchmarks.md through this; what
it holds now lives in ``benchmarks.harness`` (the benchmarks' one harness), imported from the checkout."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ != "scripts":  # imported as ``benchdoc`` from beside a script (scripts/bench_battles.py)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.harness import DOC, SHARED_AT, machine_busy, other_work, other_work_note, write_section  # noqa: E402

__all__ = ["DOC", "SHARED_AT", "machine_busy", "other_work", "other_work_note", "write_section"]
