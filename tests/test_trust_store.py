"""The store and the schema: what validates can be served back, ids never collide, nothing half-written (issue 8).

Each test here reproduces one finding of the outside check (hostile files, kills, bad arguments) on the real
store, the real CLI and real battles.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from devkit.samples import SAMPLES
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import MAX_SEED, Recording, is_valid_id
from wolfeclick.battle.store import (
    EncodedRecording,
    RecordingError,
    RecordingSaver,
    load_recording,
    parse_recording,
    same_battle,
    save_recording,
    write_atomic,
)
from wolfeclick.cli import main
from wolfeclick.errors import StorageError, WolfeClickError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"


def sample() -> dict:
    return json.loads(SAMPLE.read_text())


def dump(tmp_path: Path, name: str, data: dict | str) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def with_change(change) -> dict:  # type: ignore[no-untyped-def]
    data = sample()
    change(data)
    return data


# --- 2, 3, 4, 9: the schema admits only what every reader can serve ---------------------------------------------

HOSTILE = {
    "one_player": (lambda d: d["players"].pop("p2"), "both p1 and p2"),
    "no_players": (lambda d: d.__setitem__("players", {}), "both p1 and p2"),
    "seed_beyond_64_bits": (lambda d: d.__setitem__("seed", 2**70), "field 'seed'"),
    "seed_at_2_63": (lambda d: d.__setitem__("seed", 2**63), "field 'seed'"),
    "turn_1e30": (lambda d: d["turns"][0].__setitem__("turn", 10**30), "field 'turns.0.turn'"),
    "result_turns_1e40": (lambda d: d["result"].__setitem__("turns", 10**40), "field 'result.turns'"),
    "seed_as_string": (lambda d: d.__setitem__("seed", "1"), "field 'seed'"),
    "seed_as_bool": (lambda d: d.__setitem__("seed", True), "field 'seed'"),
    "id_with_newline": (lambda d: d.__setitem__("id", d["id"] + "\n"), "field 'id'"),
    "huge_player_name": (lambda d: d["players"]["p1"].__setitem__("name", "x" * 5000), "field 'players.p1.name'"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_fields_are_refused_in_one_line(case: str, tmp_path: Path) -> None:
    change, expected = HOSTILE[case]
    path = dump(tmp_path, f"{case}.json", with_change(change))
    with pytest.raises(RecordingError) as info:
        load_recording(path)
    assert expected in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_refused(literal: str, tmp_path: Path) -> None:
    text = SAMPLE.read_text()
    assert '"latency_ms": ' in text
    head, tail = text.split('"latency_ms": ', 1)
    tail = tail[tail.index(","):]
    path = dump(tmp_path, "nan.json", head + f'"latency_ms": {literal}' + tail)
    with pytest.raises(RecordingError):
        load_recording(path)


def test_lone_surrogates_and_5000_digit_numbers_are_refused(tmp_path: Path) -> None:
    text = SAMPLE.read_text()
    surrogate = dump(tmp_path, "surrogate.json", text.replace('"heuristic"', '"\\ud800"', 1))
    digits = dump(tmp_path, "digits.json", text.replace('"seed": 1,', '"seed": ' + "9" * 5000 + ",", 1))
    for path in (surrogate, digits):
        with pytest.raises(RecordingError):
            load_recording(path)


def test_whatever_validates_serialises_with_orjson() -> None:
    """The app answers with orjson: every valid recording must go through it (it failed on ints beyond 64 bits)."""
    recording = load_recording(SAMPLE)
    orjson.dumps(recording.model_dump(mode="json", by_alias=True))
    biggest = recording.model_copy(update={"seed": MAX_SEED})
    assert orjson.loads(orjson.dumps(biggest.model_dump(mode="json", by_alias=True)))["seed"] == MAX_SEED


def test_is_valid_id_refuses_a_trailing_newline() -> None:
    assert is_valid_id("abc") and not is_valid_id("abc\n") and not is_valid_id("abc\r")


def test_validate_names_every_bad_file_and_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good_a = dump(tmp_path, "a.json", SAMPLE.read_text())
    big = dump(tmp_path, "big.json", SAMPLE.read_text().replace('"seed": 1,', '"seed": ' + "9" * 5000 + ",", 1))
    good_b = dump(tmp_path, "b.json", SAMPLE.read_text())
    assert main(["validate", str(good_a), str(big), str(good_b)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].endswith("ok (win, 30 decision points)") and lines[2].startswith(str(good_b))
    assert lines[1].startswith(f"{big}: not valid JSON")


def test_validate_a_folder_checks_the_recordings_inside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump(tmp_path, "a.json", SAMPLE.read_text())
    dump(tmp_path, "one-player.json", with_change(lambda d: d["players"].pop("p2")))
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "a.json: ok" in out and "one-player.json: field 'players'" in out and "Errno" not in out


# --- 5: ids never collide ---------------------------------------------------------------------------------------

def play(seed: int, max_turns: int) -> Recording:
    return asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen9randombattle",
                                   seed=seed, max_turns=max_turns))


def test_two_different_battles_of_one_seed_leave_two_recordings(tmp_path: Path) -> None:
    full, short = play(5, 300), play(5, 1)
    assert full.id == short.id and not same_battle(full, short)
    first = save_recording(full, tmp_path)
    second = save_recording(short, tmp_path)
    assert first != second
    assert len(load_recording(first).turns) == len(full.turns)  # the complete battle is untouched
    assert load_recording(second).id == second.stem and len(load_recording(second).turns) == len(short.turns)
    again = save_recording(play(5, 300), tmp_path)  # the same battle played again keeps its id
    assert again == first and sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name])


def test_an_encoded_recording_is_saved_byte_for_byte_as_the_recording_would_be(tmp_path: Path) -> None:
    # What a Ray worker sends instead of the recording: its bytes, parsed only when its id is taken.
    full, short, other = play(5, 300), play(5, 1), play(7, 2)
    squatter = play(99, 2).model_copy(update={"id": full.id})
    again = other.model_copy(update={"created": "2030-01-01T00:00:00Z"})  # the same battle, saved later
    for name, wrap in (("model", lambda r: r), ("encoded", EncodedRecording.of)):
        library = tmp_path / name
        save_recording(squatter, library)
        save_recording(other, library)
        assert save_recording(wrap(full), library).name == f"{full.id}-2.json"  # a different battle: a free id
        assert save_recording(wrap(short), library).name == f"{full.id}-3.json"
        assert save_recording(wrap(again), library).name == f"{other.id}.json"  # the same battle: in place
    model, encoded = ({p.name: p.read_bytes() for p in (tmp_path / n).iterdir()} for n in ("model", "encoded"))
    assert model == encoded and len(model) == 4
    assert model[f"{other.id}.json"] == again.to_json().encode()
    assert load_recording(tmp_path / "encoded" / f"{full.id}-2.json") == full.model_copy(update={"id": f"{full.id}-2"})
    assert EncodedRecording.of(short).decode() == short
    encoded_short = EncodedRecording.of(short)
    assert encoded_short.decode() is encoded_short.decode()  # parsed once, however many free ids are tried


def test_a_run_saver_replaces_only_its_own_checkpoints(tmp_path: Path) -> None:
    full = play(6, 300)
    save_recording(full, tmp_path)
    saver = RecordingSaver(tmp_path)
    partial = full.model_copy(update={"turns": full.turns[:3]})
    path = saver.save(partial)
    assert path.stem == f"{full.id}-2" and saver.id == path.stem
    assert saver.save(full.model_copy(update={"turns": full.turns[:8]})) == path
    assert len(load_recording(path).turns) == 8
    assert len(load_recording(tmp_path / f"{full.id}.json").turns) == len(full.turns)


# --- 13: no .tmp left by a killed writer; the loose checks made strict ---------------------------------------------

WRITER = """
import sys
from pathlib import Path
from wolfeclick.battle.store import write_atomic
text = "x" * (8 * 1024 * 1024)
print("ready", flush=True)
while True:
    write_atomic(Path(sys.argv[1]) / "big.json", text)
"""


def test_a_writer_killed_mid_write_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.4)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        write_atomic(tmp_path / "next.json", "{}")  # the next write into the folder clears what a kill left
        assert {p.name for p in tmp_path.iterdir()} - {"big.json"} == {"next.json"}


def test_write_failures_are_one_line_storage_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StorageError) as info:
        write_atomic(blocker / "x.json", "{}")
    assert isinstance(info.value, WolfeClickError) and str(blocker / "x.json") in str(info.value)


@pytest.mark.parametrize("args, expected", [
    (["record", "--p1", "random", "--p2", "random", "--concurrency", "0"], "--concurrency: 0 is out of range"),
    (["record", "--p1", "random", "--p2", "random", "--max-turns", "0"], "--max-turns: 0 is out of range"),
    (["record", "--p1", "random", "--p2", "random", "--seed", str(2**70)], "--seed"),
    (["record", "--p1", "random", "--p2", "random", "--n", "0"], "--n: 0 is out of range"),
    (["bench", "--players", "random,heuristic", "--pairs", "1", "--seed", "-1"], "--seed"),
])
def test_cli_refuses_out_of_range_numbers(args: list[str], expected: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*args, "--out", str(tmp_path / "out")])
    assert info.value.code == 2 and expected in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_failed_bench_does_not_block_its_own_rerun(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tournament whose every battle failed to start leaves no results; running it again must not need --resume."""
    args = ["bench", "--players", "random,heuristic", "--pairs", "1", "--format", "gen9randombattle",
            "--out", str(tmp_path), "--no-recordings"]
    config_dirs_before = list(tmp_path.glob("*/tournament.json"))
    assert config_dirs_before == []
    # Simulate the state a crash right after the config write leaves: a tournament.json and no progress.
    from wolfeclick.arena.schedule import TournamentConfig
    from wolfeclick.arena.tournament import _config_text, tournament_dir

    config = TournamentConfig(players=("random", "heuristic"), pairs=1, format="gen9randombattle", seed=0)
    directory = tournament_dir(tmp_path, config)
    write_atomic(directory / "tournament.json", _config_text(config))
    assert main(args) == 0, capsys.readouterr().err
    assert (directory / "results.jsonl").exists()


# --- 14: one error family ------------------------------------------------------------------------------------------

def test_user_errors_are_one_line_and_bugs_show_a_traceback(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    user = subprocess.run([sys.executable, "-m", "wolfeclick", "record", "--p1", "nosuch", "--p2", "random",
                           "--out", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert user.returncode == 2 and user.stderr.count("\n") == 1 and "Traceback" not in user.stderr
    bug = subprocess.run([sys.executable, "-c", "import sys, wolfeclick.cli.main_parser as c\n"
                          "c.COMMANDS['schema'] = lambda args: 1 / 0\nsys.exit(c.main(['schema']))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert bug.returncode == 3 and "Traceback" in bug.stderr and "ZeroDivisionError" in bug.stderr
    assert "this is a bug" in bug.stderr


def test_parse_recording_accepts_the_samples_unchanged() -> None:
    for path in SAMPLES:
        assert parse_recording(path.read_bytes()).id == path.stem


def test_a_tournament_never_replaces_a_different_battle_in_a_shared_library(tmp_path: Path) -> None:
    from wolfeclick.arena.schedule import TournamentConfig, build_schedule
    from wolfeclick.arena.tournament import load_results, run_tournament, tournament_dir

    config = TournamentConfig(players=("random", "heuristic"), pairs=1, format="gen9randombattle", seed=3)
    library = tmp_path / "library"
    first = build_schedule(config)[0]
    squatter = play(99, 2).model_copy(update={"id": first.battle_id})
    save_recording(squatter, library)
    asyncio.run(run_tournament(config, tmp_path / "results", recordings_dir=library))
    rows = load_results(tournament_dir(tmp_path / "results", config))[1]
    by_index = {row["index"]: row for row in rows}
    assert by_index[first.index]["recording"] == f"{first.battle_id}-2"
    assert load_recording(library / f"{first.battle_id}.json") == squatter  # untouched
    for row in rows:
        saved = load_recording(library / f"{row['recording']}.json")
        assert saved.source.kind == "tournament" and saved.source.detail == config.id
