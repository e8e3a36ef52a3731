"""A folder imports in worker processes (or on Ray) with the same bytes out whatever the worker count, the order the
files are named in or where they ran; a server log is simulated once (issue 63, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wolfeclick.interop.folder import import_files
from wolfeclick.interop.serverlog import SimHost
from wolfeclick.interop.sniff import read_any
from wolfeclick.sim.process import SimProcess

DATA = Path(__file__).resolve().parent / "data" / "interop"
CREATED = "2026-01-02T03:04:05+00:00"
FILES = ("showdown_replay.json", "showdown_hostile.log", "showdown_replay.html", "showdown_tierless.log",
         "record_battle.json", "replay_battle.json", "showdown_server.json", "showdown_doubles.log")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for name in FILES:
        (folder / name).write_bytes((DATA / name).read_bytes())
    # the same battle twice under other names: one recording, refreshed in place, whichever is saved first
    (folder / "again-replay.json").write_bytes((DATA / "showdown_replay.json").read_bytes())
    (folder / "again-hostile.log").write_bytes((DATA / "showdown_hostile.log").read_bytes())
    return folder


def _files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


def test_a_folder_imports_to_the_same_bytes_whatever_the_workers_and_order(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    files = sorted(folder.iterdir())
    runs = {}
    for name, paths, workers in (("one", files, 1), ("two", files, 2), ("reversed", files[::-1], 3)):
        saved: list[Path] = []
        summary = import_files(paths, tmp_path / name, workers=workers, created=CREATED, saved=saved.append)
        runs[name] = (_files(tmp_path / name), summary.lines(), saved)
    one, two, backwards = runs["one"], runs["two"], runs["reversed"]
    assert one[1] == ["imported 9 of 10 files",
                      "re-simulated 1 server log from its input log; 0 from their public log only "
                      "(input log not usable)",
                      "refused 1 as not singles (not supported yet): 1 doubles"], one[1]
    assert len(one[0]) == 7 and all(f'"created": "{CREATED}"' in text.decode() for text in one[0].values())
    assert one[0] == two[0] == backwards[0]  # byte for byte
    assert one[1] == two[1] == backwards[1]
    assert [p.name for p in one[2]] == [p.name for p in two[2]]  # told in input order
    assert [p.name for p in backwards[2]] == [p.name for p in one[2]][::-1]


@pytest.mark.fresh_simulators  # counts a process's requests from its start
def test_a_server_log_is_simulated_once(monkeypatch) -> None:
    """The file's log is checked against the runner's own simulator output, not a second re-simulation."""
    ops: list[str] = []
    call = SimProcess.call

    async def counted(self: SimProcess, op: str, **fields: object) -> dict:
        ops.append(op)
        return await call(self, op, **fields)

    monkeypatch.setattr(SimProcess, "call", counted)
    with SimHost() as host:
        recording = read_any((DATA / "showdown_server.json").read_bytes(), "", host)
    notes = recording.players["p1"].metadata["import"]["notes"]
    assert notes.startswith("re-simulated from its input log"), notes
    assert ops == ["hello", "replay"], ops  # its whole input log in one request (issue 63): no start, no resim


def test_a_server_log_whose_log_differs_still_falls_back(tmp_path: Path) -> None:
    """The check still bites: a log line the simulator never wrote sends the file to its public log."""
    import json

    raw = json.loads((DATA / "showdown_server.json").read_text())
    lines = raw["log"].split("\n") if isinstance(raw["log"], str) else list(raw["log"])
    at = next(i for i, line in enumerate(lines) if line.startswith("|move|"))
    parts = lines[at].split("|")
    parts[3] = "Splash" if parts[3] != "Splash" else "Tackle"
    lines[at] = "|".join(parts)
    raw["log"] = "\n".join(lines) if isinstance(raw["log"], str) else lines
    recording = read_any(json.dumps(raw).encode())
    notes = recording.players["p1"].metadata["import"]["notes"]
    assert notes.startswith("input log not used: its input log does not reproduce its log"), notes


@pytest.mark.ray
def test_a_folder_imported_on_ray_writes_the_local_bytes(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from wolfeclick.arena.engines.ray_engine import local_instance_options

    folder = _folder(tmp_path)
    local = import_files([folder], tmp_path / "local", workers=1, created=CREATED)
    ray.init(**local_instance_options(2))
    try:
        remote = import_files([folder], tmp_path / "ray", workers=2, created=CREATED, engine="ray")
    finally:
        ray.shutdown()
    assert _files(tmp_path / "ray") == _files(tmp_path / "local")
    assert remote.lines() == local.lines()
