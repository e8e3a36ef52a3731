"""The simulator's door checks the fields inside ``>start``/``>player`` lines, in Python and in bridge.js alike
(lengths in code points on both sides), and every path that builds those lines — record, branch, take-over, resim —
builds them from names the door admits (issue 28, item 1).

A name carrying ``\\n|-message|…`` passed the raw-line check (the JSON escape hides the newline) and the simulator
then wrote ``|-message|`` and ``|html|`` lines of the uploader's choosing into the battle log; ``branch`` of such a
recording crashed (``KeyError: 'p1: Noctowl'``, rc 3).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from devkit.samples import SAMPLE_ID
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import resimulate
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import load_recording
from wolfeclick.cli import main
from wolfeclick.sim.process import BRIDGE, SHOWDOWN_DIR, node_executable
from wolfeclick.sim.protocol import UnsafeInput, check_input_line, door_names, start_lines

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / f"{SAMPLE_ID}.json"
START = start_lines("gen9randombattle", 5, {"p1": "alice", "p2": "bob"})
EMOJI = "\U0001f600"


def player(**options: object) -> str:
    return ">player p1 " + json.dumps(options)


def start(**options: object) -> str:
    return ">start " + json.dumps({"formatid": "gen9randombattle", **options})


HOSTILE_NAMES = {
    "message": "x\n|-message|the uploader speaks",
    "html": "|html|<b>x</b>",
    "line separator": "a\u2028|-message|b",
    "lone surrogate": "a\ud800",
    "leading space": " x",
    "empty": "",
    "101 characters": "a" * 101,
}
# (line, admitted): each is judged the same by protocol.py and by bridge.js
CASES = [
    *((player(name=name), False) for name in HOSTILE_NAMES.values()),
    (player(name=EMOJI * 100), True),  # 100 code points (200 UTF-16 units)
    (player(name=EMOJI * 101), False),
    (player(name="alice", seed=[1, 2, 3, 4]), True),
    (player(name="alice", seed=[1, 2, 3]), False),
    (player(name="alice", seed=[65536, 0, 0, 0]), False),
    (player(name="alice", seed=[[1], 2, 3, 4]), False),
    (player(name="alice", team="a\nb"), False),
    (player(name="alice", team=7), False),
    (player(name="alice", team=""), True),  # a random format's input log as a server writes it (issue 45)
    (player(name=7), False),
    (start(rated="x\n|html|<script>alert(1)</script>"), False),
    (start(rated="Rated|html|<script>alert(1)</script>"), False),
    (start(rated="Rated battle"), True),
    (start(rated=True), True),
    (start(rated=3), False),
    (start(seed="60520,1210,57425,18753"), True),
    (start(seed=[1, 2, 3, 4]), True),
    (start(seed="1,2,3,4\n>eval 1"), False),
    (start(seed=[2**64, 0, 0, 0]), False),
    ('>start {"formatid":"gen9randombattle","seed":[1e300,0,0,0]}', False),
    ('>start {"formatid":"gen9randombattle","seed":[Infinity,0,0,0]}', False),
    ('>start {"formatid":"gen9randombattle","seed":[NaN,0,0,0]}', False),
    (">start " + json.dumps({"formatid": "gen9 random|battle"}), False),
    (">start " + json.dumps({"formatid": "x" * 61}), False),
    ('>player p1 {"name":"ok","name":"bad\\n|-message|x"}', False),  # the last of two keys counts, on both sides
    ('>player p1 {"__proto__":{"name":"x"}}', False),
    (">p1 move " + EMOJI * 290, True),  # 295 code points, 585 UTF-16 units: validate and resim agree
    (">p1 move " + EMOJI * 296, False),  # 301 code points
]


@pytest.mark.parametrize("line, admitted", CASES)
def test_python_door_judges_decoded_fields(line: str, admitted: bool) -> None:
    if admitted:
        check_input_line(line)
    else:
        with pytest.raises(UnsafeInput):
            check_input_line(line)


def test_bridge_judges_every_case_as_python_does() -> None:
    """bridge.js spoken to directly (no Python check first): a refused line is refused by the door, an admitted
    one reaches the simulator (which may then call it an invalid choice — that is the battle's business)."""
    requests = [{"id": n, "op": "resim", "lines": [line] if line.startswith(">start") else [*START, line]}
                for n, (line, _) in enumerate(CASES)]
    text = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([node_executable(), str(BRIDGE)], input=text, capture_output=True, text=True, timeout=120,
                          env={"WOLFECLICK_SHOWDOWN": str(SHOWDOWN_DIR), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines() if line]
    verdicts = []
    for (line, _), reply in zip(CASES, replies):
        refused = "refused: " in reply.get("error", "")
        verdicts.append((line[:50], not refused))
        assert "\n" not in reply.get("error", "")
    assert verdicts == [(line[:50], admitted) for line, admitted in CASES]


def test_door_names_cleans_what_the_door_refuses_and_keeps_what_it_admits() -> None:
    cleaned = door_names({"p1": HOSTILE_NAMES["message"], "p2": HOSTILE_NAMES["html"]})
    assert cleaned == {"p1": "x-messagethe uploader speaks", "p2": "html<b>x</b>"}
    for name in cleaned.values():
        check_input_line(player(name=name))
    assert door_names({"p1": "heuristic", "p2": "random"}) == {"p1": "heuristic", "p2": "random"}
    assert door_names({"p1": "\n", "p2": ""}) == {"p1": "p1", "p2": "p2"}
    assert door_names({"p1": "Same", "p2": "same"}) == {"p1": "Same (p1)", "p2": "same (p2)"}


def _no_injected_lines(log: list[str]) -> None:
    assert not [line for line in log if line.startswith(("|-message|", "|html|", "|raw|"))]
    assert all("\u2028" not in line and "\n" not in line for line in log)


def test_a_battle_given_hostile_names_plays_with_cleaned_ones() -> None:
    names = {"p1": HOSTILE_NAMES["message"], "p2": HOSTILE_NAMES["html"]}
    recording = asyncio.run(play_battle(make_policy("random"), make_policy("maxdamage"), format_id="gen9randombattle",
                                        seed=8, max_turns=4, names=names))
    assert recording.result.reason != "aborted", recording.result.error
    assert {s: p.name for s, p in recording.players.items()} == door_names(names)
    _no_injected_lines(recording.log)


def _renamed(tmp_path: Path, names: dict[str, str], name: str = "inj_name") -> Path:
    data = json.loads(SAMPLE.read_text())
    for side, text in names.items():
        data["players"][side]["name"] = text
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    load_recording(path)  # a valid recording: validate accepts such names (it is the door's job to clean them)
    return path


@pytest.mark.parametrize("names", [
    {"p1": HOSTILE_NAMES["message"], "p2": HOSTILE_NAMES["html"]},
    {"p1": HOSTILE_NAMES["line separator"], "p2": "bob"},
])
def test_branch_of_a_recording_with_hostile_names_is_one_line_and_leaks_nothing(
        names: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["branch", str(_renamed(tmp_path, names)), "--at", "1", "--out", str(out)])
    captured = capsys.readouterr()
    assert code in (0, 1, 2), captured.err  # 3 was a KeyError or a validation traceback
    assert "Traceback" not in captured.err and len(captured.err.strip().splitlines()) <= 1
    for path in out.glob("*.json") if out.is_dir() else []:
        _no_injected_lines(load_recording(path).log)


def test_branch_of_a_cleanly_named_parent_still_reproduces_it(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["branch", str(SAMPLE), "--at", "3", "--out", str(out)]) == 0
    child = load_recording(Path(capsys.readouterr().out.split()[-1]))
    parent = load_recording(SAMPLE)
    assert child.log == parent.log and child.players["p1"].name == parent.players["p1"].name


@pytest.mark.parametrize("rated", ["x\n|html|<script>alert(1)</script>", "Rated|html|<script>alert(1)</script>|"])
def test_resim_of_a_hostile_rated_field_is_refused(rated: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(SAMPLE.read_text())
    first = json.loads(data["inputlog"][0].removeprefix(">start "))
    data["inputlog"][0] = ">start " + json.dumps({**first, "rated": rated})
    path = tmp_path / "rated.json"
    path.write_text(json.dumps(data))
    assert main(["validate", str(path)]) == 1
    assert "option rated refused" in capsys.readouterr().out
    hostile = Recording.model_construct(**{**dict(load_recording(SAMPLE)), "inputlog": data["inputlog"]})
    result = asyncio.run(resimulate(hostile, timeout=30))
    assert not result.ok and "input entry 0 refused: option rated refused" in result.message
