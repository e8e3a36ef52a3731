"""Real battles on the real simulator: determinism, strength sanity, odd endings, recordings and the CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from devkit.samples import SAMPLES
from tests.helpers import identity, run_cli
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import PolicySpecError, make_policy
from wolfeclick.battle.resim import resimulate
from wolfeclick.battle.runner import play_battle, stream_battle
from wolfeclick.battle.schema import Recording, TurnRecord
from wolfeclick.battle.store import load_recording, parse_recording, save_recording
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.sim.process import SimPool, SimProcess

ROOT = Path(__file__).resolve().parents[1]


def play_many(jobs: list[BattleJob], concurrency: int) -> list[Recording]:
    async def go() -> list[Recording]:
        found: dict[int, Recording] = {}
        async for index, recording in run_jobs(jobs, concurrency=concurrency):
            found[index] = recording
        return [found[i] for i in range(len(jobs))]

    return asyncio.run(go())


def test_same_seed_same_recording_at_any_concurrency() -> None:
    heuristic, random_ = make_policy("heuristic"), make_policy("random")
    jobs = [BattleJob(heuristic, random_, "gen9randombattle", seed) for seed in (11, 12, 13, 14)]
    serial = play_many(jobs, concurrency=1)
    parallel = play_many(jobs, concurrency=4)
    assert [identity(r) for r in serial] == [identity(r) for r in parallel]
    assert len({r.log[-1] for r in serial} | {json.dumps(r.log) for r in serial}) > 1
    # a different seed is a different battle (different teams, different log)
    assert serial[0].log != serial[1].log
    assert all(r.result.reason in ("win", "tie") for r in serial)


def test_same_seed_same_bytes_gen4_single_battle() -> None:
    async def once() -> Recording:
        return await play_battle(make_policy("heuristic"), make_policy("maxdamage"), format_id="gen4randombattle",
                                 seed=3)

    first, second = asyncio.run(once()), asyncio.run(once())
    assert identity(first) == identity(second)
    assert first.format == "gen4randombattle" and first.turns


@pytest.mark.slow
def test_heuristic_beats_random_over_40_seeded_battles() -> None:
    heuristic, random_ = make_policy("heuristic"), make_policy("random")
    jobs = [BattleJob(heuristic, random_, "gen9randombattle", 1000 + i) for i in range(40)]
    recordings = play_many(jobs, concurrency=4)
    wins = sum(r.result.winner == "p1" for r in recordings)
    assert wins >= 34, f"heuristic won only {wins}/40"


def test_turn_records_hold_state_actions_and_rewards() -> None:
    recording = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"),
                                        format_id="gen9randombattle", seed=21))
    assert recording.result.reason == "win"
    for turn in recording.turns:
        assert turn.deciding and set(turn.decisions) == set(turn.deciding)
        for decision in turn.decisions.values():
            assert "## Part A: Active Field" in decision.state
            assert decision.legal_actions, "a deciding side always has something to do"
            assert decision.action in decision.legal_actions
            assert decision.reward.components["turn"] == -0.05
            assert set(turn.snapshot) == {"p1", "p2"}
    # the winner's final decision carries the outcome, reported apart from the shaped total
    last = {side: [t for t in recording.turns if side in t.decisions][-1] for side in ("p1", "p2")}
    assert last["p1"].decisions["p1"].reward.outcome == 10.0
    assert last["p2"].decisions["p2"].reward.outcome == -10.0
    totals = recording.reward_totals()
    assert totals["p1"]["total"] == pytest.approx(totals["p1"]["shaped"] + 10.0)
    # knockouts: every faint of p2 shows up as +3 for p1 somewhere and -3 for p2
    ko_p1 = sum(t.decisions["p1"].reward.components["knockouts"] for t in recording.turns if "p1" in t.decisions)
    assert ko_p1 > 0


def test_forced_switch_after_a_faint_is_its_own_decision_point() -> None:
    recording = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"),
                                        format_id="gen9randombattle", seed=21))
    forced = [t for t in recording.turns if len(t.deciding) == 1]
    assert forced, "a battle with knockouts has forced switches"
    for turn in forced:
        decision = turn.decisions[turn.deciding[0]]
        assert all(a.action == "switch" for a in decision.legal_actions)
        assert decision.action is not None and decision.action.action == "switch"


class FirstTryInvalid:
    """Sends a move that does not exist once per decision point, then plays like ``random``."""

    spec = "invalid-then-random"
    blocking = False

    def __init__(self) -> None:
        self.inner = make_policy("random")

    def metadata(self) -> dict:
        return {"kind": "test"}

    def decide(self, observation: Observation) -> Decision:
        if not observation.rejected and observation.turn < 4:
            return Decision(action=None, command="move 9")
        return self.inner.decide(observation)


def test_rejected_choices_are_recorded_and_the_side_decides_again() -> None:
    recording = asyncio.run(play_battle(FirstTryInvalid(), make_policy("random"),
                                        format_id="gen9randombattle", seed=5))
    parse_recording(recording.to_json())
    refused = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions and t.decisions["p1"].rejected]
    assert refused, "the simulator refused 'move 9' and the runner asked again"
    assert all(d.rejected == ["move 9"] and d.command != "move 9" for d in refused)
    assert recording.result.reason in ("win", "tie")


def test_turn_limit_ends_well_formed_and_resimulates() -> None:
    recording = asyncio.run(play_battle(make_policy("random"), make_policy("random"),
                                        format_id="gen9randombattle", seed=8, max_turns=3))
    assert recording.result.reason == "turn_limit" and recording.result.winner is None
    assert recording.result.turns == 4
    assert all(t.turn <= 4 for t in recording.turns)
    assert parse_recording(recording.to_json()).id == recording.id
    assert asyncio.run(resimulate(recording)).ok


class TieAtTurn(SimProcess):
    """A real simulator process that is told ``>forcetie`` once the battle reaches a given turn."""

    def __init__(self, turn: int) -> None:
        super().__init__()
        self.tie_turn = turn
        self.turn = 0

    async def call(self, op: str, **fields):  # type: ignore[override]
        reply = await super().call(op, **fields)
        for chunk in reply.get("out", []):
            for line in chunk.split("\n"):
                if line.startswith("|turn|"):
                    self.turn = int(line.split("|")[2])
        if op == "write" and not reply.get("ended") and self.turn >= self.tie_turn:
            tie = await super().call("write", battle=fields["battle"], lines=[">forcetie"])
            reply = {**tie, "out": reply["out"] + tie["out"]}
        return reply


def test_a_tie_is_recorded_as_a_tie() -> None:
    async def go() -> Recording:
        process = TieAtTurn(3)
        await process.start()
        try:
            return await play_battle(make_policy("random"), make_policy("random"), format_id="gen9randombattle",
                                     seed=4, process=process)
        finally:
            await process.close()

    recording = asyncio.run(go())
    assert recording.result.reason == "tie" and recording.result.winner is None
    assert "|tie" in recording.log
    assert all(d.reward.outcome == 0.0 for t in recording.turns for d in t.decisions.values())
    parse_recording(recording.to_json())


class CrashesAtTurn:
    spec = "crashes"
    blocking = True

    def metadata(self) -> dict:
        return {}

    def decide(self, observation: Observation) -> Decision:
        if observation.turn >= 3:
            raise RuntimeError("model babbled\nsecond line")
        return Decision(action=observation.legal_actions[0])


def test_a_policy_that_crashes_forfeits_and_keeps_the_turns() -> None:
    recording = asyncio.run(play_battle(CrashesAtTurn(), make_policy("random"), format_id="gen9randombattle",
                                        seed=2))
    assert recording.result.reason == "forfeit" and recording.result.winner == "p2"
    assert recording.result.error == "p1 policy failed: RuntimeError: model babbled"
    assert len(recording.turns) >= 2
    assert recording.inputlog[-1] == ">forcelose p1"
    parse_recording(recording.to_json())


def test_a_dead_simulator_aborts_with_one_line_and_loses_nothing() -> None:
    async def go() -> tuple[Recording, list[TurnRecord]]:
        pool = SimPool(1)
        await pool.start()
        process = pool.processes[0]
        streamed: list[TurnRecord] = []
        final = None
        try:
            async for item in stream_battle(make_policy("random"), make_policy("random"),
                                            format_id="gen9randombattle", seed=6, process=process):
                if isinstance(item, TurnRecord):
                    streamed.append(item)
                    if len(streamed) == 3:
                        process.kill()
                else:
                    final = item
        finally:
            await pool.close()
        assert final is not None
        return final, streamed

    recording, streamed = asyncio.run(go())
    assert recording.result.reason == "aborted"
    assert recording.result.error and "simulator process exited" in recording.result.error
    assert "\n" not in recording.result.error
    assert len(recording.turns) >= len(streamed) >= 3
    assert [t.index for t in recording.turns[:3]] == [0, 1, 2]
    assert recording.inputlog[0].startswith(">start ")  # what was fed to the dead simulator is kept
    parse_recording(recording.to_json())


def test_unknown_spec_and_format_fail_in_one_line() -> None:
    with pytest.raises(PolicySpecError, match="unknown policy spec 'alphago'"):
        make_policy("alphago")
    with pytest.raises(ValueError, match="does not name a generation"):
        asyncio.run(play_battle(make_policy("random"), make_policy("random"), format_id="randombattle", seed=1))


def test_saved_recording_roundtrips(tmp_path: Path) -> None:
    recording = asyncio.run(play_battle(make_policy("maxdamage"), make_policy("random"),
                                        format_id="gen4randombattle", seed=9))
    path = save_recording(recording, tmp_path)
    assert path.name == f"{recording.id}.json"
    assert load_recording(path).to_json() == recording.to_json()
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_sample_recordings_resimulate_exactly(sample: Path) -> None:
    recording = load_recording(sample)
    result = asyncio.run(resimulate(recording))
    assert result.ok, result.message


def test_cli_record_writes_and_prints_each_path(tmp_path: Path) -> None:
    done = run_cli("record", "--p1", "heuristic", "--p2", "random", "--format", "gen9randombattle", "--seed", "40",
                   "--n", "3", "--concurrency", "2", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    paths = sorted(Path(line) for line in done.stdout.split())
    assert paths == sorted(tmp_path.glob("*.json")) and len(paths) == 3
    assert run_cli("validate", *map(str, paths)).returncode == 0
    resim = run_cli("resim", str(paths[0]))
    assert resim.returncode == 0 and "identical" in resim.stdout


@pytest.mark.parametrize("command", ["record", "validate", "resim", "schema"])
def test_every_command_has_help(command: str) -> None:
    done = run_cli(command, "--help")
    assert done.returncode == 0 and "usage:" in done.stdout


def test_cli_bad_spec_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    done = run_cli("record", "--p1", "nonsense", "--p2", "random", "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert "unknown policy spec 'nonsense'" in done.stderr


def test_checkpoints_hand_out_the_battle_so_far(tmp_path: Path) -> None:
    saved: list[Recording] = []

    async def checkpoint(partial: Recording) -> None:
        saved.append(partial)
        save_recording(partial, tmp_path)

    async def go() -> Recording:
        final = None
        async for item in stream_battle(make_policy("heuristic"), make_policy("random"), format_id="gen9randombattle",
                                        seed=21, checkpoint=checkpoint, checkpoint_every=5):
            if isinstance(item, Recording):
                final = item
        assert final is not None
        return final

    final = asyncio.run(go())
    assert len(saved) >= 2
    assert [len(p.turns) for p in saved] == sorted(len(p.turns) for p in saved)
    for partial in saved:
        assert partial.result.reason == "aborted" and partial.result.error.startswith("interrupted")
        assert partial.turns == final.turns[: len(partial.turns)]
        parse_recording(partial.to_json())
    assert load_recording(tmp_path / f"{final.id}.json").result.reason == "aborted"  # until the final save


@pytest.mark.parametrize(("format_id", "expected"), [
    ("gen9foo", "unknown format 'gen9foo'"),
    ("gen9ou", "'gen9ou' needs a team for each side"),
    ("gen9randomdoublesbattle", "only singles formats are supported"),
])
def test_formats_the_simulator_would_fake_are_refused_before_anything_is_written(
        tmp_path: Path, format_id: str, expected: str) -> None:
    done = run_cli("record", "--p1", "random", "--p2", "random", "--format", format_id, "--out", str(tmp_path))
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith("error: ") and expected in line
    assert not list(tmp_path.glob("*.json"))


class SwitchHappy:
    """Always switches when it may: walks into the simulator's '[Unavailable choice] … trapped' refusals."""

    spec = "switch-happy"
    blocking = False

    def metadata(self) -> dict:
        return {"kind": "test"}

    def decide(self, observation: Observation) -> Decision:
        switches = [a for a in observation.legal_actions if a.kind == "switch"]
        return Decision(action=(switches or observation.legal_actions)[0])


def test_a_trapped_switch_is_refused_and_the_side_chooses_from_the_new_request() -> None:
    # gen4 seed 11: p2 brings a trapper, so switch requests are refused as [Unavailable choice]
    recording = asyncio.run(play_battle(SwitchHappy(), make_policy("random"), format_id="gen4randombattle", seed=11))
    refused = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions and t.decisions["p1"].rejected]
    assert refused
    for decision in refused:
        assert all(command.startswith("switch") for command in decision.rejected)
        assert decision.action is not None and decision.action.action == "move"
    parse_recording(recording.to_json())
    assert asyncio.run(resimulate(recording)).ok
