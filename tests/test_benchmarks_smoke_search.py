"""benchmarks.search at its smallest size: one battle of level 1 against heuristic, one result written, and the
section pooled from every run in the folder (real battles: the battles tier, tests/conftest.py FILE_TIERS)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import harness, search


def test_search_smallest(tmp_path: Path) -> None:
    argv = ["--pairs", "1", "--formats", "gen9randombattle", "--levels", "1", "--against", "heuristic",
            "--seats", "p1", "--results", str(tmp_path)]
    assert search.main(argv) == 0
    result = harness.latest("search", tmp_path)
    assert result is not None and result.run.wall_s > 0 and result.run.cpu_s > 0
    assert result.command.startswith(".venv/bin/python -m benchmarks.search ")
    [row] = result.results["rows"]
    assert (row["format"], row["a"], row["b"], len(row["scores"])) == ("gen9randombattle", "search?level=1",
                                                                       "heuristic", 1)
    assert row["times_ms"]["search?level=1"] and row["search_cpu_s"] is not None
    # a second piece (the next seed) is its own result; the section pools both
    assert search.main([*argv[:2], "--first", "1", *argv[2:]]) == 0
    heading, text = harness.render("search", harness.latest("search", tmp_path), tmp_path)  # type: ignore[arg-type]
    assert text.startswith(heading + "\n") and "Machine: " in text
    assert "| gen9randombattle | search?level=1 v heuristic | 2 |" in text
    assert "| 610000 (search?level=1 as p1 only) |" in text and "| 610001 (search?level=1 as p1 only) |" in text


def test_runs_against_the_baselines_before_their_fix_are_reported_apart() -> None:
    """Rows played before the baselines' choice fix name their opponent as it was; later rows are pooled as is."""
    before = {"when": "2026-12-06 19:02 UTC"}
    after = {"when": "2026-12-07 04:11 UTC"}
    assert search.label("heuristic", before) == "heuristic (before c29b847: its seeded fallbacks)"
    assert search.label("maxdamage", before) == "maxdamage (before c29b847: its seeded fallbacks)"
    assert search.label("heuristic", after) == "heuristic"
    assert search.label("search?level=1", before) == "search?level=1"  # its budget never changed
