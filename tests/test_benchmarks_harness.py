"""The benchmarks' one harness (benchmarks/harness.py): one percentile, one JSON result a run, docs/benchmarks.md's
sections rendered from the committed results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks import harness

ROOT = Path(__file__).resolve().parents[1]


def test_the_percentile_is_the_nearest_rank_one() -> None:
    twenty = [float(v) for v in range(1, 21)]
    # 95% of 20 values is 19 of them: the 19th smallest, not the largest (devkit's old rounding) nor the 18th
    assert harness.percentile(twenty, 0.95) == 19.0
    assert harness.percentile(list(reversed(twenty)), 0.5) == 10.0
    assert harness.percentile([3.0], 0.99) == 3.0
    assert harness.percentile(list(range(1, 101)), 0.95) == 95
    assert harness.percentile([1.0, 2.0, 3.0], 0.0) == 1.0 and harness.percentile([1.0, 2.0, 3.0], 1.0) == 3.0
    with pytest.raises(ValueError):
        harness.percentile([], 0.5)


def test_there_is_one_percentile_and_every_benchmark_script_uses_it() -> None:
    from devkit import appserver

    assert appserver.percentile is harness.percentile
    defined = [str(p.relative_to(ROOT)) for folder in ("scripts", "devkit", "benchmarks") for p in (ROOT / folder).glob("*.py")
               if re.search(r"^def percentile\(", p.read_text(encoding="utf-8"), re.M)]
    assert defined == ["benchmarks/harness.py"]


def test_no_benchmark_edits_sys_path() -> None:
    edit = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*(\+)?=")
    edits = [p.name for p in (ROOT / "benchmarks").glob("*.py") if edit.search(p.read_text(encoding="utf-8"))]
    assert edits == []


def test_every_benchmark_has_a_smoke_test() -> None:
    """The smoke tests are split by kind (tests/test_benchmarks_smoke_*.py, so that both workers of `make test` run
    them): each benchmark still runs end to end in one of them, under its own name."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("test_benchmarks_smoke*.py"))
    assert [name for name in harness.BENCHMARKS if f'"{name}"' not in text] == []


def test_the_page_is_what_the_committed_results_render() -> None:
    doc = harness.DOC.read_text(encoding="utf-8")
    assert harness.render_doc(doc) == doc, "docs/benchmarks.md differs from its results: run `.venv/bin/python -m benchmarks`"
    for name in harness.BENCHMARKS:
        result = harness.latest(name)
        assert result is not None, f"no result for {name} under benchmarks/results/"
        heading, text = harness.render(name, result)
        assert text.startswith(heading + "\n") and text in doc


def test_a_run_is_measured_saved_once_and_read_back_as_the_newest(tmp_path: Path) -> None:
    with harness.measure() as run:
        sum(i * i for i in range(200_000))
    assert run.wall_s > 0 and run.cpu_s > 0 and run.other_cores is not None and run.load_end is not None
    first = harness.Result("leaderboard", "cmd", {"rows": 1, "repeats": 1, "pairs": 1},
                           {"rows": 6, "tournaments": 1, "played": 6, "identical": True,
                            "seconds": {"rebuild": 0.5, "read": 0.25, "table": 1.0}}, run)
    a, b = harness.save(first, tmp_path), harness.save(first, tmp_path)
    assert a != b and json.loads(b.read_text())["schema"] == harness.SCHEMA
    newest = harness.latest("leaderboard", tmp_path)
    assert newest is not None and newest.to_dict() == first.to_dict()
    text = harness.render("leaderboard", newest)[1]
    assert "| **total** | **1.75** |" in text and f"{run.cpu_s:.0f} CPU s" in text
    assert harness.machine()["cores"] == newest.machine["cores"]
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Other\n\nkept\n")
    assert harness.main(["--doc", str(doc), "--results", str(tmp_path), "--check"]) == 1
    assert harness.main(["--doc", str(doc), "--results", str(tmp_path)]) == 0
    assert harness.main(["--doc", str(doc), "--results", str(tmp_path), "--check"]) == 0
    assert "## Other\n\nkept\n" in doc.read_text() and text in doc.read_text()
