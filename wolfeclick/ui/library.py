"""The recordings folder as the app sees it: list, open (cached), upload, export. No Gradio here.

Replay ids arrive from query strings and API calls, so they are checked against the schema's id pattern and
resolved with ``store.resolve_in`` before any file is touched; an upload's own file name is never used (its id is
derived from its content), and its bytes are stored exactly as received. A recording's id in the app is its file
name, and an upload's source is ``imported`` (``upload``) whatever the file claims (``store.as_filed``): the
leaderboard counts it only once re-simulated (docs/leaderboard.md). Every file is read through the strict loader
(a regular file, bounded read), so a FIFO or a device in the folder is left out at once. Parsed recordings and
their prepared views are cached by (id, size, mtime) within a memory budget in bytes (``cache_bytes``; an entry
is charged ``VIEW_BYTES_PER_FILE_BYTE`` × its file size, measured by benchmarks/app.py), so 16 huge uploads
cannot pin gigabytes, and files over ``HEAVY_BYTES`` are parsed one at a time (the memory beyond the budget is one
file's parse). The app checks uploads in a worker process (``ui.uploads``) and stores them with
``store_checked``, parsing nothing on the serving path. Whatever is on disk is served: a file that does not
parse, names fewer than two players, or is a symlink is left out of the list and never breaks it.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import hashlib
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from wolfeclick.battle.rescore import agreement_lines, decision_notes, load_rescores
from wolfeclick.battle.schema import Recording, is_valid_id
from wolfeclick.battle.store import (
    GZIP_MAGIC,
    MAX_RECORDING_BYTES,
    UPLOAD_PREFIX,
    UPLOADED,
    RecordingError,
    as_filed,
    inflate,
    json_size,
    load_recording,
    read_limited,
    refuse_compressed_upload,
    resolve_in,
    save_recording,
    write_atomic,
)
from wolfeclick.interop.sniff import FORMATS, read_any, sniff
from wolfeclick.paths import recordings_dir
from wolfeclick.sides import SIDES
from wolfeclick.ui.battle_panels import BattleView, shown_names
from wolfeclick.ui.replay_html import replay_file

__all__ = ["Library", "ReplayInfo", "recordings_dir", "upload_id", "source_text", "LIST_LIMIT",
           "VIEW_BYTES_PER_FILE_BYTE", "DEFAULT_CACHE_BYTES"]

LIST_LIMIT = 5000
"""The list reads the newest this many recordings (the page shows them searchable, 25 a page)."""
VIEW_BYTES_PER_FILE_BYTE = 6
"""Memory a parsed recording and its view take per byte of JSON file (measured: docs/benchmarks.md)."""
HEAVY_BYTES = 4 * 1024 * 1024
"""Files above this are parsed one at a time (a 20 MB recording's parse peaks near 6 × its size in memory)."""
DEFAULT_CACHE_BYTES = 160 * 1024 * 1024
"""The view cache's budget: opened replays beyond it are dropped, least recently used first. One largest upload
(20 MB, charged 120 MB) fits; 384 MB on top of the serving process's idle 245 MB left no room under the public app's
600 MB bound for the visitors' sessions and one heavy parse (issue 60)."""


def upload_id(data: bytes, recording: Recording | None = None) -> str:
    """The id an uploaded recording is stored under: readable (format, seed, both policies, slugged: the file is
    untrusted) and content-derived (12 hex digits of its SHA-256), so the same bytes always land on one id."""
    digest = hashlib.sha256(data).hexdigest()
    if recording is None:
        return f"{UPLOAD_PREFIX}{digest[:16]}"
    from wolfeclick.battle.runner import slug

    seed = [] if recording.seed is None else [f"s{recording.seed}"]
    policies = [recording.players[side].policy for side in SIDES if side in recording.players]
    pairing = ["-vs-".join(slug(policy, 24) if policy else "unknown" for policy in policies)] \
        if any(policies) else []  # an import knows no policy: no made-up "policy-vs-policy"
    return "-".join(["upload", slug(recording.format, 24), *seed, *pairing, digest[:12]])


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
    policies: str = ""
    source_kind: str = "played"

    def row(self) -> list[str | int]:
        return [self.id, self.p1, self.p2, self.winner, self.turns, self.format, self.source,
                self.created[:19].replace("T", " ")]

    def as_dict(self) -> dict[str, str | int]:
        return {"id": self.id, "p1": self.p1, "p2": self.p2, "winner": self.winner, "turns": self.turns,
                "format": self.format, "created": self.created, "source": self.source, "policies": self.policies,
                "source_kind": self.source_kind}


LIST_HEADERS = ["id", "p1", "p2", "winner", "turns", "format", "source", "date (UTC)"]
LIST_WIDTHS: list[str | int] = ["180px", "96px", "96px", "150px", "64px", "176px", "116px", "176px"]
"""Fixed widths (1054 px): a long id wraps in its own column instead of pushing the others out of view (Gradio
otherwise sizes each column to its longest text), so every column shows at 1280 px and a phone's row shows the id
and both players. Inline widths are all Gradio offers: its header table ignores CSS widths."""


def source_text(recording: Recording) -> str:
    """``played here``, ``tournament <id>``, ``training env``, ``imported from <format>``, ``imported (upload)``,
    ``branch of <id>``…"""
    source = recording.source
    detail = source.detail or ""
    if source.kind == "played":
        return "played here"
    if source.kind == "imported":
        if detail == UPLOADED.detail:
            return "imported (upload)"
        return f"imported from {detail}" if detail else "imported"
    if source.kind == "training":
        return f"training env ({detail})" if detail else "training env"
    if source.kind == "branch":
        at = f" at decision {source.branch_step + 1}" if source.branch_step is not None else ""
        return f"branch of {source.parent}{at}" if source.parent else "branch"
    return f"{source.kind} {detail}".strip()


def info_of(recording: Recording, replay_id: str, mtime: float) -> ReplayInfo | None:
    """The list row of a recording; None when it does not name both players (it cannot be shown)."""
    players = recording.players
    if "p1" not in players or "p2" not in players:
        return None
    names = shown_names(recording)
    return ReplayInfo(replay_id, names["p1"], names["p2"], _winner_text(recording, names),
                      recording.result.turns, recording.format, recording.created, mtime, source_text(recording),
                      f"{players['p1'].policy} {players['p2'].policy}", recording.source.kind)


def _winner_text(recording: Recording, names: dict[str, str]) -> str:
    result = recording.result
    if result.winner:
        name = names.get(result.winner)
        return f"{result.winner} · {name}" if name else result.winner
    return {"tie": "tie", "turn_limit": "turn limit", "aborted": "aborted"}.get(result.reason, result.reason)


class Library:
    """One recordings folder. Thread-safe; share one instance across sessions."""

    def __init__(self, directory: Path | None = None, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.directory = Path(directory or recordings_dir()).resolve()
        self._exports: Path | None = None
        self._lock = threading.Lock()
        self._views: OrderedDict[str, tuple[tuple[int, int], Recording, BattleView]] = OrderedDict()
        self._used: dict[str, float] = {}
        """When each cached view was last opened (``time.monotonic``): ``drop_idle_views`` reads it."""
        self._infos: dict[str, tuple[tuple[int, int], ReplayInfo | None]] = {}
        self.cache_bytes = cache_bytes
        self._heavy = threading.Semaphore(1)
        """One heavy file parsed at a time in this process: the memory beyond the cache is one file's parse."""

    def cached_bytes(self) -> int:
        """What the open views are charged against ``cache_bytes``."""
        with self._lock:
            return sum(stamp[0] * VIEW_BYTES_PER_FILE_BYTE for stamp, _, _ in self._views.values())

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
        return json_size(path, stat.st_size), stat.st_mtime_ns  # a compressed recording is charged what it holds

    # --- listing ---------------------------------------------------------------------------------------------
    def list(self, source: str | None = None) -> list[ReplayInfo]:
        """Valid recordings, newest first (``source``: only that ``SourceInfo.kind``). Files that are not valid
        recordings, name fewer than two players, or are symlinks (they could point anywhere) are left out; none of
        them can break the list."""
        if not self.directory.is_dir():
            return []
        entries = []
        for path in self.directory.glob("*.json"):
            if not is_valid_id(path.stem) or path.is_symlink():
                continue
            try:
                stat = path.lstat()
            except OSError:
                continue
            entries.append((stat.st_mtime, path, (stat.st_size, stat.st_mtime_ns)))
        entries.sort(key=lambda e: (-e[0], e[1].name))
        out = []
        seen = set()
        for mtime, path, stamp in entries[:LIST_LIMIT]:
            seen.add(path.stem)
            cached = self._infos.get(path.stem)
            if cached is None or cached[0] != stamp:
                info = None
                try:
                    info = info_of(as_filed(load_recording(path), path), path.stem, mtime)
                except RecordingError:
                    pass
                cached = (stamp, info)
                self._infos[path.stem] = cached
            if cached[1] is not None and (source in (None, "", "all") or cached[1].source_kind == source):
                out.append(cached[1])
        for gone in set(self._infos) - seen:  # deleted files leave the cache too
            self._infos.pop(gone, None)
        return out

    # --- opening ---------------------------------------------------------------------------------------------
    def _open(self, replay_id: str) -> tuple[Recording, BattleView]:
        """Parse and prepare a replay (blocking: call it off the event loop), or take it from the cache."""
        path = self.path(replay_id)
        try:
            if path.is_symlink():
                raise OSError
            stamp = self._stamp(path)
        except OSError:
            raise RecordingError("no such replay") from None
        key = path.stem
        with self._lock:
            hit = self._views.get(key)
            if hit is not None and hit[0] == stamp:
                self._views.move_to_end(key)
                self._used[key] = time.monotonic()
                return hit[1], hit[2]
        with self._heavy if stamp[0] > HEAVY_BYTES else contextlib.nullcontext():
            recording = as_filed(load_recording(path), path)  # an upload keeps its bytes; known by its file name
            if "p1" not in recording.players or "p2" not in recording.players:
                raise RecordingError("the recording does not name both players")
            view = BattleView.of(recording)
        with self._lock:
            self._views[key] = (stamp, recording, view)
            self._views.move_to_end(key)
            self._used[key] = time.monotonic()
            while self._views and sum(s[0] for s, _, _ in self._views.values()) * VIEW_BYTES_PER_FILE_BYTE \
                    > self.cache_bytes:
                self._used.pop(self._views.popitem(last=False)[0], None)
        return recording, view

    def drop_idle_views(self, idle_s: float, now: float | None = None) -> int:
        """Drop the cached views nobody opened in the last ``idle_s`` seconds (``now``: ``time.monotonic()``);
        returns how many. The budget bounds the cache under load; this lets a quiet app give it back (issue 60:
        the cache held its whole budget, 160 MB, long after the last visitor left)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            stale = [key for key in self._views if now - self._used.get(key, now) > idle_s]
            for key in stale:
                del self._views[key]
                self._used.pop(key, None)
        return len(stale)

    def get(self, replay_id: str) -> Recording:
        return self._open(replay_id)[0]

    def view(self, replay_id: str) -> BattleView:
        return self._open(replay_id)[1]

    def annotated(self, replay_id: str) -> tuple[BattleView, builtins.list[str]]:  # `list` here is Library.list
        """The view with what stored rescores (``<folder>/rescores/<id>/``) say in its decision panels, and the
        agreement summary (one line per rescore; a last line counts unreadable rescore files). Rescores are read
        on every open, so one stored after the replay was first opened shows at once."""
        view = self.view(replay_id)
        rescores, broken = load_rescores(self.directory, self.path(replay_id).stem)
        lines = agreement_lines(rescores)
        if broken:
            lines.append(f"{broken} rescore file{'s' if broken > 1 else ''} could not be read and {'are' if broken > 1 else 'is'} left out")
        return (view.with_notes(decision_notes(rescores)) if rescores else view), lines

    # --- writing ---------------------------------------------------------------------------------------------
    def save(self, recording: Recording) -> Path:
        return save_recording(recording, self.directory)

    def upload(self, data: bytes, name: str | None = None) -> tuple[Recording, bool]:
        """Validate uploaded bytes and store them, byte for byte, as ``upload_id`` names them;
        (recording, newly stored). The one entry point for uploads (``name`` is the uploader's file name, for
        format detection only; never used as a path). Blocking: call it off the event loop.

        The format is sniffed from the content (``interop.sniff``): a recording is stored exactly as received (the
        size checked is the size stored); an OpenEnv-WolfeClick log or replay, a Showdown replay or protocol log is
        imported and the recording stored. Raises a WolfeClickError (one line) and writes nothing otherwise.
        """
        if len(data) > MAX_RECORDING_BYTES:
            raise RecordingError(f"file is {len(data) / 1e6:.1f} MB; recordings are limited to "
                                 f"{MAX_RECORDING_BYTES // (1024 * 1024)} MB")
        refuse_compressed_upload(data)
        native = sniff(data) == FORMATS[0]
        recording = read_any(data, name or "")  # a recording, or a foreign battle log imported on the way in
        new_id, created = self.store_checked(data, None if native else recording.to_json().encode("utf-8"),
                                             replay_id=upload_id(data, recording))
        return as_filed(recording, self.path(new_id)), created

    def store_checked(self, data: bytes, stored: bytes | None, info: dict | None = None,
                      replay_id: str | None = None) -> tuple[str, bool]:
        """Store an upload already checked (``uploads.check_upload``: ``stored`` None keeps ``data`` byte for
        byte, else the imported recording's bytes) without parsing it here; ``info`` (its list row, from the
        check) fills the list's cache so listing it parses nothing either. (Its id, newly stored.)"""
        new_id = replay_id or (info or {}).get("id") or upload_id(data)
        path = self.path(new_id)
        if path.exists():
            return new_id, False
        try:
            write_atomic(path, data if stored is None else stored, replace=False)
        except FileExistsError:  # the same bytes, uploaded twice at once
            return new_id, False
        if info is not None:
            try:
                stat = path.lstat()
                self._infos[new_id] = ((stat.st_size, stat.st_mtime_ns),
                                       ReplayInfo(**{**info, "mtime": stat.st_mtime}))
            except (OSError, TypeError):
                pass  # listed the slow way
        return new_id, True

    def json_file(self, replay_id: str) -> Path:
        """The replay's JSON for download: its file, or for a gzip-compressed one (a training episode) the JSON it
        holds, written byte for byte to the exports folder."""
        path = self.path(replay_id)
        with open(path, "rb") as handle:
            if handle.read(len(GZIP_MAGIC)) != GZIP_MAGIC:
                return path
        return write_atomic(self.exports / path.name, inflate(read_limited(path)))

    def export_html(self, replay_id: str) -> Path:
        """Write the Showdown replay file of a replay to the exports folder and return its path."""
        recording = self.get(replay_id)
        return write_atomic(self.exports / f"{recording.id}.html", replay_file(recording))
