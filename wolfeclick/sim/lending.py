"""Simulator processes that outlive one event loop: a process attached to whichever loop uses it now, and a keeper
that lends idle ones to the next ``SimProcess`` that would start the same program.

Why: a fresh simulator costs about 0.15 CPU s to start (from the startup snapshot) and plays its first battle
slower than a warm one (its code not yet optimised). Callers that start one per battle or per test, each under its
own ``asyncio.run`` (the test suite: about 500 starts in a run), can share warm ones instead. Nothing lends unless a
keeper is installed (``lending``, a context variable): the product starts its own processes as before.

A kept process is the same program started the same way (command and environment, ``PYTEST_*`` aside) and holds no
battle and no snapshot (``reset`` in PROTOCOL.md): what it plays is what a fresh one would, byte for byte.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import subprocess
import threading
from typing import Any

Key = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]
"""What makes two processes the same program: the command and the environment it was started with."""


def process_key(command: list[str], env: dict[str, str]) -> Key:
    """``PYTEST_*`` aside: pytest sets ``PYTEST_CURRENT_TEST`` anew for each test, and the simulator never reads it."""
    return tuple(command), tuple(sorted((k, v) for k, v in env.items() if not k.startswith("PYTEST_")))


class Attached:
    """A ``subprocess.Popen`` with pipes, read and written from the running event loop through duplicates of its
    pipes, so that it can be let go (``detach``) and attached to another loop later. Offers what
    ``asyncio.subprocess.Process`` offered ``SimProcess``: ``stdin``, ``stdout``, ``stderr``, ``pid``,
    ``returncode``, ``wait()``, ``kill()``."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.stdin: asyncio.StreamWriter
        self.stdout: asyncio.StreamReader
        self.stderr: asyncio.StreamReader
        self._transports: list[asyncio.BaseTransport] = []
        self._exited: asyncio.Future[int] | None = None
        self._pidfd: int | None = None

    @classmethod
    async def attach(cls, popen: subprocess.Popen[bytes], limit: int) -> "Attached":
        self = cls(popen)
        loop = asyncio.get_running_loop()
        assert popen.stdin and popen.stdout and popen.stderr
        self.stdout, self.stderr = asyncio.StreamReader(limit=limit), asyncio.StreamReader(limit=limit)
        for reader, pipe in ((self.stdout, popen.stdout), (self.stderr, popen.stderr)):
            read, _ = await loop.connect_read_pipe(lambda r=reader: asyncio.StreamReaderProtocol(r),  # type: ignore[misc]
                                                   os.fdopen(os.dup(pipe.fileno()), "rb", buffering=0))
            self._transports.append(read)
        write, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(popen.stdin.fileno()), "wb", buffering=0))
        self._transports.append(write)
        self.stdin = asyncio.StreamWriter(write, protocol, None, loop)
        self._exited = loop.create_future()
        try:
            self._pidfd = os.pidfd_open(popen.pid)
        except (AttributeError, OSError):  # no pidfd here: a thread of its own waits for the exit instead (a
            # daemon, not the loop's executor: asyncio.run's end would wait for it while the process is kept)
            threading.Thread(target=self._wait_in_thread, args=(loop,), daemon=True).start()
        else:
            loop.add_reader(self._pidfd, self._reap)
        return self

    def _reap(self) -> None:
        code = self.popen.poll()
        if code is None:
            return
        self._let_go()  # a pidfd stays readable once its process ended: read once, never again
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(code)

    def _wait_in_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        self.popen.wait()
        try:
            loop.call_soon_threadsafe(self._reap)
        except RuntimeError:  # that loop is closed: whoever uses the process now reads its end from popen
            pass

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode if self._exited is None or self._exited.done() else None

    async def wait(self) -> int:
        assert self._exited is not None
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()

    def close_input(self) -> None:
        """End the process's input (its duplicate and the original): the simulator exits at its end."""
        self.stdin.close()
        assert self.popen.stdin
        self.popen.stdin.close()

    def detach(self) -> subprocess.Popen[bytes]:
        """Stop reading and writing it from this loop; the process and its own pipes live on."""
        for transport in self._transports:
            transport.close()
        self._let_go()
        return self.popen

    def release(self) -> None:
        """After the process ended: close everything of it this side holds."""
        _release(self.detach())

    def _let_go(self) -> None:
        if self._pidfd is not None:
            try:
                asyncio.get_running_loop().remove_reader(self._pidfd)
            except RuntimeError:
                pass
            os.close(self._pidfd)
            self._pidfd = None


class SimKeeper:
    """Idle simulator processes, kept for the next start of the same program (``keep`` of them at most). Not
    thread-safe: one keeper per thread that runs event loops (the test suite: one per worker)."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self.idle: list[tuple[Key, subprocess.Popen[bytes]]] = []
        self.lent = 0
        """How many starts were served from kept processes (for tests)."""

    def take(self, key: Key) -> subprocess.Popen[bytes] | None:
        """A kept process of this program, still running; None if there is none."""
        for index in range(len(self.idle) - 1, -1, -1):
            kept_key, popen = self.idle[index]
            if popen.poll() is not None:  # ended while kept (a test killed it): dropped
                del self.idle[index]
                _release(popen)
            elif kept_key == key:
                del self.idle[index]
                self.lent += 1
                return popen
        return None

    def wants(self) -> bool:
        return len(self.idle) < self.keep

    def give(self, key: Key, popen: subprocess.Popen[bytes]) -> None:
        if popen.poll() is None and self.wants():
            self.idle.append((key, popen))
        else:
            _end(popen)

    def close(self) -> None:
        """End every kept process (their input closed: they exit as a closed simulator does)."""
        while self.idle:
            _end(self.idle.pop()[1])


def _release(popen: subprocess.Popen[Any]) -> None:
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            pipe.close()


def _end(popen: subprocess.Popen[Any]) -> None:
    if popen.stdin is not None:
        popen.stdin.close()
    try:
        popen.wait(5)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()
    _release(popen)


lending: contextvars.ContextVar[SimKeeper | None] = contextvars.ContextVar("simulator_lending", default=None)
"""The keeper ``SimProcess`` lends from and gives back to, where one is installed (``lending.set(SimKeeper())``)."""
