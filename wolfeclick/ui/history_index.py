"""The battle history as the app sees it: the index rebuilt on demand, read through filters, tables exported.

An adapter over ``wolfeclick.arena.history`` and ``leaderboard`` (no Gradio): the app's results folder and its
recordings library are the history, exactly what ``python -m wolfeclick leaderboard --results R --recordings L``
reads, so the tab and the CLI give the same table. Rebuilds are serialised by a lock (two sessions pressing
Refresh at once write the index one after the other); reading a filtered view of the index needs no lock (the
index is replaced by a rename, never rewritten in place). Everything here blocks: the tab calls it in a worker
thread.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from wolfeclick.arena.history import INDEX_FILE, BattleEntry, ScanCache, read_index, rebuild_index
from wolfeclick.arena.leaderboard import BoardQuery, Leaderboard, leaderboard
from wolfeclick.arena.verify import BackgroundVerifier, Verifications
from wolfeclick.battle.store import write_atomic

__all__ = ["Standings", "Computed", "EXPORT_NAMES"]

EXPORT_NAMES = ("leaderboard.json", "leaderboard.csv", "matrix.json", "matrix.csv")


@dataclass(frozen=True)
class Computed:
    """A table over the filtered history, the entries it rests on, what the last rebuild could not read, and the
    readable recordings it left out as unrated (a side's policy unknown: imported battles)."""

    board: Leaderboard
    entries: list[BattleEntry]
    skipped: list[str]
    formats: list[str]
    unrated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """The scan's one-line reports: files it could not read, recordings it left out (each counted and named)."""


class Standings:
    """One results folder and one recordings folder, rated together. Thread-safe; one per app context."""

    def __init__(self, results: Path, recordings: Path, *, count_uploads: bool = False) -> None:
        self.results = Path(results)
        self.recordings = Path(recordings)
        self.count_uploads = count_uploads
        """Rate verified uploads too (the operator's choice); off, they are shown apart and never read here."""
        self._lock = threading.Lock()
        self._skipped: list[str] = []
        self._unrated: list[str] = []
        self._rebuilt: float | None = None
        self._lines: list[str] = []
        self._files: ScanCache = {}
        """What each unchanged recording gave the last rebuild: a refresh reads only new or changed files."""
        self.verifications = Verifications(self.results)
        """Imported recordings count only once re-simulated (``arena.verify``); verdicts are cached."""
        self.verifier = BackgroundVerifier(self.verifications, on_verdict=self._stale)
        """Re-simulations run one at a time in a worker thread: a rebuild never waits for one."""
        self._refreshing: threading.Thread | None = None
        self._started_lock = threading.Lock()

    @property
    def index(self) -> Path:
        return self.results / INDEX_FILE

    def _stale(self) -> None:
        self._rebuilt = None  # a verdict came in: the next view rebuilds

    def counting_line(self) -> str:
        """Which battles the table counts (the Leaderboard says it above the notes)."""
        if not self.count_uploads:
            return ("Counts the battles played on this server; uploads are listed in Replays but not rated here "
                    "(the operator may count verified ones: $WOLFECLICK_APP_COUNT_UPLOADS).")
        pending = self.verifier.pending()
        queued = f" {pending} upload(s) are being re-simulated and count once checked." if pending else ""
        return "Counts the battles played on this server and uploads whose re-simulation reproduced them." + queued

    def rebuild(self) -> list[str]:
        """Rescan the files and rewrite the index; returns the files that could not be read. Uploads are not
        read unless they count; those that do are re-simulated in the background (``BackgroundVerifier``)."""
        with self._lock:
            verify = self.verifier if self.count_uploads else None
            _, scan = rebuild_index(self.results, [self.recordings], verify=verify, cache=self._files,
                                    uploads=self.count_uploads)
            self._skipped = list(scan.skipped)
            self._unrated = list(scan.unrated)
            self._lines = [line for line in (scan.refused_line(), scan.left_out_line()) if line]
            self._rebuilt = time.monotonic()
            return self._skipped

    def refresh(self, wait_s: float | None) -> bool:
        """Rebuild in a worker thread (joining one already running) and wait at most ``wait_s`` seconds (None:
        until done); whether it finished. A request that gives up serves the last table and says it is updating."""
        with self._started_lock:
            worker = self._refreshing
            if worker is None or not worker.is_alive():
                worker = self._refreshing = threading.Thread(target=self.rebuild, name="wolfeclick-standings",
                                                             daemon=True)
                worker.start()
        worker.join(wait_s)
        return not worker.is_alive()

    def rebuilt_within(self, seconds: float) -> bool:
        """Whether a rebuild finished less than ``seconds`` ago."""
        return self._rebuilt is not None and time.monotonic() - self._rebuilt < seconds

    def compute(self, query: BoardQuery, *, rebuild: bool, wait_s: float | None = None) -> Computed:
        """The table for ``query``: over a fresh index (``rebuild``, or when there is none yet) or the last one.
        ``wait_s``: wait at most this long for the rebuild, then serve the last table (if there is one) saying it
        is updating; None waits for it."""
        updating = False
        if rebuild or not self.index.exists():
            done = self.refresh(wait_s if self.index.exists() else None)
            updating = not done
        entries = read_index(self.index, format_id=query.format, since=query.since,
                             sources=list(query.sources) if query.sources else None)
        formats = sorted({e.format for e in read_index(self.index)})
        board = leaderboard(entries, min_battles=query.min_battles, period=query.period)
        lines = [self.counting_line(), *self._lines]
        if updating:
            lines.insert(0, "Updating: this table is the last one built; refresh in a moment for the new battles.")
        return Computed(board, entries, list(self._skipped), formats, list(self._unrated), lines)

    @staticmethod
    def export(board: Leaderboard, folder: Path) -> list[Path]:
        """The table and the pair matrix as JSON and CSV (`EXPORT_NAMES`) in a fresh subfolder of ``folder``."""
        target = Path(folder) / "leaderboard" / uuid.uuid4().hex[:12]
        matrix = board.to_dict()["matrix"]
        texts = (board.to_json(), board.table_csv(),
                 json.dumps(matrix, indent=2, sort_keys=True, ensure_ascii=False) + "\n", board.matrix_csv())
        return [write_atomic(target / name, text) for name, text in zip(EXPORT_NAMES, texts)]
