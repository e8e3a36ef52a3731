"""Where the app's battle runs get their ``RecordingSaver`` (one per run: Live, ``/battle_stream``).

The battle store is gaining ``wolfeclick.battle.store.RecordingSaver(directory)`` (issue 8: a different battle
never replaces another with the same id). Until it is on this branch, ``_StandInSaver`` below implements the same
interface — ``.save(recording) -> Path``: the first save of a run picks a free id, later saves reuse it; ``.id`` —
so the app is written against it. Delete the stand-in when the store's version lands (the import prefers it).
"""

from __future__ import annotations

import threading
from pathlib import Path

from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import save_recording

__all__ = ["RecordingSaver"]


class _StandInSaver:
    """One battle run's saves: the first picks ``<id>``, ``<id>-2``, … (whichever is free), the rest reuse it."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.id: str | None = None
        self._lock = threading.Lock()

    def save(self, recording: Recording) -> Path:
        with self._lock:
            if self.id is None:
                base, n = recording.id, 1
                candidate = base
                while (self.directory / f"{candidate}.json").exists():
                    n += 1
                    candidate = f"{base}-{n}"
                self.id = candidate
            return save_recording(recording.model_copy(update={"id": self.id}), self.directory)


try:  # the store's own saver, once it exists
    from wolfeclick.battle.store import RecordingSaver  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - removed at merge
    RecordingSaver = _StandInSaver  # type: ignore[misc,assignment]
