"""The app benchmarks at their smallest size: each starts app.py on 127.0.0.1 with a library of its own (so no app is
shared between them), writes one result and renders its section (the app and browser tiers, tests/conftest.py
FILE_TIERS: the app benchmarks time the viewer in headless Chromium)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import app, app_start, app_viewer, harness, public_load, upload_load, visitors


def _rendered(name: str, results: Path) -> harness.Result:
    result = harness.latest(name, results)
    assert result is not None and result.run.wall_s > 0
    assert result.command.startswith(f".venv/bin/python -m benchmarks.{name} ")
    heading, text = harness.render(name, result, results)
    assert text.startswith(heading + "\n") and "Machine: " in text
    return result


def test_upload_load_smallest(tmp_path: Path) -> None:
    assert upload_load.main(["--uploads", "1", "--mb", "0.1", "--steps", "1", "--results", str(tmp_path)]) == 0
    r = _rendered("upload_load", tmp_path).results
    assert r["errors"] == [] and len(r["upload_s"]) == 1 and r["alone"]["n"] == 1 and r["loaded"]["n"] >= 1
    assert r["rss_mb"]["peak"] > 0


def test_visitors_smallest(tmp_path: Path) -> None:
    assert visitors.main(["--seconds", "5", "--steps", "1", "--results", str(tmp_path)]) == 0
    rows = _rendered("visitors", tmp_path).results["rows"]
    assert [row["name"] for row in rows] == ["alone", "while A runs the largest Compare",
                                             "while every live slot streams", "while A analyses at the largest K"]
    assert rows[0]["n"] == 1 and all(row["job"] and row["job"] != "still running" for row in rows[1:])
    # at 5 s the analysis may not have played its first rollout yet on a loaded machine: the row says so ("failed:
    # the analysis showed no progress"), as the benchmark reports it; the Compare and the live streams always start
    assert not any(row["job"].startswith("failed") for row in rows[1:3])


def test_public_load_smallest(tmp_path: Path) -> None:
    """One live page, small uploads, a few seconds of hogging and no quiet: every visitor's loop runs and stops."""
    assert public_load.main(["--minutes", "0.1", "--pages", "1", "--session-idle-s", "60", "--quiet-s", "0",
                             "--upload-mb", "0.1", "--steps", "1", "--results", str(tmp_path)]) == 0
    r = _rendered("public_load", tmp_path).results
    assert r["alone"]["n"] == 1 and r["rss_mb"]["peak"] > 0 and r["rss_mb"]["quiet"] == []
    assert r["got"], "visitor A's loops recorded nothing"


def test_app_start_smallest(tmp_path: Path) -> None:
    assert app_start.main(["--starts", "1", "--results", str(tmp_path)]) == 0
    r = _rendered("app_start", tmp_path).results
    assert len(r["times_s"]["start"]) == 1 and r["start_s"][0] > 0 and r["idle_rss_mb"][0] > 0
    assert len(r["times_s"]["stop"]) == 1 and r["stop_s"][0] > 0


def test_app_viewer_smallest(tmp_path: Path) -> None:
    assert app_viewer.main(["--keys", "1", "--widths", "phone", "--results", str(tmp_path)]) == 0
    viewer = _rendered("app_viewer", tmp_path).results["viewer"]
    assert sorted(viewer) == ["long", "phone"] and viewer["phone"]["keys"] == 1 and viewer["long"]["same_page"]


def test_app_smallest(tmp_path: Path) -> None:
    """One start, one step, no width (test_app_viewer_smallest times a key at one; the long replay's End still
    runs), 4 battles (one a client) and one small upload."""
    assert app.main(["--starts", "1", "--steps", "1", "--keys", "1", "--widths", "--battles", "4",
                     "--upload-mb", "0.1", "--uploads", "1", "--results", str(tmp_path)]) == 0
    r = _rendered("app", tmp_path).results
    assert r["start"]["n"] == 1 and r["n_steps"] == 1 and sorted(r["viewer"]) == ["long"]
    assert r["memory"]["battles"] == 4 and r["memory"]["uploads"] == 1 and r["memory"]["after_uploads"] > 0
