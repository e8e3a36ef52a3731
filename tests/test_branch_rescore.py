"""Take over a recorded battle at any decision, and ask a checkpoint what it would have done (issue 14).

Real battles on the real simulator; the checkpoint is the tiny offline Qwen3 of devkit/llm_fixtures.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.helpers import BRANCH_NAMING, identity
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.branch import BranchError, branch, first_difference
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.rescore import Rescore, panel_line, rescore_many
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import load_recording, parse_recording
from wolfeclick.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def parent() -> Recording:
    return asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen4randombattle",
                                   seed=21))


def test_a_branch_with_the_same_policies_reproduces_its_parent(parent: Recording) -> None:
    child = asyncio.run(branch(parent, 5, {}))
    assert identity(child, BRANCH_NAMING) == identity(parent, BRANCH_NAMING)
    assert child.source.kind == "branch" and child.source.parent == parent.id and child.source.branch_step == 5
    assert child.id != parent.id


def test_a_branch_with_another_policy_shares_the_turns_before_the_step_only(parent: Recording) -> None:
    child = asyncio.run(branch(parent, 5, {"p2": make_policy("maxdamage")}))
    assert first_difference(parent.turns, child.turns, len(parent.turns)) == 5
    assert child.players["p2"].policy == "maxdamage" and child.players["p1"].policy == "heuristic"
    assert child.players["p2"].name == parent.players["p2"].name  # the simulator saw the same names
    parse_recording(child.to_json())


def test_a_tampered_recording_is_refused_in_one_line(parent: Recording) -> None:
    data = json.loads(parent.to_json())
    target = next(t for t in data["turns"][1:4] if "p1" in t["decisions"])
    legal = [a for a in target["decisions"]["p1"]["legal_actions"] if a != target["decisions"]["p1"]["action"]]
    other = next(i for i, a in enumerate(target["decisions"]["p1"]["legal_actions"]) if a == legal[0])
    kind = legal[0]["action"]
    target["decisions"]["p1"]["command"] = f"{kind} {other + 1 if kind == 'move' else other}"
    tampered = parse_recording(json.dumps(data))
    with pytest.raises(BranchError) as info:
        asyncio.run(branch(tampered, 8, {}))
    assert "\n" not in str(info.value) and parent.id in str(info.value)


def test_a_recording_without_an_input_log_cannot_be_branched(parent: Recording) -> None:
    stripped = parent.model_copy(update={"inputlog": []})
    with pytest.raises(BranchError, match="no seed, input log"):
        asyncio.run(branch(stripped, 2, {}))
    with pytest.raises(BranchError, match="step must be between 0 and"):
        asyncio.run(branch(parent, len(parent.turns), {}))


def test_branch_cli_writes_a_new_recording(parent: Recording, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = tmp_path / f"{parent.id}.json"
    source.write_text(parent.to_json())
    assert main(["branch", str(source), "--at", "3", "--p1", "random", "--out", str(tmp_path / "out")]) == 0
    path = Path(capsys.readouterr().out.strip())
    child = load_recording(path)
    assert child.source.parent == parent.id and child.players["p1"].policy == "random"


def test_rescore_over_20_recordings_reports_agreement(tiny_checkpoint, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    async def record() -> list[Recording]:
        jobs = [BattleJob(make_policy("heuristic"), make_policy("random"), "gen4randombattle", 100 + i, max_turns=4)
                for i in range(20)]
        return [recording async for _, recording in run_jobs(jobs, concurrency=4)]

    recordings = asyncio.run(record())
    folder = tmp_path / "recs"
    folder.mkdir()
    for recording in recordings:
        (folder / f"{recording.id}.json").write_text(recording.to_json())
    code = main(["rescore", str(folder), "--policy", f"llm:{tiny_checkpoint}", "--side", "p1"])
    out = capsys.readouterr().out
    assert code == 0, out
    stored = sorted((folder / "rescores").glob("*/*.json"))
    assert len(stored) == 20
    rescores = [Rescore.model_validate_json(path.read_text()) for path in stored]
    decisions = sum(len(r.decisions) for r in rescores)
    assert decisions == sum(1 for r in recordings for t in r.turns if "p1" in t.decisions)
    assert f"of {decisions} decisions in 20 recordings" in out
    for r in rescores:
        for d in r.decisions:
            assert d.candidates and abs(sum(c.probability for c in d.candidates) - 1) < 1e-3
            assert d.played_rank is not None and (d.played_rank == 1) == d.agree
    assert "would have played" in panel_line(rescores[0].decisions[0], "tiny")


def test_rescoring_the_checkpoints_own_battle_agrees_everywhere(tiny_checkpoint) -> None:
    llm = make_policy(f"llm:{tiny_checkpoint}")
    recording = asyncio.run(play_battle(llm, make_policy("random"), format_id="gen4randombattle", seed=8,
                                        max_turns=10))
    [rescore] = asyncio.run(rescore_many([recording], llm, "p1"))
    assert isinstance(rescore, Rescore) and len(rescore.decisions) >= 5
    assert rescore.agreement == 1.0


NOT_PUBLIC_ONLY = {"showdown_server.json", "showdown_doubles.log", "showdown_triples.log"}
"""A server log is re-simulated, so it replays (tests/test_interop_server.py); doubles and triples are refused."""


@pytest.mark.parametrize("fixture", sorted(p for p in (ROOT / "tests" / "data" / "interop").glob("*.*")
                                           if p.name not in NOT_PUBLIC_ONLY), ids=lambda p: p.name)
def test_an_imported_recording_cannot_be_branched_or_rescored(fixture: Path) -> None:
    from wolfeclick.interop.sniff import read_any

    imported = read_any(fixture.read_bytes(), fixture.name)
    with pytest.raises(BranchError, match="no seed, input log and decisions") as info:
        asyncio.run(branch(imported, 0, {}))
    assert "imported" in str(info.value) and "\n" not in str(info.value)
    [result] = asyncio.run(rescore_many([imported], make_policy("random"), "p1"))
    assert isinstance(result, BranchError)
