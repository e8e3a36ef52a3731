"""The scripts not yet moved to ``benchmarks/`` write their ``## `` section of docs/benchmarks.md through this (imported
as ``scripts.benchdoc``, the script run as ``python -m scripts.NAME`` from the checkout); what it holds lives in
``benchmarks.harness`` (the benchmarks' one harness)."""

from __future__ import annotations

from benchmarks.harness import DOC, SHARED_AT, machine_busy, other_work, other_work_note, write_section

__all__ = ["DOC", "SHARED_AT", "machine_busy", "other_work", "other_work_note", "write_section"]
