"""Results that can be verified are verified: an imported recording counts on the leaderboard only once its input
log, re-simulated, reproduces its log and its log its result (``battle.resim.reproduces``).

A re-simulation takes a simulator process and up to a second per battle, so verdicts are kept in
``<results>/verified.json``, keyed by the SHA-256 of the recording's file bytes: a file that changes is verified
again; deleting the cache loses nothing but time. The cache is the Arena's own note, never read from a recording.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path

from wolfeclick.battle.resim import DEFAULT_RESIM_TIMEOUT, reproduces
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import MAX_RECORDING_BYTES, RecordingError, read_limited, write_atomic
from wolfeclick.errors import one_line

__all__ = ["VERIFIED_FILE", "Verifications", "BackgroundVerifier"]

VERIFIED_FILE = "verified.json"
_MAX_ENTRIES = 100_000


class Verifications:
    """A ``history.Verifier`` backed by a verdict cache file; thread-safe (one per results folder)."""

    def __init__(self, results: Path | str, timeout: float = DEFAULT_RESIM_TIMEOUT) -> None:
        self.path = Path(results) / VERIFIED_FILE
        self.timeout = timeout
        self._lock = threading.Lock()
        self._verdicts: dict[str, str | None] | None = None
        self.ran = 0
        """Re-simulations this object ran (the rest came from the cache)."""

    def _load(self) -> dict[str, str | None]:
        if self._verdicts is None:
            try:
                data = json.loads(read_limited(self.path, MAX_RECORDING_BYTES))
                ok = isinstance(data, dict) and all(isinstance(k, str) and (v is None or isinstance(v, str))
                                                    for k, v in data.items())
                self._verdicts = dict(data) if ok else {}
            except (RecordingError, ValueError):
                self._verdicts = {}  # no cache yet, or one that is not ours: verify again
        return self._verdicts

    @staticmethod
    def key(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    def known(self, data: bytes) -> tuple[bool, str | None]:
        """(whether a verdict is cached for these file bytes, that verdict)."""
        with self._lock:
            verdicts = self._load()
            key = self.key(data)
            return key in verdicts, verdicts.get(key)

    def verify_bytes(self, data: bytes, recording: Recording) -> str | None:
        """None when ``recording`` (whose file holds ``data``) reproduces itself, else one line why not."""
        seen, verdict = self.known(data)
        if seen:
            return verdict
        try:
            done = asyncio.run(reproduces(recording, self.timeout))
            verdict = None if done.ok else done.message
        except Exception as exc:  # noqa: BLE001 - no simulator here (say so; nothing is cached)
            return f"could not be re-simulated: {one_line(exc)}"
        with self._lock:
            self.ran += 1
            verdicts = self._load()
            verdicts[self.key(data)] = verdict
            if len(verdicts) > _MAX_ENTRIES:
                for old in list(verdicts)[: len(verdicts) - _MAX_ENTRIES]:
                    verdicts.pop(old)
            try:
                write_atomic(self.path, json.dumps(verdicts, sort_keys=True, indent=0) + "\n")
            except OSError:
                pass  # a read-only results folder: verified again next time
        return verdict

    def __call__(self, path: Path, recording: Recording) -> str | None:
        try:
            data = read_limited(path)
        except RecordingError as exc:
            return str(exc)
        return self.verify_bytes(data, recording)


class BackgroundVerifier:
    """A ``history.Verifier`` that never makes its caller wait: a cached verdict at once; a file not checked yet is
    queued for one worker thread (one re-simulation at a time, so a pile of uploads takes one simulator, never a
    request) and reads ``history.PENDING`` until its verdict is in. ``on_verdict`` is called after each check (the
    app marks its table stale, so the next view rebuilds it with the new verdict)."""

    def __init__(self, verifications: Verifications, on_verdict: Callable[[], None] | None = None) -> None:
        self.verifications = verifications
        self.on_verdict = on_verdict
        self._queue: dict[str, tuple[Path, Recording]] = {}
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def pending(self) -> int:
        """Files queued or being checked now."""
        with self._lock:
            return len(self._queue)

    def __call__(self, path: Path, recording: Recording) -> str | None:
        from wolfeclick.arena.history import PENDING

        try:
            data = read_limited(path)
        except RecordingError as exc:
            return str(exc)
        seen, verdict = self.verifications.known(data)
        if seen:
            return verdict
        with self._lock:
            self._queue.setdefault(str(path), (path, recording))
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._drain, name="wolfeclick-verify", daemon=True)
                self._worker.start()
        return PENDING.removeprefix("unverified: ")

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._worker = None
                    return
                key, (path, recording) = next(iter(self._queue.items()))
            try:
                self.verifications(path, recording)
            finally:
                with self._lock:
                    self._queue.pop(key, None)
            if self.on_verdict is not None:
                self.on_verdict()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the queue is empty (tests and scripts); whether it is."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return self.pending() == 0
