"""Showdown server battle logs: re-simulated from their input log into recordings like battles played here (both
players' views), checked against their own log, falling back to the public log, refused in one line otherwise.

The files are written here (``devkit/server_logs.py``, ``devkit/make_interop_fixtures.py``) from battles played on
the embedded simulator, in the shape a Showdown server writes them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from devkit.server_logs import resim_output, server_log
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import resimulate, spectator_log
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.store import RecordingError, load_recording, parse_recording
from wolfeclick.cli import main
from wolfeclick.interop.serverlog import SERVER_FORMAT, comparable, omniscient_log
from wolfeclick.interop.sniff import read_any, sniff

DATA = Path(__file__).resolve().parent / "data" / "interop"
SERVER = DATA / "showdown_server.json"


def _plain(turns):
    """Turn records without what differs between two runs of one battle (latency) or by player names (events)."""
    out = []
    for turn in turns:
        data = turn.model_dump(mode="json")
        data.pop("events")
        for decision in data["decisions"].values():
            decision.pop("latency_ms")
        out.append(data)
    return out


@pytest.fixture(scope="module")
def played():
    """The battle the fixture was written from (devkit/make_interop_fixtures.py: heuristic vs random, seed 7)."""
    return asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen9randombattle",
                                   seed=7))


def test_server_log_is_resimulated_into_a_battle_like_one_played_here(played):
    raw = json.loads(SERVER.read_text())
    assert any("avatar" in line for line in raw["inputLog"]) and raw["inputLog"][0].startswith(">version ")
    assert sniff(SERVER.read_bytes()) == SERVER_FORMAT
    recording = read_any(SERVER.read_bytes(), SERVER.name)
    assert parse_recording(recording.to_json()) == recording  # what `validate` and the library read back
    assert recording.source.kind == "imported" and recording.source.detail == SERVER_FORMAT
    assert recording.id == "showdownserver-" + raw["id"] and recording.seed is None
    assert recording.result.winner == "p1" and recording.result.reason == "win"
    assert recording.result.turns == raw["turns"]
    # both players' exact view at every decision, as the runner gave it when the battle was played here
    assert _plain(recording.turns) == _plain(played.turns)
    assert recording.reward_totals() == played.reward_totals()
    for turn in recording.turns:
        for decision in turn.decisions.values():
            assert decision.state.startswith("## Part A") and decision.legal_actions and decision.action is not None
    # names and ratings kept as metadata; the options the door does not take dropped from the input log
    assert {side: p.name for side, p in recording.players.items()} == {"p1": "Alice", "p2": "Bob"}
    assert recording.players["p1"].metadata["rating"]["elo"] == raw["p1rating"]["elo"]
    assert recording.players["p2"].metadata["server_name"] == "Bob"
    notes = recording.players["p1"].metadata["import"]["notes"]
    assert "re-simulated" in notes and "avatar, rating" in notes
    assert not any("avatar" in line or "rating" in line or line.startswith(">version") for line in recording.inputlog)


def test_the_resimulated_public_log_equals_the_files_own_log():
    raw = json.loads(SERVER.read_text())
    recording = read_any(SERVER.read_bytes())
    chunks = asyncio.run(resim_output(recording.inputlog))
    assert spectator_log(chunks) == recording.log  # the recording's log is the simulator's, again
    # the file's log (the room's omniscient view: exact HP, joins, chat, timers, ratings) says the same battle lines
    assert comparable(raw["log"]) == comparable(omniscient_log(chunks))
    assert len(comparable(raw["log"])) > 150
    assert asyncio.run(resimulate(recording)).ok


def test_a_log_the_input_log_does_not_reproduce_is_imported_from_its_public_log(tmp_path, capsys):
    raw = json.loads(SERVER.read_text())
    at = next(i for i, line in enumerate(raw["log"]) if line.startswith("|-damage|"))
    raw["log"][at] = raw["log"][at].rsplit("|", 1)[0] + "|1/999"  # the file's log no longer matches its input
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(raw))
    assert main(["import", str(path), "--out", str(tmp_path / "out")]) == 0
    [line] = capsys.readouterr().err.strip().splitlines()  # one line says the input log was not used, and why
    assert line.startswith(f"{path}: input log not used: its input log does not reproduce its log (line ")
    assert line.endswith("imported from its public log only") and "differs: recorded '|-damage|" in line
    recording = read_any(json.dumps(raw).encode())
    notes = recording.players["p1"].metadata["import"]["notes"]
    assert notes.startswith("input log not used: its input log does not reproduce its log (line ")
    assert "public log only" in notes and recording.inputlog == []
    assert recording.result.winner == "p1" and recording.players["p1"].metadata["rating"]["elo"] == 1523
    without = {key: value for key, value in json.loads(SERVER.read_text()).items() if key != "inputLog"}
    recording = read_any(json.dumps(without).encode())
    assert recording.players["p2"].metadata["import"]["notes"].startswith("input log not used: it has no input log")
    assert all(d.state == "" for t in recording.turns for d in t.decisions.values())


def test_a_forfeit_on_the_server_replays_as_a_forfeit(played):
    cut = next(i for i, line in enumerate(played.inputlog) if line.startswith(">p2 ")) + 6
    lines = [*played.inputlog[:cut], ">forcelose p2"]
    raw = asyncio.run(server_log(played, inputlog=lines, battle_id="gen9randombattle-2100000002"))
    recording = read_any(json.dumps(raw).encode())
    assert recording.players["p1"].metadata["import"]["notes"].startswith("re-simulated")
    assert recording.result.winner == "p1" and recording.result.reason == "forfeit"
    assert recording.result.error == "p2 forfeited on the server"
    assert recording.inputlog[-1] == ">forcelose p2" and asyncio.run(resimulate(recording)).ok


def _edit(log, index, old, new):
    """The input log with ``old`` replaced by ``new`` in its line ``index`` (2: ``>start``, 3 and 4: ``>player``)."""
    assert log[2].startswith(">start ") and log[3].startswith(">player p1 ")
    return [*log[:index], log[index].replace(old, new), *log[index + 1:]]


@pytest.mark.parametrize("change, expected", [
    (lambda log: [*log[:6], ">eval process.exit(1)", *log[6:]], "command not allowed: '>eval"),
    (lambda log: [*log[:6], ">p1 move 1\n>eval 1", *log[6:]], "line break or control character"),
    (lambda log: [*log[:6], ">tiebreak", *log[6:]], "command not allowed: '>tiebreak'"),
    (lambda log: _edit(log, 2, "gen9randombattle", "gen9randomdoublesbattle"), "doubles battles are not supported yet"),
    (lambda log: _edit(log, 2, '"seed"', '"evil":">eval 1","seed"'), None),
    (lambda log: _edit(log, 3, '"seed"', '"team":7,"seed"'), None),
    (lambda log: 7, "'inputLog' is not a list of lines"),
    (lambda log: [*log[:5], log[3], *log[5:]], "'>player' line out of place"),
    (lambda log: _edit(log, 4, "{", "{{"), "'>player' options are not JSON"),
    (lambda log: [*log[:3], ">player p1 " + "[" * 2000 + "]" * 2000, *log[4:]], "'>player' options are not JSON"),
    (lambda log: _edit(log, 3, '"seed"', '"x":NaN,"seed"'), "'>player' options are not JSON"),
    (lambda log: _edit(log, 3, '"seed"', '"x":"' + "y" * 5000 + '","seed"'), "longer than 4096 characters"),
])
def test_input_log_lines_are_rebuilt_and_judged_by_the_door(change, expected):
    raw = json.loads(SERVER.read_text())
    raw["inputLog"] = change(raw["inputLog"])
    if expected is None:  # unknown keys are dropped, not refused; a wrong value is the door's to judge
        try:
            recording = read_any(json.dumps(raw).encode())
        except RecordingError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 400
        else:
            assert not any("evil" in line for line in recording.inputlog)
        return
    with pytest.raises(RecordingError) as caught:
        read_any(json.dumps(raw).encode(), "x.json")
    message = str(caught.value)
    assert expected in message and "\n" not in message and len(message) < 500, message


def test_export_of_a_resimulated_server_log_gives_both_players_rows(tmp_path, capsys):
    out = tmp_path / "recordings"
    assert main(["import", str(SERVER), "--out", str(out)]) == 0
    path = Path(capsys.readouterr().out.strip())
    recording = load_recording(path)
    rows_file = tmp_path / "sft.jsonl"
    assert main(["export", str(path), "--side", "both", "--as", "sft", "--out", str(rows_file)]) == 0
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    decisions = sum(len(t.decisions) for t in recording.turns)
    assert len(rows) == decisions and {row["side"] for row in rows} == {"p1", "p2"}
    states = {(t.index, side): d.state for t in recording.turns for side, d in t.decisions.items()}
    assert all(row["prompt"] == states[(row["index"], row["side"])] for row in rows)
    assert main(["validate", str(path)]) == 0


def test_branch_and_rescore_replay_a_resimulated_server_log(tmp_path, capsys):
    """The battle starts from the server's own ``>start``/``>player`` lines (there is no seed of ours), so the
    recorded choices replay it: a policy can be asked at every decision, or take over at any point."""
    out = tmp_path / "recordings"
    assert main(["import", str(SERVER), "--out", str(out)]) == 0
    path = capsys.readouterr().out.strip()
    recording = load_recording(Path(path))
    assert main(["rescore", path, "--policy", "heuristic", "--side", "p1", "--out", str(tmp_path / "rescores")]) == 0
    printed = capsys.readouterr().out
    assert "heuristic" in printed
    # the fixture's p1 was the heuristic baseline: asked again at every decision, it agrees with itself
    rescore = json.loads(next((tmp_path / "rescores").rglob("*.json")).read_text())
    decided = [d for d in rescore["decisions"] if d["played"] is not None]
    assert len(decided) == sum("p1" in t.decisions for t in recording.turns)
    assert sum(d["agree"] for d in decided) >= 0.8 * len(decided), rescore
    assert main(["branch", path, "--at", "5", "--p1", "heuristic", "--p2", "random", "--out", str(out)]) == 0
    child = load_recording(Path(capsys.readouterr().out.strip().splitlines()[-1]))
    assert child.source.kind == "branch" and child.source.parent == recording.id
    assert _plain(child.turns[:5]) == _plain(recording.turns[:5])


def test_other_shapes_of_server_logs_are_resimulated_too():
    """The input log as one text under ``inputlog`` (what a server hands the replay site), a log that kept the
    simulator's ``|split|`` blocks, and a file with no log to check against (said so in the notes)."""
    from wolfeclick.sim.protocol import parse_chunk

    raw = json.loads(SERVER.read_text())
    text = {key: value for key, value in raw.items() if key != "inputLog"}
    text["inputlog"] = "\n".join(raw["inputLog"])
    assert read_any(json.dumps(text).encode()).players["p1"].metadata["import"]["notes"].startswith("re-simulated")
    chunks = asyncio.run(resim_output(read_any(SERVER.read_bytes()).inputlog))
    split = [line for chunk in chunks if parse_chunk(chunk).kind == "update" for line in parse_chunk(chunk).lines]
    assert any(line.startswith("|split|") for line in split)
    recording = read_any(json.dumps({**raw, "log": split}).encode())
    assert recording.players["p1"].metadata["import"]["notes"].startswith("re-simulated")
    tampered = [line.replace("|-damage|p2a", "|-damage|p1a", 1) if line.startswith("|-damage|p2a") else line
                for line in split]
    assert read_any(json.dumps({**raw, "log": tampered}).encode()).players["p1"].metadata["import"]["notes"] \
        .startswith("input log not used")
    bare = read_any(json.dumps({k: v for k, v in raw.items() if k != "log"}).encode())
    assert "no log to check" in bare.players["p1"].metadata["import"]["notes"] and bare.turns[0].decisions["p1"].state


def test_a_given_team_battle_with_team_preview_is_resimulated(tmp_path, capsys):
    """gen9ou: the teams travel in the ``>player`` lines (the simulator's validator judges them again) and team
    preview's ``team 5, 6, 2, 1, 4, 3`` is played as a battle here sends it."""
    teams = Path(__file__).resolve().parent / "data" / "teams" / "gen9ou"
    assert main(["record", "--p1", "heuristic", "--p2", "random", "--format", "gen9ou", "--teams", str(teams),
                 "--seed", "3", "--n", "1", "--out", str(tmp_path / "played")]) == 0
    played = load_recording(Path(capsys.readouterr().out.strip()))
    raw = asyncio.run(server_log(played, battle_id="gen9ou-2100000003"))
    assert any(line.startswith(">p1 team ") and "," in line for line in raw["inputLog"])
    recording = read_any(json.dumps(raw).encode())
    assert recording.players["p1"].metadata["import"]["notes"].startswith("re-simulated")
    assert recording.turns[0].decisions["p1"].action.action == "team"
    mine, theirs = _plain(recording.turns), _plain(played.turns)
    for turn in mine + theirs:
        for decision in turn["decisions"].values():
            decision.pop("policy_info")  # the baselines' own notes: a server log has none
    assert mine == theirs and recording.result == played.result


def test_an_input_log_cut_short_is_imported_from_its_public_log(played):
    """A battle the server never finished (it restarted, say): the choices run out with no ending; nothing is
    invented, the file is imported from its public log and ends ``aborted``."""
    cut = next(i for i, line in enumerate(played.inputlog) if line.startswith(">p2 ")) + 6
    raw = asyncio.run(server_log(played, inputlog=played.inputlog[:cut], battle_id="gen9randombattle-2100000004"))
    recording = read_any(json.dumps(raw).encode())
    notes = recording.players["p1"].metadata["import"]["notes"]
    assert notes.startswith("input log not used: its input log ends before the battle does (p")
    assert "has no choice left)" in notes
    assert recording.result.reason == "aborted" and recording.result.winner is None
