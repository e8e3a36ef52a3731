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
from pathlib import Path

from wolfeclick.battle.resim import DEFAULT_RESIM_TIMEOUT, reproduces
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import MAX_RECORDING_BYTES, RecordingError, read_limited, write_atomic
from wolfeclick.errors import one_line

__all__ = ["VERIFIED_FILE", "Verifications"]

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
