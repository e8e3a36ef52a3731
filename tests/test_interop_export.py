"""Exporters: SFT and GRPO files of 10 battles played here load with `datasets`, one row per decision of the side."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import datasets
import pytest

from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.store import save_recording
from wolfeclick.cli import main
from wolfeclick.interop.export import ExportError, ExportFilter, export_files, read_rows
from wolfeclick.interop.sniff import read_any

DATA = Path(__file__).resolve().parent / "data" / "interop"


@pytest.fixture(scope="module")
def ten_battles(tmp_path_factory) -> Path:
    """10 recorded gen4 battles: heuristic or maxdamage (p1) against random (p2)."""
    out = tmp_path_factory.mktemp("ten")
    heuristic, maxdamage, rand = make_policy("heuristic"), make_policy("maxdamage"), make_policy("random")
    jobs = [BattleJob(heuristic if i < 6 else maxdamage, rand, "gen4randombattle", 100 + i, 300) for i in range(10)]

    async def go() -> None:
        async for _, recording in run_jobs(jobs, concurrency=4):
            save_recording(recording, out)

    asyncio.run(go())
    return out


def decisions(folder: Path, side: str) -> list[tuple[str, int]]:
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        out += [(data["id"], t["index"]) for t in data["turns"] if side in t["decisions"]]
    return out


def load(path: Path):
    return datasets.load_dataset("json", data_files=str(path), split="train")


def test_sft_and_grpo_files_of_ten_battles_load_with_one_row_per_decision(ten_battles, tmp_path, capsys):
    expected = decisions(ten_battles, "p1")
    assert len({battle for battle, _ in expected}) == 10
    sft, grpo = tmp_path / "sft.jsonl", tmp_path / "grpo.jsonl"
    assert main(["export", str(ten_battles), "--side", "p1", "--as", "sft", "--out", str(sft)]) == 0
    assert main(["export", str(ten_battles), "--side", "p1", "--as", "grpo", "--out", str(grpo)]) == 0
    assert f"{len(expected)} rows from 10 of 10 recordings" in capsys.readouterr().out

    sft_rows = load(sft)
    assert sft_rows.num_rows == len(expected)  # baselines never play an illegal action
    assert [(r["battle_id"], r["index"]) for r in sft_rows] == expected
    assert set(sft_rows.column_names) >= {"prompt", "completion"}
    first = sft_rows[0]
    assert first["prompt"].startswith("## Part A") and json.loads(first["completion"])["action"] in ("move", "switch")

    grpo_rows = load(grpo)
    assert grpo_rows.num_rows == len(expected)
    assert {"prompt", "completion", "reward", "reward_components", "outcome", "legal_actions", "battle_id",
            "turn"} <= set(grpo_rows.column_names)
    by_file = {json.loads(p.read_text())["id"]: json.loads(p.read_text()) for p in ten_battles.glob("*.json")}
    for row in grpo_rows:
        decision = next(t for t in by_file[row["battle_id"]]["turns"] if t["index"] == row["index"])["decisions"]["p1"]
        assert row["reward"] == decision["reward"]["total"] and row["outcome_reward"] == decision["reward"]["outcome"]
        assert row["legal_actions"] == decision["legal_actions"] and row["side"] == "p1"
        assert row["outcome"] == ("win" if by_file[row["battle_id"]]["result"]["winner"] == "p1" else "loss")
    both = tmp_path / "both.jsonl"
    assert main(["export", str(ten_battles), "--as", "jsonl", "--out", str(both)]) == 0
    assert load(both).num_rows == len(expected) + len(decisions(ten_battles, "p2"))


def test_filters_by_policy_winner_and_format(ten_battles, tmp_path):
    out = tmp_path / "x.jsonl"
    stats = export_files([ten_battles], out, side="both", kind="grpo", flt=ExportFilter(policy="maxdamage"))
    rows = read_rows(out)
    assert stats.battles == 4 and {r["policy"] for r in rows} == {"maxdamage"} and {r["side"] for r in rows} == {"p1"}
    results = {json.loads(p.read_text())["id"]: json.loads(p.read_text())["result"]["winner"]
               for p in ten_battles.glob("*.json")}
    export_files([ten_battles], out, side="p2", kind="grpo", flt=ExportFilter(winner="p1"))
    assert {r["battle_id"] for r in read_rows(out)} == {i for i, w in results.items() if w == "p1"}
    assert {r["outcome"] for r in read_rows(out)} == {"loss"}
    with pytest.raises(ExportError, match="nothing to export"):
        export_files([ten_battles], out, kind="sft", flt=ExportFilter(format="gen9randombattle"))
    assert main(["export", str(ten_battles), "--format", "gen1randombattle", "--out", str(out)]) == 2


def test_exports_are_deterministic(ten_battles, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for kind in ("sft", "jsonl"):
        export_files([ten_battles], a, kind=kind)
        export_files(sorted(ten_battles.glob("*.json")), b, kind=kind)
        assert a.read_bytes() == b.read_bytes()


def test_sft_prompt_is_the_exact_chat_templated_prompt(tiny_checkpoint, tmp_path):
    llm = make_policy(f"llm:{tiny_checkpoint}/adapters/a")
    recording = asyncio.run(play_battle(llm, make_policy("random"), format_id="gen4randombattle", seed=5,
                                        max_turns=3))
    save_recording(recording, tmp_path / "rec")
    out = tmp_path / "sft.jsonl"
    export_files([tmp_path / "rec"], out, side="p1", kind="sft")
    rows = load(out)
    played = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert rows.num_rows == len(played) >= 2
    for row, decision in zip(rows, played):
        assert row["prompt"] == decision.policy_info["prompt"] and row["prompt"].startswith("<|im_start|>system")
        assert row["completion"] == decision.raw_output  # the action JSON exactly as the model wrote it


def test_imported_reference_log_exports_its_states(tmp_path):
    recording = read_any((DATA / "record_battle.json").read_bytes())
    save_recording(recording, tmp_path)
    out = tmp_path / "g.jsonl"
    stats = export_files([tmp_path / f"{recording.id}.json"], out, side="both", kind="grpo")
    rows = load(out)
    assert rows.num_rows == len(recording.turns) and set(rows["source"]) == {"imported"}
    assert rows[0]["reward_components"] == {"reference_reward": recording.turns[0].decisions["p1"].reward.total}
    assert not stats.skipped
    showdown = read_any((DATA / "showdown_replay.json").read_bytes())
    save_recording(showdown, tmp_path)
    stats = export_files([tmp_path / f"{showdown.id}.json"], out, kind="grpo")  # a public log: views inferred
    rows = load(out)
    assert rows.num_rows == stats.inferred == sum(len(t.decisions) for t in showdown.turns) > 0
    assert set(rows["inferred"]) == {True} and set(rows["prompt_kind"]) == {"wolfeclick-v1-inferred"}


def test_export_of_an_env_episode_is_the_exact_text_the_agent_read(tmp_path):
    from wolfeclick.env import ShowdownEnv, SimService

    service = SimService(1)
    env = ShowdownEnv("heuristic", format="gen9randombattle", recordings=tmp_path / "rec", service=service)
    try:
        obs, info = env.reset(seed=31)
        seen, answers, done = [], [], False
        while not done:
            seen.append(obs)
            answers.append(f"  {info['legal_actions'][-1]}\n")  # the model's own text, spacing and all
            obs, _, terminated, truncated, info = env.step(answers[-1])
            done = terminated or truncated
        path = Path(info["recording_path"])
    finally:
        env.close()
        service.close()
    assert len(seen) > 3
    out = tmp_path / "grpo.jsonl"
    export_files([path], out, side="p1", kind="grpo")
    rows = read_rows(out)
    assert [row["prompt"] for row in rows] == seen  # byte for byte, in decision order
    assert [row["completion"] for row in rows] == answers and {row["prompt_kind"] for row in rows} == {"observation"}
    export_files([path], tmp_path / "sft.jsonl", side="p1", kind="sft")
    assert [row["prompt"] for row in read_rows(tmp_path / "sft.jsonl")] == seen
