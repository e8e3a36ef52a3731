"""Importers: our own fixtures in each foreign format, the public-log parser on battles played here in every random
battle generation, and one-line refusals for truncated or wrong-typed files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from devkit.samples import SAMPLES
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.store import RecordingError, load_recording, parse_recording
from wolfeclick.cli import main
from wolfeclick.interop.public import clean_log
from wolfeclick.interop.sniff import read_any, sniff

DATA = Path(__file__).resolve().parent / "data" / "interop"
RECORD = DATA / "record_battle.json"
REPLAY = DATA / "replay_battle.json"
SHOWDOWN = DATA / "showdown_replay.json"
HOSTILE = DATA / "showdown_hostile.log"


def imported(path: Path):
    recording = read_any(path.read_bytes(), path.name)
    again = parse_recording(recording.to_json())  # what `validate` and the library read back
    assert again == recording
    return recording


def test_each_format_is_recognised_from_its_content():
    assert sniff(RECORD.read_bytes()) == "openenv-wolfeclick record_battle"
    assert sniff(REPLAY.read_bytes()) == "openenv-wolfeclick replay_battle"
    assert sniff(SHOWDOWN.read_bytes()) == "showdown replay"
    assert sniff(HOSTILE.read_bytes()) == "showdown protocol log"
    native = SAMPLES[0]
    assert sniff(native.read_bytes()) == "wolfeclick recording"


def test_record_battle_maps_onto_the_decision_panel():
    raw = json.loads(RECORD.read_text())
    recording = imported(RECORD)
    assert recording.source.kind == "imported" and recording.source.detail == "openenv-wolfeclick record_battle"
    assert recording.seed is None and recording.inputlog == []  # what the source lacks stays empty
    assert recording.format == raw["format"] and recording.result.winner == "p1" and recording.result.reason == "win"
    assert len(recording.turns) == len(raw["turns"])  # every turn it holds
    for turn, source in zip(recording.turns, raw["turns"]):
        decision = turn.decisions["p1"]
        assert turn.deciding == ["p1"] and turn.turn == source["battle_turn"]
        assert decision.state == source["state_markdown"]
        assert [a.model_dump() for a in decision.legal_actions] == source["valid_actions"]
        assert decision.action.model_dump() == source["chosen_action"]
        assert decision.illegal == source["action_was_illegal"] and decision.latency_ms is None
        assert decision.reward.total == source["reward"]
        assert decision.policy_info.get("opponent_action") == source["opponent_action"]
    # the rebuilt log drives the view: both actives are known once the battle is under way
    later = recording.turns[len(recording.turns) // 2].snapshot
    assert later["p1"].active and later["p2"].active
    assert sum(1 for line in recording.log if line.startswith("|turn|")) >= recording.result.turns - 1


def test_replay_battle_keeps_every_turn_and_what_the_viewer_showed():
    raw = json.loads(REPLAY.read_text())
    recording = imported(REPLAY)
    assert recording.source.detail == "openenv-wolfeclick replay_battle"
    assert len(recording.turns) == len(raw["turns"])
    for turn, source in zip(recording.turns, raw["turns"]):
        decision = turn.decisions["p1"]
        assert decision.state == ""  # the viewer file never held the state markdown
        assert decision.action.model_dump() == source["player_action"]
        assert decision.policy_info["commentary"] == source["commentary"]
        assert [a.model_dump() for a in decision.legal_actions] == source["valid_actions"]
    assert recording.result.winner == "p1"
    assert any(line.startswith("|move|p1a: ") for line in recording.log)


def test_showdown_replay_is_public_only_with_shaped_reward():
    raw = json.loads(SHOWDOWN.read_text())
    recording = imported(SHOWDOWN)
    assert recording.id == "showdown-" + raw["id"] and recording.format == "gen9randombattle"
    assert recording.source.detail == "showdown replay"
    assert "public log only" in recording.players["p1"].metadata["import"]["notes"]
    assert {p.name for p in recording.players.values()} == {"Alice", "Bob"}
    assert recording.result.winner == "p2" and recording.result.reason == "win"
    turns = sum(1 for line in raw["log"].splitlines() if line.startswith("|turn|"))
    assert sum(1 for t in recording.turns if t.deciding == ["p1", "p2"]) == turns
    for turn in recording.turns:
        for decision in turn.decisions.values():
            assert decision.legal_actions == [] and decision.state == "" and decision.policy_info["public_only"]
            assert "turn" in decision.reward.components
    totals = recording.reward_totals()
    assert totals["p2"]["outcome"] == 10.0 and totals["p1"]["outcome"] == -10.0
    assert not any("|c|" in line or "|j|" in line or "|t:|" in line for line in recording.log)


def test_chat_html_and_timer_lines_are_dropped():
    text = HOSTILE.read_text()
    assert "|html|<div" in text and "<script>" in text  # the fixture is hostile
    recording = imported(HOSTILE)
    body = recording.to_json()
    assert "__pwned" not in body and "<script" not in body and "gl hf" not in body
    assert "lines dropped" in recording.players["p2"].metadata["import"]["notes"]
    kept, dropped = clean_log(["|c|☆A|hi", "|html|<b>x</b>", "|raw|<i>", "|t:|1", "|inactive|Timer",
                               "plain text", "|move|p1a: A|Tackle|p2a: B", "|uhtml|n|<b>", "|j|☆A"])
    assert kept == ["|move|p1a: A|Tackle|p2a: B"] and dropped == 8


async def _play_every_generation():
    jobs = [BattleJob(make_policy("heuristic"), make_policy("random"), f"gen{g}randombattle", 40 + g, 300)
            for g in range(1, 10)]
    return [recording async for _, recording in run_jobs(jobs, concurrency=3)]


@pytest.mark.slow
def test_public_log_parser_on_every_generation():
    """A simulator log of each gen1…gen9 random battle imports with the battle's turns, winner and actions."""
    recordings = asyncio.run(_play_every_generation())
    assert sorted(r.format for r in recordings) == [f"gen{g}randombattle" for g in range(1, 10)]
    for played in recordings:
        text = "\n".join(played.log)
        recording = read_any(text.encode())
        parse_recording(recording.to_json())
        assert recording.format == played.format, played.id
        assert recording.result.winner == played.result.winner and recording.result.turns == played.result.turns
        # every choice the simulator asked for shows in the public log as a decision point of the same sides
        assert [(t.turn, t.deciding) for t in recording.turns] == [(t.turn, t.deciding) for t in played.turns]
        seen = agree = 0
        for turn, truth_turn in zip(recording.turns, played.turns):
            for side, decision in turn.decisions.items():
                truth = truth_turn.decisions[side].action
                command = truth_turn.decisions[side].command
                if decision.action is None or truth is None or truth.action != "move" or len(command.split()) > 2 \
                        or decision.action.choice.startswith(("Max ", "G-Max ")):
                    continue  # a dynamaxed or Z move shows under its Max/Z name
                seen += 1
                agree += truth.choice.startswith(decision.action.choice)  # 'Hidden Power' of 'Hidden Power Ice 70'
        assert seen >= 5 and agree >= 0.9 * seen, (played.id, agree, seen)
        # shaped reward from public events alone stays near the one the runner computed from each side's view
        public, private = recording.reward_totals(), played.reward_totals()
        for side in ("p1", "p2"):
            assert public[side]["outcome"] == private[side]["outcome"]
            assert abs(public[side]["shaped"] - private[side]["shaped"]) < 0.5, (played.id, side, public, private)


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    record = json.loads(RECORD.read_text())
    replay = json.loads(REPLAY.read_text())
    showdown = json.loads(SHOWDOWN.read_text())
    cases = {
        "truncated record": RECORD.read_bytes()[:4000],
        "truncated replay": REPLAY.read_bytes()[: len(REPLAY.read_bytes()) // 2],
        "truncated showdown": SHOWDOWN.read_bytes()[:300],
        "record turns not a list": json.dumps({**record, "turns": "many"}).encode(),
        "record reward not a number": json.dumps({**record, "turns": [{**record["turns"][0], "reward": "high"}]}
                                                 ).encode(),
        "record state not text": json.dumps({**record, "turns": [{**record["turns"][0], "state_markdown": 3}]}
                                            ).encode(),
        "replay meta not an object": json.dumps({**replay, "meta": ["gen4randombattle"]}).encode(),
        "replay without format": json.dumps({**replay, "meta": {**replay["meta"], "format": None}}).encode(),
        "showdown log is empty": json.dumps({**showdown, "log": "|c|☆A|hi\n"}).encode(),
        "showdown unknown format": json.dumps({**showdown, "formatid": None, "id": "x",
                                               "format": "Custom Game", "log": "|turn|1\n|move|p1a: A|B|p2a: C"}
                                              ).encode(),
        "unknown json": b'{"hello": "world"}',
        "a list": b"[1, 2, 3]",
        "plain text": b"just some notes about a battle\n",
        "binary": bytes(range(256)),
        "empty": b"",
    }
    paths = {}
    for name, data in cases.items():
        path = tmp_path / f"{name.replace(' ', '-')}.json"
        path.write_bytes(data)
        paths[name] = path
    return paths


def test_truncated_or_wrong_type_foreign_files_get_one_line(tmp_path, capsys):
    paths = _bad_files(tmp_path)
    for name, path in paths.items():
        with pytest.raises(RecordingError) as caught:
            read_any(path.read_bytes(), path.name)
        message = str(caught.value)
        assert "\n" not in message and 10 < len(message) < 300, (name, message)
    assert "wrong type" in str(pytest.raises(RecordingError, read_any, paths["record turns not a list"].read_bytes())
                               .value)
    out = tmp_path / "out"
    assert main(["import", *map(str, paths.values()), "--out", str(out)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == len(paths) + 2 and not out.exists()  # one line per file, then the counts; nothing written
    assert lines[-2] == f"imported 0 of {len(paths)} files"
    assert lines[-1].startswith(f"refused {len(paths)} for other reasons: ")


def test_cli_import_then_validate(tmp_path, capsys):
    out = tmp_path / "recordings"
    assert main(["import", str(RECORD), str(REPLAY), str(SHOWDOWN), str(HOSTILE), "--out", str(out)]) == 0
    written = capsys.readouterr().out.split()
    assert len(written) == 4 and len(set(written)) == 4
    assert main(["validate", *written]) == 0
    assert capsys.readouterr().out.count(": ok (") == 4
    assert all(load_recording(Path(p)).source.kind == "imported" for p in written)


def test_imports_are_deterministic():
    for path in (RECORD, REPLAY, SHOWDOWN, HOSTILE):
        first, second = read_any(path.read_bytes()), read_any(path.read_bytes())
        assert first.model_copy(update={"created": ""}) == second.model_copy(update={"created": ""})


PAGE = DATA / "showdown_replay.html"
TIERLESS = DATA / "showdown_tierless.log"
DOUBLES = DATA / "showdown_doubles.log"
TRIPLES = DATA / "showdown_triples.log"


def _same_battle(a, b, dropped: str = "|none|"):
    """Two imports of one battle: the same decision points, actions, rewards, snapshots and log (``b``'s without
    its ``dropped`` lines)."""
    assert [t.model_dump(exclude={"events"}) for t in a.turns] == [t.model_dump(exclude={"events"}) for t in b.turns]
    assert a.result == b.result and a.log == [line for line in b.log if not line.startswith(dropped)]


def test_saved_replay_page_imports_the_log_inside_it():
    text = PAGE.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<\\/script>" not in text.split("battle-log-data")[0]
    assert sniff(PAGE.read_bytes()) == "showdown replay page"
    recording = imported(PAGE)
    assert recording.id == "showdown-gen9randombattle-2000000005" and recording.format == "gen9randombattle"
    assert recording.source.detail == "showdown replay page"
    _same_battle(recording, read_any(HOSTILE.read_bytes()))  # the page holds the hostile log, slashes escaped
    assert "<script" not in recording.to_json() and "\\/" not in "".join(recording.log)
    with pytest.raises(RecordingError, match="an HTML page without a battle log"):
        read_any(b"<!DOCTYPE html><title>not a replay</title>")


def test_a_log_without_tier_imports_with_its_generation():
    assert "|tier|" not in TIERLESS.read_text() and "|gen|9" in TIERLESS.read_text()
    recording = imported(TIERLESS)
    assert recording.format == "gen9"  # the generation alone: the log never named its format
    _same_battle(recording, read_any(SHOWDOWN.read_bytes()), "|tier|")  # the same battle as the replay JSON
    assert recording.result.winner == "p2"
    bare = "\n".join(line for line in TIERLESS.read_text().splitlines() if not line.startswith("|gen|"))
    with pytest.raises(RecordingError, match="the battle format is missing"):
        read_any(bare.encode())


@pytest.mark.parametrize("path, kind", [(DOUBLES, "doubles"), (TRIPLES, "triples")])
def test_doubles_and_triples_are_refused_never_read_as_singles(path, kind, tmp_path, capsys):
    text = path.read_text()
    assert f"|gametype|{kind}" in text and "|switch|p1b: " in text  # a real battle of that kind, played here
    cases = {
        "log": text,
        "no gametype line": "\n".join(line for line in text.splitlines() if not line.startswith("|gametype|")),
        "replay json": json.dumps({"id": f"gen9{kind}-1", "players": ["Alice", "Bob"], "log": text}),
    }
    for name, body in cases.items():
        with pytest.raises(RecordingError) as caught:
            read_any(body.encode(), path.name)
        message = str(caught.value)
        assert f"{kind if name != 'no gametype line' else 'doubles'} battles are not supported yet" in message, name
        assert "\n" not in message
    assert main(["import", str(path), "--out", str(tmp_path / "out")]) == 1
    assert "battles are not supported yet" in capsys.readouterr().err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("line, expected", [
    ("|turn|²", "no plain turn number"), ("|turn|①", "no plain turn number"), ("|turn|", "no plain turn number"),
    ("|turn|" + "9" * 40, "no plain turn number"),
    ("|-damage|p2a: Eevee|5/0", "HP '5/0' is not a valid HP"), ("|-damage|p2a: Eevee|-5/0", "HP '-5/0'"),
    ("|-heal|p2a: Eevee|-5/100", "HP '-5/100'"), ("|switch|p2a: Eevee|Eevee, L50|5/0", "HP '5/0'"),
])
def test_digits_and_hp_that_no_simulator_writes_are_one_line_refusals(line, expected):
    text = ("|gametype|singles\n|player|p1|A||\n|player|p2|B||\n|gen|9\n|tier|[Gen 9] Random Battle\n|start\n"
            "|switch|p1a: Pikachu|Pikachu, L50|100/100\n|switch|p2a: Eevee|Eevee, L50|100/100\n|turn|1\n"
            f"|move|p1a: Pikachu|Thunderbolt|p2a: Eevee\n{line}\n|turn|2\n")
    with pytest.raises(RecordingError) as caught:
        read_any(text.encode(), "bad.log")
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_log_too_long_to_record_is_refused_before_it_is_built(tmp_path, capsys):
    """60,000 ``|turn|`` lines (0.7 MB) would make a recording far over the 20 MB limit: refused, nothing written."""
    text = "|gametype|singles\n|player|p1|A||\n|player|p2|B||\n|gen|9\n|tier|[Gen 9] Random Battle\n|start\n" + \
        "".join(f"|turn|{n}\n" for n in range(1, 60_001))
    assert len(text) < 800_000
    path = tmp_path / "long.log"
    path.write_text(text)
    assert main(["import", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "60000 decision points" in err and "recordings are limited to 20 MB" in err
    assert not (tmp_path / "out").exists()


def test_import_reads_regular_files_only(tmp_path):
    """A FIFO (which would block a reader forever) and /dev/zero (endless) are refused without being read."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    done = subprocess.run([sys.executable, "-m", "wolfeclick", "import", str(fifo), str(zero), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 1, done.stderr
    assert f"{fifo}: a FIFO, not a battle file" in done.stderr and f"{zero}: a device, not a battle file" in done.stderr
    assert "imported 0 of 2 files\nrefused 2 for other reasons: 1 a FIFO, not a battle file, 1 a device, not a battle " \
        "file" in done.stderr


def test_folder_import_counts_what_it_imported_and_refused_by_reason(tmp_path, capsys):
    folder = tmp_path / "battles"
    (folder / "more").mkdir(parents=True)
    for path in (SHOWDOWN, HOSTILE, PAGE, TIERLESS, DOUBLES, TRIPLES):
        (folder / path.name).write_bytes(path.read_bytes())
    (folder / "more" / "copy-of-doubles.log").write_bytes(DOUBLES.read_bytes())
    (folder / "more" / "notes.txt").write_text("just some notes\n")
    (folder / "more" / "picture.png").write_bytes(b"\x89PNG")  # not a battle suffix: not even looked at
    out = tmp_path / "out"
    assert main(["import", str(folder), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    written = captured.out.split()
    assert len(written) == 4 and all(load_recording(Path(p)).source.kind == "imported" for p in written)
    summary = captured.err.strip().splitlines()[-3:]
    assert summary == ["imported 4 of 8 files", "refused 3 as not singles (not supported yet): 2 doubles, 1 triples",
                       "refused 1 for other reasons: 1 not a battle file"], summary
