"""benchmarks.calibration at its smallest size, in its three kinds of run (the rollouts' calibration, each rollout
policy's, the value model's alone): one battle each way, one result each, each rendered into its section, the
reliability diagrams written where asked (real battles: the battles tier, tests/conftest.py FILE_TIERS)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import calibration, calibration_model, calibration_policies, harness


def _rendered(name: str, results: Path) -> harness.Result:
    result = harness.latest(name, results)
    assert result is not None and result.run.wall_s > 0 and result.run.cpu_s > 0
    heading, text = harness.render(name, result, results)
    assert text.startswith(heading + "\n") and "Machine: " in text and "| 0.9–1.0 |" in text
    return result


def test_calibration_smallest(tmp_path: Path) -> None:
    common = ["--results", str(tmp_path), "--plots", str(tmp_path)]
    assert calibration.main(["--train", "1", "--held-out", "1", "--k", "1", "--model-held-out", "1", *common]) == 0
    r = _rendered("calibration", tmp_path).results
    assert r["decisions"] > 0 and len(r["brier"]) == 5 and [len(bins) for bins in r["bins"]] == [10] * 4
    assert sum(c for c, _, _ in r["bins"][0]) == r["decisions"] and r["model"]["battles"] == 1
    assert {p.name for p in tmp_path.glob("*.svg")} == {"calibration.svg", "calibration-public.svg"}


def test_calibration_policies_and_model_smallest(tmp_path: Path) -> None:
    common = ["--results", str(tmp_path), "--plots", str(tmp_path)]
    assert calibration_policies.main(["--held-out", "1", "--k", "1", "--policies", "heuristic", *common]) == 0
    r = _rendered("calibration_policies", tmp_path).results
    assert [row["spec"] for row in r["rows"]] == ["heuristic"] and r["decisions"] > 0
    assert calibration_model.main(["--train", "1", "--model-held-out", "1", *common]) == 0
    r = _rendered("calibration_model", tmp_path).results
    assert r["model"]["battles"] == 1 and r["model"]["decisions"] > 0 and r["temperature"] > 0
