"""The leaderboard's history is read through the one strict loader, and nothing in it can make the table fail as a
whole or count what was not checked (issue 28, items 2 and 3; issue 27, item 1).

Before, ``scan_history`` took any JSON: one file in the folder (100k-deep nesting, a seed of 2**64, an id that is a
list, a symlink to /dev/zero, a FIFO) gave rc 3 or a hang; a mirror match raised ``a policy cannot play itself``
from the ratings; twelve uploads of one real battle with the winner flipped moved the table.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wolfeclick.arena.history import scan_history
from wolfeclick.arena.leaderboard import games_of, leaderboard
from wolfeclick.arena.schedule import TournamentConfig
from wolfeclick.arena.tournament import RESULTS_FILE, run_tournament, tournament_dir
from wolfeclick.arena.verify import Verifications
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.store import RecordingError, load_recording, read_limited, save_recording
from wolfeclick.ui.context import AppContext
from wolfeclick.ui.library import Library
from wolfeclick.ui.tabs.leaderboard import leaderboard_json

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"


def sample() -> dict:
    return json.loads(SAMPLE.read_text())


def changed(change) -> str:  # type: ignore[no-untyped-def]
    data = sample()
    change(data)
    return json.dumps(data)


HOSTILE = {
    "deep": "[" * 100_000 + "]" * 100_000,
    "seed_1e300": SAMPLE.read_text().replace('"seed": 1,', '"seed": 1e300,', 1),
    "seed_2_64": changed(lambda d: d.__setitem__("seed", 2**64)),
    "seed_infinity": SAMPLE.read_text().replace('"seed": 1,', '"seed": Infinity,', 1),
    "turns_2_70": changed(lambda d: d["result"].__setitem__("turns", 2**70)),
    "id_a_list": changed(lambda d: d.__setitem__("id", ["a", "b"])),
    "policy_a_number": changed(lambda d: d["players"]["p1"].__setitem__("policy", 7)),
    "format_a_list": changed(lambda d: d.__setitem__("format", ["gen4randombattle"])),
    "created_an_object": changed(lambda d: d.__setitem__("created", {"t": 1})),
    "schema_2": changed(lambda d: d.__setitem__("schema", "wolfeclick.recording/2")),
    "eval_input": changed(lambda d: d["inputlog"].insert(3, ">eval process.exit(1)")),
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library with one good recording and every hostile file, a symlink to /dev/zero and a FIFO."""
    folder = tmp_path_factory.mktemp("hostile") / "recordings"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    for name, text in HOSTILE.items():
        (folder / f"{name}.json").write_text(text)
    (folder / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo.json")
    return folder


def test_the_strict_reader_refuses_a_fifo_and_a_device_at_once(library: Path) -> None:
    for name, expected in (("fifo.json", "not a regular file"), ("zero.json", "not a regular file")):
        with pytest.raises(RecordingError, match=expected):
            read_limited(library / name)


def test_the_scan_refuses_every_hostile_file_and_counts_the_good_one(library: Path) -> None:
    scan = scan_history(None, [library])
    refused = {Path(p).stem for p in scan.skipped}
    assert refused == {*HOSTILE, "fifo"}  # the symbolic link is never opened nor named (issue 60): only logged
    assert [e.battle for e in scan.entries] == [SAMPLE.stem]
    line = scan.refused_line()
    assert line is not None and "\n" not in line and line.startswith(f"{len(refused)} file(s) skipped")
    assert all(scan.reasons[p] for p in scan.skipped)


def test_cli_leaderboard_over_a_hostile_library_is_one_table_and_one_line(library: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "wolfeclick", "leaderboard", "--results", str(tmp_path / "r"),
                           "--recordings", str(library), "--min-battles", "1"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    notes = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(notes) == 1 and notes[0].startswith("note: 12 file(s) skipped") and "fifo.json" in notes[0]
    assert "1 battles" in done.stdout and "heuristic" in done.stdout


def test_the_app_leaderboard_over_a_hostile_library(library: Path, tmp_path: Path) -> None:
    ctx = AppContext(library=Library(library), results=tmp_path / "results")
    out = leaderboard_json(ctx, "all", "", "", 1)
    assert "error" not in out and out["battles"] == 1 and out["skipped"] == 12
    assert any("12 file(s) skipped" in note for note in out["notes"])
    assert {info.id for info in ctx.library.list()} == {SAMPLE.stem}  # the FIFO did not block the list


# --- issue 27, item 1: rows the ratings cannot take ---------------------------------------------------------------

@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tournament (one of its rows corrupted by hand) and a library holding a real mirror match."""
    root = tmp_path_factory.mktemp("mixed")
    results, recordings = root / "results", root / "recordings"
    config = TournamentConfig(players=("random", "heuristic"), pairs=1, format="gen9randombattle", seed=31)

    async def play() -> None:
        await run_tournament(config, results, concurrency=2, keep_recordings=False)
        mirror = await play_battle(make_policy("random"), make_policy("random"), format_id="gen9randombattle",
                                   seed=32, max_turns=5)
        save_recording(mirror, recordings)

    asyncio.run(play())
    rows_file = tournament_dir(results, config) / RESULTS_FILE
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    rows[1]["winner"] = "nobody"  # a winner who did not play
    rows[1]["turns"] = -3  # and a count no battle has (a wrong type refuses the whole file: see below)
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return results, recordings


def test_a_mirror_match_and_a_corrupted_row_leave_the_table_standing(mixed: tuple[Path, Path]) -> None:
    results, recordings = mixed
    scan = scan_history(results, [recordings])
    assert len(scan.entries) == 1  # the one good (and one-sided) tournament battle
    assert any("mirror match" in scan.reasons[p] for p in scan.unrated)
    assert any("row 2" in scan.reasons[p] for p in scan.skipped)
    board = leaderboard(scan.entries, min_battles=1)
    assert board.battles == 1 and {r.policy for r in board.rows} == {"random", "heuristic"}
    mirror = [e for e in scan_history(None, [recordings], verify=None).entries]
    assert mirror == [] and games_of(mirror) == []


def test_a_row_of_the_wrong_type_skips_its_tournament_in_one_line(mixed: tuple[Path, Path], tmp_path: Path) -> None:
    # Issue 32: rows are typed where they are read, so a wrong type is the file's fault, said once with its line
    # and key, instead of a per-row guess here (the numbers and ids of well-typed rows are still checked per row).
    results, _ = mixed
    source = next(p for p in results.iterdir() if (p / "tournament.json").is_file())
    copy = tmp_path / "results" / source.name
    shutil.copytree(source, copy)
    rows = [json.loads(line) for line in (copy / RESULTS_FILE).read_text().splitlines()]
    rows[0]["turns"] = 7
    rows[1]["turns"] = "many"  # a wrong type SQLite would not have taken
    (copy / RESULTS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    scan = scan_history(tmp_path / "results")
    assert scan.entries == [] and scan.skipped == [str(copy)]
    reason = scan.reasons[str(copy)]
    assert "\n" not in reason and f"{RESULTS_FILE} line 2 " in reason and "'turns'" in reason


def test_games_of_skips_a_mirror_entry_it_is_handed(mixed: tuple[Path, Path]) -> None:
    results, _ = mixed
    entry = scan_history(results).entries[0]
    mirror = entry.__class__(**{**entry.__dict__, "battle": "m", "p2": entry.p1, "winner": entry.p1})
    assert len(games_of([entry, mirror])) == 1  # ValueError: a policy cannot play itself, before
    assert leaderboard([entry, mirror], min_battles=1).battles == 1


def test_cli_and_app_leaderboard_with_a_mirror_match(mixed: tuple[Path, Path]) -> None:
    results, recordings = mixed
    done = subprocess.run([sys.executable, "-m", "wolfeclick", "leaderboard", "--results", str(results),
                           "--recordings", str(recordings), "--min-battles", "1"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    notes = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(notes) == 2 and "1 file(s) skipped" in notes[0] and "1 recording(s) left out" in notes[1]
    assert "mirror match" in notes[1]
    ctx = AppContext(library=Library(recordings), results=results)
    out = leaderboard_json(ctx, "all", "", "", 1)
    assert "error" not in out and out["battles"] == 1 and any("mirror match" in n for n in out["notes"])


# --- item 3: uploads count only once re-simulated ------------------------------------------------------------------

def flipped(data: dict, new_id: str) -> bytes:
    data = json.loads(json.dumps(data))
    data["id"] = new_id
    data["result"]["winner"] = "p2" if data["result"]["winner"] == "p1" else "p1"
    data["source"] = {"kind": "played"}  # a claim the Arena does not take from the file
    return json.dumps(data).encode()


def test_uploads_of_a_real_battle_count_once_and_flipped_ones_not_at_all(tmp_path: Path) -> None:
    library = Library(tmp_path / "recordings")
    genuine, _ = library.upload(SAMPLE.read_bytes())
    again, _ = library.upload(changed(lambda d: d.__setitem__("id", "another-id")).encode())  # same battle
    fakes = [library.upload(flipped(sample(), f"fake-{n}"))[0] for n in range(12)]
    assert genuine.source.kind == "imported" and all(f.source.kind == "imported" for f in fakes)
    verify = Verifications(tmp_path / "results")
    scan = scan_history(None, [library.directory], verify=verify)
    assert [e.battle for e in scan.entries] == [genuine.id]
    assert scan.entries[0].source == "imported"
    assert len(scan.unverified) == 12 and all("unverified" in scan.reasons[p] for p in scan.unverified)
    assert any("the same battle as" in scan.reasons[p] for p in scan.unrated)
    board = leaderboard(scan.entries, min_battles=1)
    heuristic = next(r for r in board.rows if r.policy == "heuristic")
    assert (heuristic.wins, heuristic.losses) == (1, 0)
    ran = verify.ran
    assert scan_history(None, [library.directory], verify=Verifications(tmp_path / "results")).entries == scan.entries
    assert ran == 14 and again.id != genuine.id  # every distinct file re-simulated once; the cache holds the rest


def test_an_upload_counts_nothing_without_verification(tmp_path: Path) -> None:
    library = Library(tmp_path / "recordings")
    library.upload(SAMPLE.read_bytes())
    scan = scan_history(None, [library.directory])
    assert scan.entries == [] and len(scan.unverified) == 1
    line = scan.left_out_line()
    assert line is not None and "unverified" in line


def test_an_upload_with_its_log_edited_to_match_is_caught_by_the_simulator(tmp_path: Path) -> None:
    data = sample()
    p1, p2 = data["players"]["p1"]["name"], data["players"]["p2"]["name"]
    winner = data["players"][data["result"]["winner"]]["name"]
    loser = p2 if winner == p1 else p1
    data["log"] = [f"|win|{loser}" if line == f"|win|{winner}" else line for line in data["log"]]
    data["result"]["winner"] = "p2" if data["result"]["winner"] == "p1" else "p1"
    library = Library(tmp_path / "recordings")
    library.upload(json.dumps(data).encode())
    scan = scan_history(None, [library.directory], verify=Verifications(tmp_path / "results"))
    assert scan.entries == [] and "differs" in scan.reasons[scan.unverified[0]]
    assert load_recording(SAMPLE).result.winner != data["result"]["winner"]


def test_a_fifo_named_results_jsonl_does_not_hang_the_scan(mixed: tuple[Path, Path], tmp_path: Path) -> None:
    results, _ = mixed
    source = next(p for p in results.iterdir() if (p / "tournament.json").is_file())
    copy = tmp_path / "results" / source.name
    copy.mkdir(parents=True)
    shutil.copy(source / "tournament.json", copy / "tournament.json")
    os.mkfifo(copy / RESULTS_FILE)
    scan = scan_history(tmp_path / "results")
    assert scan.skipped == [str(copy)] and "not a regular file" in scan.reasons[str(copy)]


def test_a_scan_cache_reads_unchanged_files_once_and_changed_ones_again(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from wolfeclick.arena import history

    folder = tmp_path / "recordings"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    cache: dict = {}
    first = scan_history(None, [folder], cache=cache)
    reads: list[Path] = []
    real = history.load_recording
    monkeypatch.setattr(history, "load_recording", lambda path: reads.append(path) or real(path))
    assert scan_history(None, [folder], cache=cache).entries == first.entries and reads == []
    (folder / SAMPLE.name).write_text(changed(lambda d: d.__setitem__("seed", 2**64)))
    again = scan_history(None, [folder], cache=cache)
    assert reads == [folder / SAMPLE.name] and again.entries == [] and len(again.skipped) == 1
    (folder / SAMPLE.name).unlink()
    assert scan_history(None, [folder], cache=cache).skipped == [] and cache == {}
