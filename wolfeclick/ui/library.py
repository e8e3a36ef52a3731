"""The recordings folder as the app sees it: list, open (cached), upload, export. No Gradio here.

Replay ids arrive from query strings and API calls, so they are checked against the schema's id pattern and
resolved with ``store.resolve_in`` before any file is touched; an upload's own file name is never used (its id is
derived from its content). Parsed recordings and their prepared views are cached by (id, size, mtime), so stepping
through a replay never re-reads or re-validates the file.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from wolfeclick.battle.schema import Recording, is_valid_id
from wolfeclick.battle.store import (
    MAX_RECORDING_BYTES,
    RecordingError,
    load_recording,
    resolve_in,
    save_recording,
    write_atomic,
)
from wolfeclick.interop.sniff import read_any
from wolfeclick.ui.replay_html import replay_file
from wolfeclick.ui.view import BattleView

__all__ = ["Library", "ReplayInfo", "recordings_dir", "upload_id", "source_text", "LIST_LIMIT", "SOURCE_FILTERS"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
LIST_LIMIT = 500
"""The list shows the newest this many recordings."""


def recordings_dir() -> Path:
    """``$WOLFECLICK_RECORDINGS`` or ``recordings/`` at the project root."""
    return Path(os.environ.get("WOLFECLICK_RECORDINGS") or PROJECT_ROOT / "recordings").resolve()


def upload_id(data: bytes) -> str:
    """The content-derived id an uploaded recording is stored under."""
    return f"upload-{hashlib.sha256(data).hexdigest()[:16]}"


@dataclass(frozen=True)
class ReplayInfo:
    id: str
    p1: str
    p2: str
    winner: str
    turns: int
    format: str
    created: str
    mtime: float
    source: str = "played here"
    """Where the recording came from, in words (``source_text``)."""
    source_kind: str = "played"

    def row(self) -> list[str | int]:
        return [self.id, self.p1, self.p2, self.winner, self.turns, self.format, self.source,
                self.created[:19].replace("T", " ")]

    def as_dict(self) -> dict[str, str | int]:
        return {"id": self.id, "p1": self.p1, "p2": self.p2, "winner": self.winner, "turns": self.turns,
                "format": self.format, "created": self.created, "source": self.source,
                "source_kind": self.source_kind}


LIST_HEADERS = ["id", "p1", "p2", "winner", "turns", "format", "source", "date (UTC)"]
SOURCE_FILTERS = ["all", "played", "tournament", "training", "branch", "imported", "ladder"]
"""What the list can be narrowed to: every recording, or one ``SourceInfo.kind``."""


def source_text(recording: Recording) -> str:
    """``played here``, ``tournament <id>``, ``training env``, ``imported from <format>``, ``branch of <id>``…"""
    source = recording.source
    detail = source.detail or ""
    if source.kind == "played":
        return "played here"
    if source.kind == "imported":
        return f"imported from {detail}" if detail else "imported"
    if source.kind == "training":
        return f"training env ({detail})" if detail else "training env"
    if source.kind == "branch":
        return f"branch of {source.parent}" if source.parent else "branch"
    return f"{source.kind} {detail}".strip()


def _winner_text(recording: Recording) -> str:
    result = recording.result
    if result.winner:
        return f"{result.winner} · {recording.players[result.winner].name}"
    return {"tie": "tie", "turn_limit": "turn limit", "aborted": "aborted"}.get(result.reason, result.reason)


class Library:
    """One recordings folder. Thread-safe; share one instance across sessions."""

    def __init__(self, directory: Path | None = None, cache_size: int = 16) -> None:
        self.directory = Path(directory or recordings_dir()).resolve()
        self._exports: Path | None = None
        self._lock = threading.Lock()
        self._views: OrderedDict[str, tuple[tuple[int, int], Recording, BattleView]] = OrderedDict()
        self._infos: dict[str, tuple[tuple[int, int], ReplayInfo | None]] = {}
        self._cache_size = cache_size

    @property
    def exports(self) -> Path:
        """A private temporary folder for exported replay files (made on first use)."""
        if self._exports is None:
            self._exports = Path(tempfile.mkdtemp(prefix="wolfeclick-exports-"))
            atexit.register(shutil.rmtree, self._exports, ignore_errors=True)
        return self._exports

    # --- paths -----------------------------------------------------------------------------------------------
    def path(self, replay_id: str) -> Path:
        """The file of a replay id (RecordingError for an unsafe id; existence is not checked)."""
        if not isinstance(replay_id, str):
            raise RecordingError("invalid replay id")
        return resolve_in(self.directory, replay_id.strip())

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int]:
        stat = path.stat()
        return stat.st_size, stat.st_mtime_ns

    # --- listing ---------------------------------------------------------------------------------------------
    def list(self, source: str | None = None) -> list[ReplayInfo]:
        """Valid recordings, newest first (invalid files are left out); ``source`` keeps one SourceInfo kind."""
        if not self.directory.is_dir():
            return []
        entries = []
        for path in self.directory.glob("*.json"):
            if not is_valid_id(path.stem):
                continue
            try:
                stamp = self._stamp(path)
            except OSError:
                continue
            entries.append((path.stat().st_mtime, path, stamp))
        entries.sort(key=lambda e: (-e[0], e[1].name))
        out = []
        for mtime, path, stamp in entries[:LIST_LIMIT]:
            cached = self._infos.get(path.stem)
            if cached is None or cached[0] != stamp:
                info = None
                try:
                    rec = load_recording(path)
                    info = ReplayInfo(rec.id if rec.id == path.stem else path.stem,
                                      rec.players["p1"].name, rec.players["p2"].name,
                                      _winner_text(rec), rec.result.turns, rec.format, rec.created, mtime,
                                      source_text(rec), rec.source.kind)
                except RecordingError:
                    pass
                cached = (stamp, info)
                self._infos[path.stem] = cached
            if cached[1] is not None and (source in (None, "", "all") or cached[1].source_kind == source):
                out.append(cached[1])
        return out

    # --- opening ---------------------------------------------------------------------------------------------
    def _open(self, replay_id: str) -> tuple[Recording, BattleView]:
        path = self.path(replay_id)
        try:
            stamp = self._stamp(path)
        except OSError:
            raise RecordingError("no such replay") from None
        key = path.stem
        with self._lock:
            hit = self._views.get(key)
            if hit is not None and hit[0] == stamp:
                self._views.move_to_end(key)
                return hit[1], hit[2]
        recording = load_recording(path)
        view = BattleView.of(recording)
        with self._lock:
            self._views[key] = (stamp, recording, view)
            self._views.move_to_end(key)
            while len(self._views) > self._cache_size:
                self._views.popitem(last=False)
        return recording, view

    def get(self, replay_id: str) -> Recording:
        return self._open(replay_id)[0]

    def view(self, replay_id: str) -> BattleView:
        return self._open(replay_id)[1]

    # --- writing ---------------------------------------------------------------------------------------------
    def save(self, recording: Recording) -> Path:
        return save_recording(recording, self.directory)

    def upload(self, data: bytes) -> tuple[Recording, bool]:
        """Validate (or import) uploaded bytes and store them as ``upload-<sha256[:16]>.json``; (recording, new).

        The format is sniffed from the content (``interop.sniff.read_any``): a recording, an OpenEnv-WolfeClick log
        or replay, a Showdown replay or protocol log. Raises a WolfeClickError (one line) and writes nothing when the
        bytes are none of these.
        """
        if len(data) > MAX_RECORDING_BYTES:
            raise RecordingError(f"file is {len(data) / 1e6:.1f} MB; recordings are limited to "
                                 f"{MAX_RECORDING_BYTES // (1024 * 1024)} MB")
        recording = read_any(data)  # a recording, or a foreign battle log imported on the way in
        new_id = upload_id(data)
        recording = recording.model_copy(update={"id": new_id})
        path = self.path(new_id)
        if path.exists():
            return recording, False
        self.save(recording)
        return recording, True

    def export_html(self, replay_id: str) -> Path:
        """Write the Showdown replay file of a replay to the exports folder and return its path."""
        recording = self.get(replay_id)
        return write_atomic(self.exports / f"{recording.id}.html", replay_file(recording))
