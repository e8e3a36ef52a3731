"""Uploads are checked off the serving process, one at a time per page, so one heavy file stalls nobody else.

Validating a 20 MB recording takes seconds of pure-Python work; in a thread of the serving process it holds the
GIL against every other session's step (six heavy uploads once pushed another page's step from 0.3 s to a median
of 1.8 s, worst 89 s, and RSS to 1.4 GB). So the check (``check_upload``: sniff, import, validate) runs in one
worker process, shared by every session, which hands back only the bytes to store; the serving process
writes them and parses nothing. Each session may have one upload in flight (a second is refused in one line), and
the worker takes one at a time, so the memory a check needs is one file's worth, outside the serving process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wolfeclick.battle.store import RecordingError
from wolfeclick.errors import InputError
from wolfeclick.sim.process import lower_priority

__all__ = ["check_upload", "Checked", "UploadGate", "UploadBusy"]


WORKER_NICE = 10
"""How much nicer the upload checker runs than the serving process."""


class UploadBusy(InputError):
    """This page already has an upload being checked."""


@dataclass(frozen=True)
class Checked:
    """What the worker found: the bytes to store (None: the upload itself, byte for byte) and its list row."""

    stored: bytes | None
    info: dict[str, Any] | None


def check_upload(data: bytes) -> Checked:
    """Check uploaded bytes as ``Library.upload`` does: the bytes to store (None when they are a recording, stored
    as they are; else the recording an importer made of them) and the row the list shows for it, so the serving
    process never parses it to list it. Raises the importer's or the store's one-line error. Runs in the worker."""
    from wolfeclick.battle.store import MAX_RECORDING_BYTES, as_filed, parse_recording, refuse_compressed_upload
    from wolfeclick.interop.sniff import FORMATS, read_any, sniff
    from wolfeclick.ui.library import info_of, upload_id

    if len(data) > MAX_RECORDING_BYTES:
        raise RecordingError(f"file is {len(data) / 1e6:.1f} MB; recordings are limited to "
                             f"{MAX_RECORDING_BYTES // (1024 * 1024)} MB")
    refuse_compressed_upload(data)
    native = sniff(data) == FORMATS[0]
    recording = parse_recording(data) if native else read_any(data)
    replay_id = upload_id(data, recording)
    info = info_of(as_filed(recording, Path(f"{replay_id}.json")), replay_id, 0.0)
    return Checked(None if native else recording.to_json().encode("utf-8"), info.as_dict() if info else None)


class UploadGate:
    """The shared worker process (``python -m wolfeclick.ui.uploads``, started on first use, started again if it
    dies) and the per-session rule: one upload in flight per session, one check at a time in the worker."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # the worker takes one request at a time
        self._sessions = threading.Lock()
        self._busy: set[str] = set()

    def _worker(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            path = os.pathsep.join(p for p in sys.path if p)  # the worker imports what this process imports
            self._proc = subprocess.Popen([sys.executable, "-m", "wolfeclick.ui.uploads"], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          env={**os.environ, "PYTHONPATH": path})
            lower_priority(self._proc.pid, WORKER_NICE)  # checking a file never outranks a page's request
        return self._proc

    def _call(self, data: bytes) -> Checked:
        with self._lock:
            proc = self._worker()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(len(data).to_bytes(8, "big") + data)
                proc.stdin.flush()
                head = proc.stdout.read(9)
                if len(head) < 9:
                    raise OSError("no answer")
                payload = proc.stdout.read(int.from_bytes(head[1:], "big"))
            except OSError:
                proc.kill()
                self._proc = None
                raise InputError("the upload checker stopped while reading this file; nothing was saved") from None
        if head[:1] == b"E":
            raise RecordingError(payload.decode("utf-8", "replace"))
        answer = json.loads(payload)
        stored = bytes.fromhex(answer["stored"]) if answer["stored"] is not None else None
        return Checked(stored, answer["info"])

    async def check(self, session: str, data: bytes) -> Checked:
        """``check_upload(data)`` in the worker, for ``session``; UploadBusy while that session has one running."""
        with self._sessions:
            if session in self._busy:
                raise UploadBusy("an upload from this page is still being checked; wait for it to finish")
            self._busy.add(session)
        try:
            return await asyncio.to_thread(self._call, data)
        finally:
            with self._sessions:
                self._busy.discard(session)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


def _serve() -> None:
    """The worker: length-prefixed bytes in; ``K`` + JSON (``Checked``) or ``E`` + one line out, with its length."""
    from wolfeclick.errors import WolfeClickError, one_line

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = stdin.read(8)
        if len(head) < 8:
            return
        data = stdin.read(int.from_bytes(head, "big"))
        try:
            checked = check_upload(data)
            stored = checked.stored.hex() if checked.stored is not None else None
            kind, payload = b"K", json.dumps({"stored": stored, "info": checked.info}).encode("utf-8")
        except WolfeClickError as exc:
            kind, payload = b"E", one_line(exc).encode("utf-8")
        except Exception as exc:  # noqa: BLE001 - a bug in an importer: one line, the worker goes on
            kind, payload = b"E", f"the file could not be read ({exc.__class__.__name__})".encode()
        stdout.write(kind + len(payload).to_bytes(8, "big") + payload)
        stdout.flush()


if __name__ == "__main__":
    _serve()
