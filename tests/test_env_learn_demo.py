"""``wolfeclick.train.learn_demo`` runs end to end on a tiny budget (a few examples, one GRPO step, two held-out
battles) and writes its outputs: that it runs and reports, not that it learns (docs/training.md has the measured run); and its
held-out battles are held out: no team or opening state of theirs appears in training (checked, and refused if so)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import torch

from wolfeclick.battle.store import load_recording

ROOT = Path(__file__).resolve().parents[1]
TEAMS = ROOT / "tests" / "data" / "teams" / "gen9ou"


def load_demo():
    from wolfeclick.train import learn_demo

    return learn_demo


def test_warm_start_examples_are_the_decisions_a_rollout_sees():
    """With ``--sft-horizon 1`` only each battle's opening state (the one a ``--horizon 1`` rollout is given) is a
    warm-start example, not the later, longer conversations."""
    demo = load_demo()
    rows = []
    for decision in range(3):
        messages = [{"role": "user", "content": "state"}]
        for _ in range(decision):
            messages += [{"role": "assistant", "content": "", "tool_calls": []}, {"role": "tool", "content": "s"}]
        rows.append({"messages": messages, "kind": "move", "choice": f"m{decision}"})
    assert [row["choice"] for row in demo.first_decisions(rows, 1)] == ["m0"]
    assert [row["choice"] for row in demo.first_decisions(rows, 2)] == ["m0", "m1"]


def test_the_demo_refuses_held_out_battles_that_repeat_training_teams(tmp_path, monkeypatch):
    """One fixed team for the agent (the old default): every held-out battle shares it with training, and the
    openings repeat (a lead against one of four opponents' leads); the demo stops before training instead of
    reporting recall as learning."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    demo = load_demo()
    args = demo.parse_args(["--format", "gen9ou", "--team1", str(TEAMS / "balance.txt"), "--teams", str(TEAMS)])
    train = demo.battle_keys(args, [demo.row(args, seed) for seed in range(1, 9)])
    held_out = demo.battle_keys(args, [demo.row(args, seed) for seed in range(1_000_000, 1_000_008)])
    found = demo.overlap(train, held_out)
    assert found["battles_sharing_a_team"] == 8 and found["battles_sharing_the_opening_state"] > 0
    random_battles = demo.parse_args([])
    fresh = demo.overlap(demo.battle_keys(random_battles, [demo.row(random_battles, s) for s in range(1, 9)]),
                         demo.battle_keys(random_battles, [demo.row(random_battles, s) for s in range(10**6, 10**6 + 8)]))
    assert fresh["battles_sharing_a_team"] == 0 and fresh["battles_sharing_the_opening_state"] == 0


def test_learn_demo_runs_end_to_end_and_writes_its_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    demo = load_demo()
    threads = torch.get_num_threads()
    try:
        results = demo.main([
            "--out", str(tmp_path), "--corpus-seeds", "2", "--corpus-horizon", "1", "--sft-steps", "2", "--steps", "1",
            "--generations", "2", "--prompts-per-step", "1", "--eval-seeds", "2",
        ])
    finally:
        torch.set_num_threads(threads)
    # held out for real: no evaluation battle shares a team or its opening state with a training battle
    assert results["overlap"]["battles_sharing_a_team"] == 0
    assert results["overlap"]["battles_sharing_the_opening_state"] == 0
    assert results["overlap"]["distinct_held_out_openings"] == 2
    assert [row["model"] for row in results["summary"]] == ["random init", "warm start (GRPO step 0)", "GRPO-trained"]
    assert all(row["rollouts"] == 2 and 0.0 <= row["illegal_rate"] <= 1.0 for row in results["summary"])
    assert json.loads((tmp_path / "results.json").read_text())["summary"] == results["summary"]
    table = (tmp_path / "results.md").read_text()
    assert table.count("\n") == 2 + 3 and "GRPO-trained" in table
    svg = ElementTree.fromstring((tmp_path / "learning.svg").read_text())  # well-formed, one dot per model and metric
    assert len(svg.findall(".//{http://www.w3.org/2000/svg}circle")) == 3 * 3  # two rates and the mean reward
    assert "plotly" in (tmp_path / "learning.html").read_text()[:100_000].lower()
    assert (tmp_path / "model" / "tokenizer.json").exists()
    rollouts = sorted((tmp_path / "recordings").glob("*.json"))  # the GRPO step's rollouts are real battles
    # two rollouts of one seed; two that played the same battle are one recording (the store keeps one file a battle)
    assert 1 <= len(rollouts) <= 2 and all(load_recording(p).source.kind == "training" for p in rollouts)
    assert os.path.getsize(tmp_path / "learning.html") > 0
