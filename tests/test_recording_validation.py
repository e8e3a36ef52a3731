"""`validate` and the store reject bad files with one clear line each, and never write half a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devkit.samples import SAMPLE_ID, SAMPLES
from wolfeclick.battle.schema import SCHEMA_VERSION, is_valid_id, json_schema
from wolfeclick.battle.store import MAX_RECORDING_BYTES, RecordingError, load_recording, parse_recording, resolve_in
from wolfeclick.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / f"{SAMPLE_ID}.json"


def sample_dict() -> dict:
    return json.loads(SAMPLE.read_text())


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = SAMPLE.read_text()
    wrong_version = sample_dict() | {"schema": "wolfeclick.recording/0"}
    missing = sample_dict()
    missing.pop("result")
    wrong_type = sample_dict()
    wrong_type["seed"] = "forty-two"
    nested_turn = sample_dict()
    nested_turn["turns"][0]["decisions"]["p1"]["latency_ms"] = "fast"
    big = tmp_path / "big.json"
    with big.open("w") as handle:
        handle.write('{"schema": "%s", "log": ["' % SCHEMA_VERSION)
        handle.write("x" * (MAX_RECORDING_BYTES + 10))
        handle.write('"]}')
    return {
        "truncated": (write(tmp_path, "truncated.json", good[: len(good) // 2]), "not valid JSON"),
        "version": (write(tmp_path, "version.json", json.dumps(wrong_version)), "unsupported schema version"),
        "missing": (write(tmp_path, "missing.json", json.dumps(missing)), "missing field 'result'"),
        "type": (write(tmp_path, "type.json", json.dumps(wrong_type)), "field 'seed'"),
        "deep_type": (write(tmp_path, "deep.json", json.dumps(nested_turn)), "field 'turns.0.decisions.p1.latency_ms'"),
        "big": (big, "limited to 20 MB"),
        "not_object": (write(tmp_path, "list.json", "[1, 2]"), "top level is not a JSON object"),
        "nested": (write(tmp_path, "nested.json", "[" * 10000 + "]" * 10000), "nested more than"),
        "binary": (write(tmp_path, "bin.json", ""), "not valid JSON"),
    }


def test_each_bad_file_gets_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = bad_files(tmp_path)
    for name, (path, expected) in cases.items():
        with pytest.raises(RecordingError) as info:
            load_recording(path)
        message = str(info.value)
        assert expected in message, (name, message)
        assert "\n" not in message
    code = main(["validate", SAMPLE.as_posix(), *(str(p) for p, _ in cases.values())])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 1
    assert len(out) == len(cases) + 1
    assert out[0].endswith("decision points)")
    assert all("Traceback" not in line for line in out)


def test_a_good_sample_validates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", *map(str, SAMPLES)]) == 0


def test_ids_are_safe_file_names(tmp_path: Path) -> None:
    for hostile in ["../../etc/passwd", "..", "/abs", "a/b", "%2e%2e", ".hidden", "", "a" * 200, "x\x00y"]:
        assert not is_valid_id(hostile)
        with pytest.raises(RecordingError, match="invalid replay id"):
            resolve_in(tmp_path, hostile)
    assert resolve_in(tmp_path, "gen9randombattle-s1-heuristic-vs-random").parent == tmp_path
    data = sample_dict() | {"id": "../escape"}
    with pytest.raises(RecordingError, match="field 'id'"):
        parse_recording(json.dumps(data))


def test_json_schema_is_exported_and_current() -> None:
    exported = json.loads((ROOT / "docs" / "recording.schema.json").read_text())
    assert exported == json_schema()
