"""What one visitor of the public app may hold at once: runs (Live battles, heavy jobs) and stored uploads.

A visitor is a browser session *and* the address it came from: a quota holds for each, so opening more tabs (new
sessions) from one address gains nothing, and neither does one session behind a shared address taking more than
its share. The limits are the operator's (``wolfeclick.settings``: ``WOLFECLICK_APP_*_PER_VISITOR`` and the upload
quotas); a refusal is one line that says when to try again. Pure bookkeeping over plain data and a clock passed in:
no Gradio, no files (the folder's eviction is ``evict_oldest``, given the folder by the caller).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wolfeclick.battle.store import UPLOAD_PREFIX
from wolfeclick.errors import InputError

__all__ = ["QuotaRefused", "Visitor", "visitor_of", "RUN_CLASS", "RunQuota", "UploadQuota", "evict_oldest",
           "UploadRateLimit"]

RUN_CLASS = {"live": "live", "compare": "heavy", "analysis": "heavy", "rescore": "heavy"}
"""Each kind of run and the quota it counts against: a Live battle, or a heavy job (rollouts, a tournament)."""
_WHAT = {"live": "live battle", "heavy": "heavy job (an analysis, a Compare run or a rescore)"}


class QuotaRefused(InputError):
    """A visitor is over one of the app's per-visitor quotas; the line says which and when to try again."""


@dataclass(frozen=True)
class Visitor:
    """Who asks: the browser session and the client address (either may be unknown)."""

    session: str
    address: str | None = None

    def keys(self) -> tuple[str, ...]:
        return (f"session:{self.session}",) + ((f"address:{self.address}",) if self.address else ())


def visitor_of(request: Any) -> Visitor:
    """The visitor behind a Gradio request (None in a test or a script: one anonymous visitor)."""
    session = getattr(request, "session_hash", None) or "anonymous"
    client = getattr(request, "client", None)
    address = getattr(client, "host", None)
    return Visitor(str(session), str(address) if address else None)


class RunQuota:
    """The runs each visitor has going, by kind; ``claim`` refuses one over the visitor's limit for its class."""

    def __init__(self, limits: dict[str, int]) -> None:
        self.limits = dict(limits)
        """Runs per visitor at once, by class (``live``, ``heavy``)."""
        self._runs: dict[int, tuple[str, Visitor]] = {}
        self._lock = threading.Lock()
        self._next = 0

    def claim(self, kind: str, visitor: Visitor, *, replacing: bool = False) -> int:
        """Count a new run of ``kind`` for ``visitor``; its token (give it to ``release``). ``replacing``: the
        visitor's session already has a run of this kind that this one stops (it is not counted against it)."""
        quota = RUN_CLASS[kind]
        limit = self.limits.get(quota, 1)
        keys = set(visitor.keys())
        with self._lock:
            held = [(k, v) for k, v in self._runs.values()
                    if RUN_CLASS[k] == quota and keys & set(v.keys())
                    and not (replacing and k == kind and v.session == visitor.session)]
            if len(held) >= limit:
                plural = "s" if limit > 1 else ""
                raise QuotaRefused(f"you already have {len(held)} {_WHAT[quota]}{plural} running, this app's limit "
                                   f"per visitor: stop it or wait until it ends, then try again")
            self._next += 1
            self._runs[self._next] = (kind, visitor)
            return self._next

    def release(self, token: int) -> None:
        with self._lock:
            self._runs.pop(token, None)

    def running(self) -> int:
        with self._lock:
            return len(self._runs)


HOUR_S = 3600.0


class UploadQuota:
    """Uploads per visitor per hour and the bytes each visitor has stored (the files still there)."""

    def __init__(self, per_hour: int, bytes_per_visitor: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_hour = per_hour
        self.bytes_per_visitor = bytes_per_visitor
        self.clock = clock
        self._times: dict[str, deque[float]] = {}
        self._stored: dict[str, dict[str, int]] = {}
        """Visitor key → {stored file path: bytes}."""
        self._lock = threading.Lock()

    def admit(self, visitor: Visitor, size: int, exists: Callable[[str], bool] = lambda path: True) -> None:
        """Refuse (one line) an upload of ``size`` bytes that would take ``visitor`` over a quota. ``exists``
        tells whether a stored file is still there (an evicted or deleted one no longer counts)."""
        now = self.clock()
        with self._lock:
            for key in visitor.keys():
                times = self._times.setdefault(key, deque())
                while times and times[0] <= now - HOUR_S:
                    times.popleft()
                if len(times) >= self.per_hour:
                    wait = max(1, round((times[0] + HOUR_S - now) / 60))
                    raise QuotaRefused(f"{self.per_hour} uploads an hour is this app's limit per visitor; try again "
                                       f"in {wait} min")
                stored = self._stored.setdefault(key, {})
                for path in [p for p in stored if not exists(p)]:
                    del stored[path]
                if sum(stored.values()) + size > self.bytes_per_visitor:
                    raise QuotaRefused(f"your uploads here already take {sum(stored.values()) / 2**20:.1f} MB of the "
                                       f"{self.bytes_per_visitor / 2**20:g} MB each visitor may store; try again when "
                                       f"older ones have been cleared")

    def record(self, visitor: Visitor, path: str, size: int, *, stored: bool) -> None:
        """Count an upload (``stored``: a new file, whose bytes count until it is gone)."""
        now = self.clock()
        with self._lock:
            for key in visitor.keys():
                self._times.setdefault(key, deque()).append(now)
                if stored:
                    self._stored.setdefault(key, {})[path] = size
            for key in [k for k, times in self._times.items()
                        if (not times or times[-1] <= now - HOUR_S) and not self._stored.get(k)]:
                self._times.pop(key, None)  # visitors with nothing left to count are forgotten: memory stays bounded
                self._stored.pop(key, None)


def evict_oldest(folder: Path, cap_bytes: int, keep: str | None = None) -> list[Path]:
    """Remove the oldest uploads (``upload-*.json``, by modification time) until all of them together take at most
    ``cap_bytes``; never ``keep`` (the one just stored). The removed paths, oldest first. Only plain files the app
    named count; a symbolic link or anything else is left alone."""
    files = []
    for path in Path(folder).glob(f"{UPLOAD_PREFIX}*.json"):
        try:
            info = path.lstat()
        except OSError:
            continue
        if path.is_file() and not path.is_symlink():
            files.append((info.st_mtime_ns, path.name, path, info.st_size))
    total = sum(size for *_, size in files)
    removed = []
    for _, _, path, size in sorted(files):
        if total <= cap_bytes:
            break
        if keep is not None and path.name == keep:
            continue
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
        removed.append(path)
    return removed


class UploadRateLimit:
    """ASGI middleware: the bytes one client address may POST to Gradio's upload route (``/gradio_api/upload``)
    in any hour. Gradio keeps every such file, used by an event or not, until its cache is cleaned; without this a
    visitor could fill the disk with files no event ever reads. A refusal is a 429 whose one line says when to
    try again. Counted by the declared length (a body without one counts as ``unknown_bytes``)."""

    def __init__(self, app: Any, bytes_per_hour: int, unknown_bytes: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.bytes_per_hour = bytes_per_hour
        self.unknown_bytes = unknown_bytes
        self.clock = clock
        self._sent: dict[str, deque[tuple[float, int]]] = {}
        self._lock = threading.Lock()

    def _admit(self, address: str, size: int) -> str | None:
        now = self.clock()
        with self._lock:
            for key in [k for k, sent in self._sent.items() if not sent or sent[-1][0] <= now - HOUR_S]:
                del self._sent[key]  # addresses quiet for an hour are forgotten
            sent = self._sent.setdefault(address, deque())
            while sent and sent[0][0] <= now - HOUR_S:
                sent.popleft()
            used = sum(count for _, count in sent)
            if used + size > self.bytes_per_hour:
                wait = max(1, round((sent[0][0] + HOUR_S - now) / 60)) if sent else 60
                return (f"this address sent {used / 2**20:.0f} MB of uploads in the last hour, this app's limit is "
                        f"{self.bytes_per_hour / 2**20:g} MB; try again in {wait} min")
            sent.append((now, size))
        return None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or scope.get("method") != "POST" or not path.rstrip("/").endswith("/upload"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        size = int(declared) if declared.isdigit() else self.unknown_bytes
        address = str((scope.get("client") or ("unknown",))[0])
        refused = self._admit(address, size)
        if refused is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": refused}).encode()
        await send({"type": "http.response.start", "status": 429,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
