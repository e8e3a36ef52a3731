"""``wolfeclick.train.sb3`` runs end to end on a tiny budget (MaskablePPO on the vector env, two held-out battles
per opponent) and writes its outputs; its held-out battles share no team with training. That it runs and reports,
not that it learns: docs/training.md has the measured run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import torch


def test_train_sb3_runs_end_to_end_on_held_out_battles(tmp_path):
    from wolfeclick.train import sb3 as script

    threads = torch.get_num_threads()
    try:
        results = script.main(["--out", str(tmp_path), "--timesteps", "256", "--n-steps", "128", "--batch-size", "64",
                               "--eval-battles", "2"])
    finally:
        torch.set_num_threads(threads)
    assert [(r["policy"], r["opponent"]) for r in results["summary"]] == [
        ("before training", "random"), ("before training", "maxdamage"),
        ("after training", "random"), ("after training", "maxdamage")]
    assert all(r["battles"] == 2 and 0 <= r["ci"][0] <= r["win_rate"] <= r["ci"][1] <= 1 for r in results["summary"])
    overlap = results["overlap"]
    assert overlap["training_battles"] >= 2 and overlap["held_out_teams"] == 4  # 2 seeds x 2 sides, same seeds twice
    assert overlap["held_out_teams_seen_in_training"] == 0
    assert json.loads((tmp_path / "results.json").read_text())["summary"] == results["summary"]
    svg = ElementTree.fromstring((tmp_path / "win_rates.svg").read_text())
    assert len(svg.findall(".//{http://www.w3.org/2000/svg}circle")) == 4
    assert (tmp_path / "model.zip").exists()
