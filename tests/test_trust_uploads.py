"""Uploads are checked off the serving process (a worker process), one in flight per session, and a stored upload is
listed without being parsed where the app serves (issue 28, item 5). The load test with step latency and RSS is
benchmarks/upload_load.py (docs/benchmarks.md, "Uploads under load")."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from wolfeclick.battle.store import RecordingError, parse_recording
from wolfeclick.ui import library as library_mod
from wolfeclick.ui.library import Library, upload_id
from wolfeclick.ui.uploads import UploadBusy, UploadGate

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"


@pytest.fixture()
def gate():  # type: ignore[no-untyped-def]
    made = UploadGate()
    yield made
    made.close()


def test_the_check_runs_in_another_process_one_per_session(gate: UploadGate) -> None:
    data = SAMPLE.read_bytes()

    async def go() -> list:
        return await asyncio.gather(gate.check("a", data), gate.check("a", data), gate.check("b", data),
                                    return_exceptions=True)

    first, second, other = asyncio.run(go())
    assert isinstance(second, UploadBusy) and "still being checked" in str(second)
    assert first.stored is None and other.stored is None  # a recording is stored byte for byte
    assert first.info["id"] == upload_id(data, parse_recording(data)) and first.info["source_kind"] == "imported"
    assert gate._proc is not None and gate._proc.pid != os.getpid()


def test_a_bad_upload_is_one_line_and_a_dead_worker_is_replaced(gate: UploadGate) -> None:
    with pytest.raises(RecordingError) as info:
        asyncio.run(gate.check("a", b"[" * 100_000))
    assert "nested" in str(info.value) and "\n" not in str(info.value)
    assert gate._proc is not None
    gate._proc.kill()
    gate._proc.wait()
    assert asyncio.run(gate.check("a", SAMPLE.read_bytes())).stored is None


def test_a_checked_upload_is_listed_without_parsing_it_here(gate: UploadGate, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data = SAMPLE.read_bytes()
    checked = asyncio.run(gate.check("a", data))
    library = Library(tmp_path)
    replay_id, created = library.store_checked(data, checked.stored, checked.info)
    assert created and (tmp_path / f"{replay_id}.json").read_bytes() == data

    def no_parse(*_: object) -> None:
        raise AssertionError("the serving process parsed the upload to list it")

    monkeypatch.setattr(library_mod, "load_recording", no_parse)
    assert [info.id for info in library.list()] == [replay_id]
    assert library.list()[0].source == "imported (upload)"
