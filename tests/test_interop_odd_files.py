"""Real battle files the importers got wrong, one class each, on files made here in their shape (issue 45).

Forfeits and inactivity without a ``|win|`` line, a random format's ``"team":""``, anonymised input logs without
``>start``/``>player``, doubles recognised before anything else, a header in another order, the reference's early
logs without event tokens, and the upload/folder details. Real importer, real simulator: nothing is mocked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wolfeclick.battle.store import RecordingError, as_filed, load_recording, parse_recording
from wolfeclick.cli import main
from wolfeclick.interop.sniff import read_any
from wolfeclick.ui.library import source_text, upload_id

DATA = Path(__file__).resolve().parent / "data" / "interop"
SHOWDOWN = DATA / "showdown_replay.json"
PAGE = DATA / "showdown_replay.html"
SERVER = DATA / "showdown_server.json"
DOUBLES = DATA / "showdown_doubles.log"
RECORD = DATA / "record_battle.json"


def imported(data: bytes):
    recording = read_any(data, "x")
    assert parse_recording(recording.to_json()) == recording  # what `validate` reads back
    return recording


def notes(recording) -> str:
    return recording.players["p1"].metadata["import"]["notes"]


# --- 1. forfeits and inactivity without a |win| line -------------------------------------------------------------
def _ended_by(text: str, loser: str, message: str, names: dict[str, str]) -> str:
    """``text`` (the replay fixture: Alice p1, Bob p2) with players renamed and its ``|win|`` line replaced by the
    message a room writes when ``loser`` forfeits or times out (poke-env saves its logs just before ``|win|``)."""
    text = text.replace("|win|Bob", f"|-message|{names[loser]} {message}")
    for side, old in (("p1", "Alice"), ("p2", "Bob")):
        text = text.replace(f"|player|{side}|{old}|", f"|player|{side}|{names[side]}|")
    assert "|win|" not in text
    return text


@pytest.mark.parametrize("message", ["forfeited.", "lost due to inactivity."])
@pytest.mark.parametrize("names", [{"p1": "Alice", "p2": "Bob"}, {"p1": "Ash Ketchum", "p2": "Gary Oak 2"}])
@pytest.mark.parametrize("loser", ["p1", "p2"])
def test_a_forfeit_or_timeout_message_without_win_line_names_the_winner(message, names, loser):
    raw = json.loads(SHOWDOWN.read_text())
    raw["log"] = _ended_by(raw["log"], loser, message, names)
    raw.pop("players")
    winner = "p2" if loser == "p1" else "p1"
    page = _ended_by(PAGE.read_text(), loser, message, names)  # the page's slashes stay escaped
    for data in (json.dumps(raw).encode(), page.encode()):
        recording = imported(data)
        assert recording.result.winner == winner and recording.result.reason == "forfeit", recording.result
        assert recording.result.error == f"{loser} {message.rstrip('.')}"
        assert recording.players[winner].name == names[winner]


def test_a_win_line_respelling_the_winners_name_still_names_them():
    raw = json.loads(SHOWDOWN.read_text())
    raw["log"] = raw["log"].replace("|win|Bob", "|win|BOB ")
    assert imported(json.dumps(raw).encode()).result.winner == "p2"


def test_a_server_log_lost_on_time_says_so_when_resimulated():
    import asyncio

    from devkit.server_logs import server_log
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.battle.runner import play_battle

    played = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen9randombattle",
                                     seed=7))
    cut = next(i for i, line in enumerate(played.inputlog) if line.startswith(">p2 ")) + 6
    raw = asyncio.run(server_log(played, inputlog=[*played.inputlog[:cut], ">forcelose p2"]))
    at = next(i for i, line in enumerate(raw["log"]) if line.startswith("|win|"))
    raw["log"].insert(at, "|-message|Bob lost due to inactivity.")  # the room's words, before its |win| line
    recording = imported(json.dumps(raw).encode())
    assert notes(recording).startswith("re-simulated") and recording.result.reason == "forfeit"
    assert recording.result.error == "p2 lost due to inactivity on the server"


def test_a_message_naming_nobody_in_the_battle_still_ends_aborted():
    raw = json.loads(SHOWDOWN.read_text())
    raw["log"] = raw["log"].replace("|win|Bob", "|-message|Someone Else forfeited.")
    recording = imported(json.dumps(raw).encode())
    assert recording.result.winner is None and recording.result.reason == "aborted"


# --- 2. a random format's input log writes "team":"" -------------------------------------------------------------
def test_a_random_format_input_log_with_an_empty_team_is_resimulated():
    raw = json.loads(SERVER.read_text())
    raw["inputLog"] = [line.replace('"avatar"', '"team":"","avatar"') if line.startswith(">player ") else line
                       for line in raw["inputLog"]]
    assert sum('"team":""' in line for line in raw["inputLog"]) == 2
    recording = imported(json.dumps(raw).encode())
    assert notes(recording).startswith("re-simulated"), notes(recording)
    assert recording.turns[0].decisions["p1"].legal_actions


def test_null_options_and_an_old_servers_numeric_rated_are_read_as_the_simulator_reads_them():
    raw = json.loads(SERVER.read_text())
    raw["inputLog"] = [line.replace('"avatar"', '"team":null,"avatar"') if line.startswith(">player ") else
                       line.replace('"seed"', '"rated":1,"seed"') if line.startswith(">start ") else line
                       for line in raw["inputLog"]]
    recording = imported(json.dumps(raw).encode())
    assert notes(recording).startswith("re-simulated"), notes(recording)
    assert '"rated":true' in recording.inputlog[0] and "null" not in "".join(recording.inputlog)


def test_the_door_admits_an_empty_team_and_keeps_every_other_rule():
    from wolfeclick.sim.protocol import UnsafeInput, check_input_line

    check_input_line('>player p1 {"name":"A","team":""}')
    for line in ('>player p1 {"name":"A","team":"a\\nb"}', '>player p1 {"name":"A","team":7}',
                 '>player p1 {"name":"","team":""}', '>player p1 {"name":"A","team":"","avatar":"1"}'):
        with pytest.raises(UnsafeInput):
            check_input_line(line)


# --- 3. anonymised server logs: choices but no >start/>player ----------------------------------------------------
@pytest.mark.parametrize("cut", ["no start or players", "players only", "start only", "start after players"])
def test_an_anonymised_input_log_falls_back_to_the_public_log(cut):
    raw = json.loads(SERVER.read_text())
    keep = {"no start or players": (), "players only": (">player ",), "start only": (">start ",),
            "start after players": (">player ",)}[cut]
    start = next(line for line in raw["inputLog"] if line.startswith(">start "))
    raw["inputLog"] = [line for line in raw["inputLog"]
                       if not line.startswith((">start ", ">player ", ">version")) or line.startswith(keep)]
    if cut == "start after players":
        raw["inputLog"].insert(2, start)
    raw["p1"], raw["p2"] = "3f2a9c", "b81d07"  # what an anonymiser leaves
    raw["log"] = [line.replace("Alice", "3f2a9c").replace("Bob", "b81d07") for line in raw["log"]]
    recording = imported(json.dumps(raw).encode())
    assert notes(recording).startswith("input log not used: its input log does not start a battle"), notes(recording)
    assert "public log only" in notes(recording) and recording.inputlog == []
    assert recording.result.winner == "p1" and len(recording.turns) > 10


# --- 4. doubles recognised first ---------------------------------------------------------------------------------
def _doubles_server(**changes) -> dict:
    log = DOUBLES.read_text().splitlines()
    raw = {"winner": "Alice", "p1": "Alice", "p2": "Bob", "p1team": [], "p2team": [], "endType": "normal",
           "inputLog": ['>start {"formatid":"gen9randomdoublesbattle","seed":[1,2,3,4]}',
                        '>player p1 {"name":"Alice","team":"","seed":[1,2,3,4]}',
                        '>player p2 {"name":"Bob","team":"","seed":[5,6,7,8]}', ">p1 move 1 1, move 2 2",
                        ">p2 move 1 2, move 1 1"],
           "log": log, "format": "gen9randomdoublesbattle", "roomid": "battle-gen9randomdoublesbattle-1"}
    raw.update(changes)
    return raw


@pytest.mark.parametrize("name, raw", [
    ("server log", _doubles_server()),
    ("anonymised, no format", _doubles_server(inputLog=[">p1 move 1 1, move 2 2"], format=None, roomid=None,
                                              log=[line for line in DOUBLES.read_text().splitlines()
                                                   if not line.startswith(("|tier|", "|gametype|"))])),
    ("vgc, input log refused", _doubles_server(inputLog=[">start {}", ">eval 1"], format="[Gen 9] VGC 2024 Reg G")),
    ("a tool's vgc log without gametype or tier", _doubles_server(
        format="gen9vgc2024regg", inputLog=None,
        log=[line for line in DOUBLES.read_text().splitlines() if not line.startswith(("|tier|", "|gametype|"))])),
])
def test_doubles_server_logs_are_refused_as_doubles_before_any_other_check(name, raw):
    with pytest.raises(RecordingError) as caught:
        read_any(json.dumps(raw).encode(), "x.json")
    assert "doubles battles are not supported yet" in str(caught.value), (name, str(caught.value))


def _page(log: str, title: str, klass: str = "battle-log-data") -> str:
    return (f'<!DOCTYPE html>\n<meta charset="utf-8" />\n<title>{title} replay: Alice vs. Bob</title>\n'
            f'<input type="hidden" name="replayid" value="gen9vgc2024regg-2000000009" />\n'
            f'<script type="text/plain" class="{klass}">{log.replace("/", chr(92) + "/")}</script>\n')


@pytest.mark.parametrize("klass", ["battle-log-data", "log"])
def test_a_saved_vgc_page_is_refused_as_doubles(klass):
    """A VGC page whose log a tool cut to its battle lines (no ``|gametype|``, ``|tier|`` or ``|gen|``; the title
    and the replay id name the format), old pages' ``class="log"`` block included."""
    body = "\n".join(line for line in DOUBLES.read_text().splitlines()
                     if not line.startswith(("|tier|", "|gametype|", "|gen|")))
    with pytest.raises(RecordingError) as caught:
        read_any(_page(body, "[Gen 9] VGC 2024 Reg G", klass).encode(), "vgc.html")
    assert "doubles battles are not supported yet" in str(caught.value), str(caught.value)


def test_a_vgc_page_without_a_log_block_is_still_called_doubles():
    page = _page("", "[Gen 9] VGC 2024 Reg G").replace('class="battle-log-data"', 'class="other"')
    with pytest.raises(RecordingError, match="doubles battles are not supported yet"):
        read_any(page.encode(), "vgc.html")


@pytest.mark.parametrize("kind", ["triples", "multi", "freeforall"])
def test_every_gametype_but_singles_is_named(kind):
    text = DOUBLES.read_text().replace("|gametype|doubles", f"|gametype|{kind}")
    with pytest.raises(RecordingError, match=f"{kind} battles are not supported yet"):
        read_any(text.encode(), "x.log")


def test_names_that_look_like_doubles_do_not_refuse_a_singles_battle():
    page = PAGE.read_text().replace("<title>[Gen 9] Random Battle replay: Alice vs. Bob</title>",
                                    "<title>Alice vs. DoublesKing</title>")
    assert imported(page.encode()).format == "gen9randombattle"
    raw = json.loads(SHOWDOWN.read_text())
    raw["id"] = "gen9randombattle-vgcfan-1"  # the log says |gametype|singles: believed
    assert imported(json.dumps(raw).encode()).result.winner == "p2"


def test_an_old_page_of_a_singles_battle_imports_from_its_log_block():
    for klass in ('class="log"', "class=log"):
        page = PAGE.read_text().replace('class="battle-log-data"', klass)
        assert imported(page.encode()).result.winner == "p2"


def test_an_old_replay_without_a_gen_line_is_read_as_generation_5():
    """Showdown wrote ``|gen|`` from generation 6 on: an old replay says ``|tier|OU`` and its id ``ou-…``."""
    raw = json.loads(SHOWDOWN.read_text())
    raw["log"] = "\n".join(line.replace("[Gen 9] Random Battle", "Random Battle") for line in raw["log"].split("\n")
                           if not line.startswith("|gen|"))
    raw.update(id="randombattle-123456", formatid=None, format="Random Battle")
    recording = imported(json.dumps(raw).encode())
    assert recording.format == "gen5randombattle" and "read as generation 5" in notes(recording)
    page = _page(raw["log"], "Battle Replay").replace("gen9vgc2024regg-2000000009", "randombattle-123456")
    assert imported(page.encode()).format == "gen5randombattle"
    bare = "\n".join(line for line in raw["log"].split("\n") if not line.startswith("|tier|"))
    with pytest.raises(RecordingError, match="the battle format is missing"):
        read_any(_page(bare, "Battle Replay").replace("gen9vgc2024regg-2000000009", "x-1").encode(), "p.html")


# --- 5. the header before |start in another order ----------------------------------------------------------------
def test_a_header_in_another_order_is_still_resimulated():
    raw = json.loads(SERVER.read_text())
    start = raw["log"].index("|start")
    header = raw["log"][:start]
    moved = [line for line in header if line.startswith(("|gen|", "|tier|", "|rule|"))]
    rest = [line for line in header if line not in moved]
    raw["log"] = [*list(reversed(moved)), *rest, *raw["log"][start:]]
    assert raw["log"][:start] != header and sorted(raw["log"][:start]) == sorted(header)
    recording = imported(json.dumps(raw).encode())
    assert notes(recording).startswith("re-simulated"), notes(recording)
    # a header that says something else is still a different battle
    raw["log"][raw["log"].index("|gen|9")] = "|gen|8"
    assert notes(imported(json.dumps(raw).encode())).startswith("input log not used")


# --- 6. the reference's early logs: no event tokens --------------------------------------------------------------
def _early() -> dict:
    raw = json.loads(RECORD.read_text())
    for turn in raw["turns"]:
        for key in ("showdown_event_tokens", "showdown_events", "battle_turn"):
            turn.pop(key, None)
    return raw


def test_an_early_reference_log_reads_turns_and_actives_from_what_it_has():
    raw = _early()
    recording = imported(json.dumps(raw).encode())
    turns = [t.turn for t in recording.turns]
    assert turns == [t["turn"] for t in raw["turns"]] and turns[0] >= 1
    assert recording.result.turns == raw["total_turns"]
    for record, turn in zip(recording.turns, raw["turns"]):
        text = turn["state_markdown"]
        own = re.search(r"### Active Self\n- Name: (.+)\n- HP: ([0-9.]+)%", text)
        foe = re.search(r"### Active Opponent\n- Name: (.+)\n- HP: ([0-9.]+)%", text)
        assert re.sub(r"[^a-z0-9]", "", record.snapshot["p1"].active.lower()) == own.group(1)
        assert record.snapshot["p1"].active_hp == pytest.approx(float(own.group(2)), abs=1)
        assert re.sub(r"[^a-z0-9]", "", record.snapshot["p2"].active.lower()) == foe.group(1)
        assert record.snapshot["p2"].active_hp == pytest.approx(float(foe.group(2)), abs=1)
    text = notes(recording)
    assert "rebuilt from the events" not in text and "no event tokens" in text, text
    assert recording.log == []
    for turn in raw["turns"]:
        turn.pop("turn")
    assert [t.turn for t in imported(json.dumps(raw).encode()).turns] == list(range(1, len(raw["turns"]) + 1))


def test_a_reference_log_with_rendered_events_only_rebuilds_its_log_from_them():
    raw = json.loads(RECORD.read_text())
    for turn in raw["turns"]:
        turn.pop("showdown_event_tokens")
    recording = imported(json.dumps(raw).encode())
    assert recording.log and recording.turns[-1].snapshot["p2"].active


def test_an_early_log_with_nothing_to_show_is_refused_in_one_line():
    raw = _early()
    for turn in raw["turns"]:
        turn.pop("state_markdown")
    with pytest.raises(RecordingError) as caught:
        read_any(json.dumps(raw).encode(), "early.json")
    assert "no event tokens" in str(caught.value) and "\n" not in str(caught.value)


# --- 7. uploads and folders ----------------------------------------------------------------------------------------
def test_an_upload_is_listed_as_imported_upload_and_named_without_empty_policies():
    data = PAGE.read_bytes()
    recording = read_any(data)
    replay_id = upload_id(data, recording)
    assert "policy-vs-policy" not in replay_id and "--" not in replay_id and replay_id.startswith("upload-gen9")
    assert source_text(as_filed(recording, Path(f"{replay_id}.json"))) == "imported (upload)"


def test_a_folder_of_mixed_real_files_says_what_became_of_each_class(tmp_path, capsys):
    folder = tmp_path / "battles"
    folder.mkdir()
    (folder / "server.json").write_bytes(SERVER.read_bytes())
    anon = json.loads(SERVER.read_text())
    anon["inputLog"] = [line for line in anon["inputLog"] if line.startswith((">p1 ", ">p2 "))]
    (folder / "anon.json").write_text(json.dumps(anon))
    (folder / "doubles.log").write_bytes(DOUBLES.read_bytes())
    (folder / "vgc.html").write_text(_page(DOUBLES.read_text(), "[Gen 9] VGC 2024 Reg G"))
    forfeit = json.loads(SHOWDOWN.read_text())
    forfeit["log"] = forfeit["log"].replace("|win|Bob", "|-message|Alice forfeited.") + \
        "\n|-start|p1a: Keldeo|madeupeffect"  # poke-env warns of effects it does not know
    (folder / "forfeit.json").write_text(json.dumps(forfeit))
    (folder / "early.json").write_text(json.dumps(_early()))
    (folder / "broken.json").write_text("{")
    out = tmp_path / "out"
    assert main(["import", str(folder), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    written = [load_recording(Path(p)) for p in captured.out.split()]
    assert len(written) == 4
    assert "poke-env" not in captured.err and "Unexpected effect" not in captured.err, captured.err
    summary = captured.err.strip().splitlines()[-4:]
    assert summary == [
        "imported 4 of 7 files",
        "re-simulated 1 server log from its input log; 1 from its public log only (input log not usable)",
        "refused 2 as not singles (not supported yet): 2 doubles",
        "refused 1 for other reasons: 1 not valid JSON",
    ], summary
