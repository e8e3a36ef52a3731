"""Odd inputs to the commands: a take-over of an edited recording leaves no partial branch file, ``--since`` is a
whole ISO date, ``import`` reads no FIFO or device, and the ladder sends no password over plain http to another
machine (issue 28, item 7)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from devkit.samples import SAMPLE_ID
from wolfeclick.arena.leaderboard import parse_query
from wolfeclick.battle.branch import BranchError, stream_branch
from wolfeclick.battle.store import RecordingSaver, load_recording
from wolfeclick.errors import InputError
from wolfeclick.ladder.credentials import Secret
from wolfeclick.ladder.play import LadderOptions

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / f"{SAMPLE_ID}.json"


def test_take_over_of_an_edited_recording_leaves_no_partial_file(tmp_path: Path) -> None:
    data = json.loads(SAMPLE.read_text())
    data["id"] = "upload-0123456789abcdef"
    data["turns"][0]["events"].append("|-message|edited")  # the replay cannot say this: it diverges at decision 0
    (tmp_path / "parent.json").write_text(json.dumps(data))
    parent = load_recording(tmp_path / "parent.json")
    assert len(parent.turns) > 12
    out = tmp_path / "library"
    saver = RecordingSaver(out)

    async def checkpoint(partial) -> None:  # type: ignore[no-untyped-def]
        saver.save(partial)

    async def go() -> None:
        async for _ in stream_branch(parent, 1, {}, checkpoint=checkpoint):
            pass

    with pytest.raises(BranchError, match="diverged at decision 1;"):  # step 0 is decision 1
        asyncio.run(go())
    assert not out.exists() or list(out.iterdir()) == []  # an upload-…-b1-….json was left behind before


@pytest.mark.parametrize("since", ["2025-01-01' OR 1=1 --", "2025-01-01x", "2025-13-01", "2025-01-01 OR 1"])
def test_since_must_be_a_whole_iso_date(since: str) -> None:
    with pytest.raises(InputError, match="ISO date"):
        parse_query(since=since)


@pytest.mark.parametrize("since", ["2025-01-01", "2025-01-01T10:00:00", "2025-01-01T10:00:00+00:00"])
def test_iso_dates_and_times_are_accepted(since: str) -> None:
    assert parse_query(since=since).since == since


def test_import_of_a_fifo_or_a_device_is_one_line_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    done = subprocess.run([sys.executable, "-m", "wolfeclick", "import", str(tmp_path / "pipe.json"),
                           str(tmp_path / "zero.json"), "--out", str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 4, lines  # one line per file refused, then the folder import's counts (one per class)
    assert "a FIFO, not a battle file" in lines[0] and "a device, not a battle file" in lines[1], lines
    assert lines[2] == "imported 0 of 2 files" and lines[3].startswith("refused 2 for other reasons"), lines


@pytest.mark.parametrize("url", ["http://login.example.com/api/login", "ftp://x/y", "http://10.0.0.1/login"])
def test_the_ladder_refuses_to_send_a_password_in_clear(url: str) -> None:
    with pytest.raises(InputError, match="not https"):
        LadderOptions(server="ws://127.0.0.1:8000/showdown/websocket", format="gen9randombattle",
                      username="me", password=Secret("hunter2"), login_server=url)


@pytest.mark.parametrize("url", ["https://play.pokemonshowdown.com/api/login", "http://127.0.0.1:9000/login",
                                 "http://localhost/login"])
def test_https_and_this_machine_are_fine(url: str) -> None:
    LadderOptions(server="ws://127.0.0.1:8000/showdown/websocket", format="gen9randombattle", username="me",
                  password=Secret("hunter2"), login_server=url)
