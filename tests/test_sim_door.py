"""The simulator's door: only battle input reaches Showdown, checked in bridge.js and in Python alike.

Showdown's BattleStream runs `>eval` as JavaScript. Each injected line below would write a marker file if it got
through; the tests check that it is refused (naming the entry), and that no marker appears, on every path:
bridge.js spoken to directly, the Python check, `SimProcess`, a policy's command, `validate` and `resim`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from devkit.samples import SAMPLE_ID, SAMPLES
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import resimulate
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import RecordingError, load_recording, parse_recording
from wolfeclick.cli import main
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.sim.process import BRIDGE, SHOWDOWN_DIR, SimProcess, SimulatorError, node_executable
from wolfeclick.sim.protocol import (
    UnsafeInput,
    check_input_line,
    check_input_lines,
    derive_seed,
    is_reseed_line,
    reseed_line,
    start_lines,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / f"{SAMPLE_ID}.json"
START = start_lines("gen9randombattle", 5, {"p1": "alice", "p2": "bob"})


BAD_RESEEDS = [
    ">reseed",
    ">reseed ",
    ">reseed sodium,0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ">reseed gen5,0001000200030004",
    ">reseed 1,2,3",
    ">reseed 1,2,3,4,5",
    ">reseed 65536,1,1,1",
    ">reseed 01,2,3,4",
    ">reseed -1,2,3,4",
    ">reseed 1, 2,3,4",
    ">reseed  1,2,3,4",
    ">reseed 1,2,3,4 ",
    ">reseed [1,2,3,4]",
    ">Reseed 1,2,3,4",
    "> reseed 1,2,3,4",
    ">reseed \u0661,2,3,4",
    ">reseed 1,2,3,4\n>eval 1",
]
"""Every spelling of ``>reseed`` but the one the analysis writes (four plain 16-bit words) stays refused."""


def injections(marker: Path) -> list[str]:
    """Lines that must never reach the simulator: several spellings of `>eval`, embedded newlines, other commands."""
    write = f"require('fs').writeFileSync({str(marker)!r},'x')"
    return [
        f">eval {write}",
        f"> eval {write}",
        f">EVAL {write}",
        f">Eval {write}",
        f" >eval {write}",
        f">evalbattle {write}",
        f">p1 move 1\n>eval {write}",
        f">p1 move 1\r\n>eval {write}",
        f">p1 move 1\r>eval {write}",
        f">p2 move 1\u2028>eval {write}",
        f">start {json.dumps({'formatid': 'gen9randombattle'})}\n>eval {write}",
        f">chat hi\n>eval {write}",
        ">requestexport",
        ">requestlog",
        ">requestteam p1",
        ">chat hello",
        ">chat-inputlogonly hello",
        ">editbattle ???",
        *BAD_RESEEDS,
        ">tiebreak",
        ">version abc",
        ">p3 move 1",
        ">forcewin p3",
        ">forcetie now",
        ">p1  move 1",
        ">p1 ",
        '>player p1 {"name": "x", "team": {"nested": 1}}',
        '>start {"formatid": "gen9randombattle", "p1": {"name": "x"}}',
        ">start [1, 2]",
        "eval 1",
        "",
    ]


RESEEDS = [reseed_line(7, "analysis:0:0"), ">reseed 0,0,0,0", ">reseed 65535,65535,65535,65535", ">reseed 1,2,3,4"]
ALLOWED = [*RESEEDS, *START, ">p1 move 2", ">p2 switch 4", ">p1 default", ">p1 move 1 terastallize", ">forcelose p1",
           ">forcewin p2", ">forcetie", *load_recording(SAMPLE).inputlog]


@pytest.mark.parametrize("line", ALLOWED)
def test_battle_input_passes_the_python_check(line: str) -> None:
    check_input_line(line)


def test_injected_lines_are_refused_by_the_python_check_naming_the_entry(tmp_path: Path) -> None:
    for line in injections(tmp_path / "marker"):
        with pytest.raises(UnsafeInput) as caught:
            check_input_lines([*START, line])
        message = str(caught.value)
        assert message.startswith("input entry 3 refused: ") and "\n" not in message
        assert repr(line[:20])[1:-1] in message or line == "", message  # the offending text, cut short
        assert len(message) < 400


def _bridge(requests: list[dict]) -> list[dict]:
    """Speak to bridge.js directly (no Python check in between): one JSON request per line, one reply each."""
    text = "".join(json.dumps(request) + "\n" for request in requests)
    done = subprocess.run([node_executable(), str(BRIDGE)], input=text, capture_output=True, text=True, timeout=120,
                          env={"WOLFECLICK_SHOWDOWN": str(SHOWDOWN_DIR), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.split("\n") if line]
    assert [reply["id"] for reply in replies] == [request["id"] for request in requests]
    return replies


def test_bridge_refuses_every_injection_on_start_write_and_resim(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    requests: list[dict] = [{"id": 0, "op": "start", "battle": "b", "format": "gen9randombattle", "lines": START}]
    cases = injections(marker)
    for number, line in enumerate(cases):
        base = 1 + 3 * number
        requests += [
            {"id": base, "op": "resim", "lines": [*START, line]},
            {"id": base + 1, "op": "write", "battle": "b", "lines": [">p1 move 1", line]},
            {"id": base + 2, "op": "start", "battle": f"x{number}", "format": "gen9randombattle",
             "lines": [*START, line]},
        ]
    requests.append({"id": 10_000, "op": "resim", "lines": load_recording(SAMPLE).inputlog})
    replies = _bridge(requests)
    assert "error" not in replies[0]
    for number, line in enumerate(cases):
        resim, write, start = replies[1 + 3 * number: 4 + 3 * number]
        assert resim["error"].startswith("input entry 3 refused: "), (line, resim)
        assert write["error"].startswith("input entry 1 refused: "), (line, write)
        assert start["error"].startswith("input entry 3 refused: "), (line, start)
        assert all(len(reply["error"].splitlines()) == 1 for reply in (resim, write, start))
    # the whole request is refused: the battle `b` never received the `>p1 move 1` sent beside an injection
    assert replies[-1].get("error") is None and len(replies[-1]["out"]) > 1  # real input still plays
    assert not marker.exists(), "an injected line ran JavaScript"


def test_python_side_refuses_before_anything_is_sent(tmp_path: Path) -> None:
    marker = tmp_path / "marker"

    async def go() -> list[str]:
        process = SimProcess()
        await process.start()
        errors = []
        try:
            for line in injections(marker)[:8]:
                with pytest.raises(SimulatorError) as caught:
                    await process.call("resim", lines=[*START, line])
                errors.append(str(caught.value))
            assert process.alive
        finally:
            await process.close()
        return errors

    errors = asyncio.run(go())
    assert all(error.startswith("simulator refused resim: input entry 3 refused: ") for error in errors)
    assert not marker.exists()


class Injects:
    """A policy whose command smuggles a second line in (as a babbling or hostile checkpoint might)."""

    spec = "injects"
    blocking = False

    def __init__(self, marker: Path) -> None:
        self.line = f"move 1\n>eval require('fs').writeFileSync({str(marker)!r},'x')"

    def metadata(self) -> dict:
        return {}

    def decide(self, observation: Observation) -> Decision:
        return Decision(action=observation.legal_actions[0], command=self.line)


def test_a_policy_command_cannot_smuggle_a_line_in(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    recording = asyncio.run(play_battle(Injects(marker), make_policy("random"), format_id="gen9randombattle",
                                        seed=4))
    assert recording.result.reason == "aborted"
    assert "input entry 0 refused: line break" in recording.result.error
    assert not marker.exists()


def _with_inputlog(tmp_path: Path, name: str, line: str, at: int = 5) -> Path:
    data = json.loads(SAMPLE.read_text())
    data["inputlog"].insert(at, line)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("index", [0, 2, 6, 7, 9])
def test_validate_calls_such_a_recording_invalid_in_one_line(index: int, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    line = injections(tmp_path / "marker")[index]
    path = _with_inputlog(tmp_path, "hostile", line)
    with pytest.raises(RecordingError, match="inputlog.*input entry 5 refused"):
        parse_recording(path.read_text())
    assert main(["validate", str(SAMPLE), str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{SAMPLE}: ok (")
    assert len(out) == 2 and out[1].startswith(f"{path}: field 'inputlog'") and "input entry 5 refused" in out[1]


def test_resim_of_a_hostile_recording_ends_at_once_and_runs_nothing(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "marker"
    hang = _with_inputlog(tmp_path, "hang", ">eval while(true){}")
    write = _with_inputlog(tmp_path, "write", injections(marker)[6], at=len(load_recording(SAMPLE).inputlog))
    assert main(["resim", str(hang)]) == 1  # refused before the simulator: a `while(true)` that ran would hang here
    assert main(["resim", str(write)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all("input entry" in line for line in out)
    assert not marker.exists()


def test_resimulate_itself_refuses_an_unvalidated_recording(tmp_path: Path) -> None:
    """Even a Recording built without validation (model_construct) cannot carry `>eval` to the simulator."""
    marker = tmp_path / "marker"
    good = load_recording(SAMPLE)
    for line in (">eval while(true){}", injections(marker)[6]):
        hostile = Recording.model_construct(**{**dict(good), "inputlog": [*good.inputlog[:3], line]})
        result = asyncio.run(resimulate(hostile, timeout=20))
        assert not result.ok and "input entry 3 refused" in result.message
    assert not marker.exists()


def test_resim_stops_a_simulator_past_its_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    longest = max(SAMPLES, key=lambda p: len(load_recording(p).inputlog))
    assert main(["resim", str(longest), "--timeout", "0.001"]) == 1
    out = capsys.readouterr().out.strip()
    assert out == f"{longest}: the simulator did not finish within 0.001 s and was stopped"
    assert main(["resim", str(longest), "--timeout", "60"]) == 0
    assert main(["resim", str(longest), "--timeout", "0"]) == 2


def test_the_reseed_line_is_the_derived_seed_in_showdowns_form() -> None:
    line = reseed_line(7, "analysis:3:1")
    assert line == ">reseed " + ",".join(map(str, derive_seed(7, "analysis:3:1")))
    assert is_reseed_line(line) and line != reseed_line(8, "analysis:3:1") != reseed_line(7, "analysis:3:2")
    assert not any(is_reseed_line(bad) for bad in BAD_RESEEDS if isinstance(bad, str))


def _log(chunks: list[str]) -> list[str]:
    """The battle's lines without wall-clock timestamps."""
    return [line for chunk in chunks for line in chunk.split("\n") if not line.startswith("|t:|")]


def test_the_bridge_admits_the_reseed_and_it_changes_only_what_follows() -> None:
    """Through start, write and resim alike; the log before the reseed is untouched, the luck after it is new."""
    recording = load_recording(SAMPLE)
    head, rest = recording.inputlog[:9], recording.inputlog[9:]
    reseed = reseed_line(11, "door")
    replies = _bridge([
        {"id": 1, "op": "resim", "lines": head},
        {"id": 2, "op": "resim", "lines": [*head, reseed, *rest]},
        {"id": 3, "op": "start", "battle": "a", "format": recording.format, "lines": [*head, reseed]},
        {"id": 4, "op": "write", "battle": "a", "lines": rest[:2]},
        {"id": 5, "op": "start", "battle": "b", "format": recording.format, "lines": head},
        {"id": 6, "op": "write", "battle": "b", "lines": [reseed, *rest[:2]]},
        {"id": 7, "op": "resim", "lines": recording.inputlog},
    ])
    assert all("error" not in reply for reply in replies), replies
    plain, reseeded, untouched = _log(replies[0]["out"]), _log(replies[1]["out"]), _log(replies[6]["out"])
    assert reseeded[:len(plain)] == plain == untouched[:len(plain)]  # nothing before the reseed changes
    assert "|message|The battle's RNG was reset." in reseeded[len(plain):]
    assert reseeded != untouched  # fresh luck: the rest of the battle went otherwise
    by_start = _log(replies[2]["out"] + replies[3]["out"])
    by_write = _log(replies[4]["out"] + replies[5]["out"])
    assert by_start == by_write == reseeded[:len(by_start)]  # the same reseed, however it arrives, same battle


def test_a_playout_passes_the_same_door_and_plays_only_the_policies_it_knows(tmp_path: Path) -> None:
    """Issue 48: the simulator-side rollouts (`playout`) let in nothing `write` would refuse, take only the named
    policies (no prototype names), and repeat exactly for the same seed."""
    marker = tmp_path / "marker"
    cases = injections(marker)
    good = {"op": "playout", "snapshot": "s", "lines": [reseed_line(3, "playout")], "policy": "heuristic",
            "seed": [1, 2, 3, 4], "maxTurns": 500, "first": {}, "inputlog": True}
    requests: list[dict] = [
        {"id": 0, "op": "start", "battle": "b", "format": "gen9randombattle", "lines": START},
        {"id": 1, "op": "snapshot", "battle": "b", "snapshot": "s"},
        *({**good, "id": 2 + n, "lines": [line]} for n, line in enumerate(cases)),
        *({**good, "id": 900 + n, "policy": name} for n, name in enumerate(
            ["__proto__", "constructor", "toString", "minimax", {"p1": "random"}, None])),
        {**good, "id": 990, "seed": "sodium,00"},
        {**good, "id": 991, "first": {"p1": {"action": "switch", "choice": "Nobody"}}},
        {**good, "id": 1000},
        {**good, "id": 1001},
        {**good, "id": 1002, "policy": {"p1": "random", "p2": "maxdamage"}},
    ]
    replies = _bridge(requests)
    assert "error" not in replies[0] and "error" not in replies[1]
    for line, reply in zip(cases, replies[2:2 + len(cases)]):
        assert reply["error"].startswith("input entry 0 refused: "), (line, reply)
    assert all(r["error"].startswith("unknown simulator policy") for r in replies[2 + len(cases):-5])
    assert replies[-5]["error"].startswith("seed must be") and "not legal for p1 here" in replies[-4]["error"]
    assert "error" not in replies[-3] and replies[-3]["inputlog"][-1].startswith((">p1 ", ">p2 ", ">forcetie"))
    assert {k: v for k, v in replies[-3].items() if k != "id"} == {k: v for k, v in replies[-2].items() if k != "id"}
    assert "error" not in replies[-1] and replies[-1]["reason"] in ("win", "tie", "turn limit")
    assert not marker.exists()


def test_a_fork_of_a_snapshot_passes_the_same_door(tmp_path: Path) -> None:
    """The analysis' copies of a decision (`snapshot`, then `fork` with lines) let in nothing `write` would refuse."""
    marker = tmp_path / "marker"
    cases = injections(marker)
    requests: list[dict] = [
        {"id": 0, "op": "start", "battle": "b", "format": "gen9randombattle", "lines": START},
        {"id": 1, "op": "snapshot", "battle": "b", "snapshot": "s"},
        *({"id": 2 + n, "op": "fork", "snapshot": "s", "battle": f"f{n}", "lines": [line]}
          for n, line in enumerate(cases)),
        {"id": 1000, "op": "fork", "snapshot": "s", "battle": "ok", "lines": [reseed_line(3, "fork"), ">p1 move 1"]},
        {"id": 1001, "op": "forget", "snapshot": "s"},
        {"id": 1002, "op": "fork", "snapshot": "s", "battle": "late", "lines": []},
    ]
    replies = _bridge(requests)
    assert "error" not in replies[0] and "error" not in replies[1]
    for line, reply in zip(cases, replies[2:2 + len(cases)]):
        assert reply["error"].startswith("input entry 0 refused: "), (line, reply)
    assert "error" not in replies[-3] and "|message|The battle's RNG was reset." in _log(replies[-3]["out"])
    assert replies[-1]["error"] == "no snapshot s"
    assert not marker.exists()


def test_bridge_refuses_every_injection_on_replay(tmp_path: Path) -> None:
    """``replay`` (a server log's whole input log in one request) passes the same door, before a line is fed."""
    marker = tmp_path / "marker"
    cases = injections(marker)
    requests = [{"id": n, "op": "replay", "format": "gen9randombattle", "opening": 3, "lines": [*START, ">p1 default", line]}
                for n, line in enumerate(cases)]
    requests.append({"id": len(cases), "op": "replay", "format": "gen9randombattle", "opening": 3, "lines": START})
    replies = _bridge(requests)
    for line, reply in zip(cases, replies):
        assert reply["error"].startswith("input entry 4 refused: "), (line, reply)
    assert "error" not in replies[-1] and replies[-1]["out"] and replies[-1]["outs"] == []
    assert not marker.exists(), "an injected line ran JavaScript"
