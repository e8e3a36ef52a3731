"""Node child processes hosting the simulator (``bridge.js``), and a pool that spreads battles over them.

One process is single-threaded, so the pool starts one per core and gives each battle to one process for life.
Everything here is I/O; the protocol itself is in PROTOCOL.md and ``protocol.py``.
"""

from __future__ import annotations

import asyncio
import fcntl
import itertools
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any, Literal

import orjson

from wolfeclick.errors import WolfeClickError
from wolfeclick.settings import settings
from wolfeclick.sim.install import compile_cache_dir, ensure_showdown, showdown_dir
from wolfeclick.sim.lending import Attached, Key, lending, process_key
from wolfeclick.sim.protocol import UnsafeInput, check_input_lines
from wolfeclick.sim.snapshot import ensure_blob, mark_failed

BRIDGE = Path(__file__).with_name("bridge.js")
SHOWDOWN_DIR = showdown_dir()
"""The simulator package (``wolfeclick.sim.install``); installed on first use by ``node_executable``."""
_LINE_LIMIT = 64 * 1024 * 1024
_KILLED_FROM_OUTSIDE = (-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP)


class SimulatorError(WolfeClickError, RuntimeError):
    """The simulator could not be reached or refused a request; the message is one line."""

    exit_code = 1
    """Not a usage error (2): the request was fine, the simulator failed (see the CLI's exit statuses)."""


def node_executable() -> str:
    node = settings().node or shutil.which("node")
    if not node:
        raise SimulatorError("Node.js was not found on PATH: install Node.js >= 20 and npm, then run `wolfeclick setup`")
    try:
        ensure_showdown()
    except WolfeClickError as exc:
        raise SimulatorError(str(exc)) from exc
    return node


def _widen_pipe(pipe: Any, size: int = 1 << 20) -> None:
    """Give the simulator's stdout pipe a 1 MiB buffer (Linux; default 64 KiB).

    Node writes to a pipe synchronously, so with a small pipe a simulator blocks whenever Python is busy with other
    battles: measured as a third of the simulator's CPU profile. Best effort: other systems keep their default.
    """
    try:
        fcntl.fcntl(pipe.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
    except (OSError, AttributeError, ValueError):
        pass


def _request_line(request: dict[str, Any]) -> bytes:
    """One JSON line for bridge.js. orjson writes it several times faster than ``json`` (a request per decision);
    text orjson refuses (a lone surrogate) goes through ``json``, which escapes it, so nothing that ``json`` sent is
    refused here."""
    try:
        return orjson.dumps(request, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        return (json.dumps(request) + "\n").encode()


def lower_priority(pid: int, by: int) -> None:
    """Run process ``pid`` ``by`` steps nicer (``$WOLFECLICK_SIM_NICE``): the app's simulators yield the CPU to the
    requests of its pages. Never raises: a system that refuses leaves the process as it was."""
    if by > 0:
        try:
            os.setpriority(os.PRIO_PROCESS, pid, min(19, os.getpriority(os.PRIO_PROCESS, pid) + by))
        except OSError:
            pass


def session_group_follows_nice(pid: int) -> None:
    """Give process ``pid``'s scheduling group its niceness, for a process in a session of its own.

    With Linux's autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``, on in most distributions and
    on this project's machines) each session is scheduled as one group beside every other, and a process's nice
    orders it only inside its group. A simulator starts a session of its own (Ctrl-C reaches Python only), so its
    nice, inherited (``nice -n 19 wolfeclick …``) or added (``$WOLFECLICK_SIM_NICE``), counted for nothing: a nice-19
    benchmark's simulators took as much CPU as a whole test suite beside them. Never raises: elsewhere, or where it
    is refused, the process keeps its group's default."""
    try:
        nice = os.getpriority(os.PRIO_PROCESS, pid)
        if nice > 0:
            Path(f"/proc/{pid}/autogroup").write_text(str(nice))
    except (OSError, ValueError):
        pass


class SimProcess:
    """One ``bridge.js`` process: requests go out as JSON lines, responses are matched back by id."""

    def __init__(self, *, compile_cache: Path | None | Literal["default"] = "default",
                 snapshot: bool | None = None) -> None:
        """``compile_cache``: the folder the compiled code is kept in (``"default"``: the cache's own,
        ``install.compile_cache_dir()`` when the process starts), or None to compile Showdown's modules afresh and
        keep nothing (``benchmarks.sim_start`` measures what the cache saves). ``snapshot``: start from the startup
        snapshot (``wolfeclick.sim.snapshot``; built on first use) or plainly; None: as ``WOLFECLICK_SIM_SNAPSHOT``
        says (on unless 0). A snapshot that cannot be built or started means a plain start, never a failure."""
        self.compile_cache = compile_cache
        self.snapshot = snapshot
        self._ids = itertools.count(1)
        self._reset()

    async def start(self) -> None:
        node = node_executable()
        blob = None
        if settings().sim_snapshot if self.snapshot is None else self.snapshot:
            blob = await ensure_blob(node, SHOWDOWN_DIR)
        if blob is not None:
            try:
                await self._spawn([node, "--snapshot-blob", str(blob)])
                return
            except SimulatorError as exc:  # a blob that will not start (a damaged file): plainly, now and later
                code = self._proc.returncode if self._proc else None
                if code not in _KILLED_FROM_OUTSIDE:  # a signal someone sent says nothing about the blob
                    mark_failed(blob, f"a simulator would not start from it: {exc}")
                await self.close()
                self._reset()
        await self._spawn([node, str(BRIDGE)])

    def _reset(self) -> None:
        """No process yet: as made, and again after a snapshot start that failed, before the plain one."""
        self._proc: Attached | None = None
        self._key: Key | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._stderr: list[str] = []
        self._dead: str | None = None
        self.info: dict[str, Any] = {}

    async def _spawn(self, command: list[str]) -> None:
        folder = compile_cache_dir() if self.compile_cache == "default" else self.compile_cache
        env = dict(os.environ, WOLFECLICK_SHOWDOWN=str(SHOWDOWN_DIR), WOLFECLICK_COMPILE_CACHE=str(folder or ""))
        key = process_key(command, env)
        keeper = lending.get()
        kept = keeper.take(key) if keeper is not None else None
        self._key = key
        if kept is not None:
            try:
                await self._run(kept)
                return
            except SimulatorError:  # it ended while kept: a fresh one instead
                await self.close()
                self._reset()
                self._key = key
        popen = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            start_new_session=True,  # a terminal's Ctrl-C reaches Python only, which then ends battles cleanly
        )
        lower_priority(popen.pid, settings().sim_nice)
        session_group_follows_nice(popen.pid)
        _widen_pipe(popen.stdout)
        await self._run(popen)

    async def _run(self, popen: subprocess.Popen[bytes]) -> None:
        self._proc = await Attached.attach(popen, _LINE_LIMIT)
        self._reader = asyncio.create_task(self._read())
        self._stderr_task = asyncio.create_task(self._read_stderr())
        self.info = await self.call("hello")

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def alive(self) -> bool:
        """Started, not exited, and still answering (a dead or unreadable process never comes back)."""
        return self._proc is not None and self._proc.returncode is None and self._dead is None

    async def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        async for raw in self._proc.stderr:
            self._stderr.append(raw.decode(errors="replace").rstrip())
            del self._stderr[:-20]

    async def _read(self) -> None:
        """Match replies to requests until the process ends; then fail every request still waiting.

        The ``finally`` matters as much as the loop: if this task is cancelled (the event loop shutting down, say)
        while a battle still waits for a reply, that battle must fail at once, not wait for ever for a reply no one
        will read. Calls made afterwards fail at once too.
        """
        assert self._proc and self._proc.stdout
        try:
            try:
                async for raw in self._proc.stdout:
                    reply = orjson.loads(raw)
                    future = self._pending.pop(reply.get("id"), None)
                    if future is not None and not future.done():
                        future.set_result(reply)
            except Exception as exc:  # a broken pipe or a garbled line: everything pending fails below
                self._dead = f"simulator output unreadable: {exc}"
            code = await self._proc.wait()
            await asyncio.sleep(0)  # let the stderr reader catch up
            detail = next((line for line in reversed(self._stderr) if line.strip()), "")
            self._dead = self._dead or f"simulator process exited (code {code})" + (f": {detail}" if detail else "")
        finally:
            self._dead = self._dead or "simulator connection closed"
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(SimulatorError(self._dead))
            self._pending.clear()

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request and wait for its response; raises SimulatorError with one line on failure."""
        if self._dead or self._proc is None or self._proc.stdin is None:
            raise SimulatorError(self._dead or "simulator process not started")
        if "lines" in fields:  # the door: nothing but battle input reaches the simulator (bridge.js checks again)
            try:
                check_input_lines(fields["lines"])
            except UnsafeInput as exc:
                raise SimulatorError(f"simulator refused {op}: {exc}") from None
        request_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._proc.stdin.write(_request_line({"id": request_id, "op": op, **fields}))
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._pending.pop(request_id, None)
            try:  # its input closed: it has exited or is exiting; say so as the output reader does (one wording)
                code = await asyncio.wait_for(self._proc.wait(), 10)
                await asyncio.sleep(0)
                self._dead = self._dead or f"simulator process exited (code {code})"
            except asyncio.TimeoutError:
                self._dead = self._dead or f"simulator process is gone ({exc.__class__.__name__})"
            raise SimulatorError(self._dead) from None
        reply = await future
        if reply.get("error"):
            raise SimulatorError(f"simulator refused {op}: {reply['error']}")
        return reply

    def kill(self) -> None:
        """Kill the process (tests use this to check that a dead simulator loses nothing recorded)."""
        if self._proc and self._proc.returncode is None:
            self._proc.kill()

    async def close(self) -> None:
        if self._proc is None:
            return
        keeper = lending.get()
        if keeper is not None and self._key is not None and self.alive and not self._pending and keeper.wants():
            try:  # lent on: emptied of battles and snapshots first, as a fresh process is
                await asyncio.wait_for(self.call("reset"), 5)
            except (SimulatorError, asyncio.TimeoutError):
                pass
            else:
                await self._stop_reading()
                if not self._pending:
                    keeper.give(self._key, self._proc.detach())
                    info = self.info
                    self._reset()
                    self.info = info  # what it said at its start stays readable after close, as for any process
                    return
        if self._proc.returncode is None:
            try:
                self._proc.close_input()
                await asyncio.wait_for(self._proc.wait(), 5)
            except (asyncio.TimeoutError, BrokenPipeError, ConnectionResetError):
                self._proc.kill()
                await self._proc.wait()
        for task in (self._reader, self._stderr_task):
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
        self._proc.release()

    async def _stop_reading(self) -> None:
        for task in (self._reader, self._stderr_task):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)


CONTENTION = 1.25
"""How much more CPU a simulator step costs when the simulators and the Python process outnumber the cores: Node's
CPU per turn rose from 4.0-4.9 to 5.2-5.7 ms with a second simulator on 2 cores (issue 17), 2.1-3.2 to 2.9-3.5 ms
(issue 49)."""
GAIN_NEEDED = 1.15
"""Another simulator only when the model promises this much more: on a shared machine a smaller gain was within the
measurements' noise, and a useless process costs memory (about 100 MB) and a core's caches."""


def processes_for(cores: int, python_ms: float, simulator_ms: float, in_flight: int, *,
                  contention: float = CONTENTION, gain_needed: float = GAIN_NEEDED) -> int:
    """How many simulator processes a batch should use, from measured CPU per turn of this (Python) process and of
    one simulator process.

    The rate with ``n`` simulators is capped three ways: by the simulators (each runs one battle step at a time), by
    this process (its share of every turn runs on one core, under the GIL) and by the cores (all the CPU of a turn).
    With one battle in flight Python and the simulator take turns, so a second simulator has nothing to do. A
    simulator is added only while it raises the capped rate by ``gain_needed``; past what Python can feed, it never
    does. Pure, so the rule is tested apart from any measurement.
    """
    cores, in_flight = max(1, cores), max(1, in_flight)
    if in_flight == 1 or python_ms <= 0 or simulator_ms <= 0:
        return 1

    def rate(n: int) -> float:
        step = simulator_ms * (contention if n + 1 > cores else 1.0)
        return min(n * 1000.0 / step, 1000.0 / python_ms, cores * 1000.0 / (python_ms + step))

    best = 1
    for n in range(2, min(cores, in_flight) + 1):
        if rate(n) < rate(best) * gain_needed:
            break
        best = n
    return best


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of live processes (all their threads), from /proc; 0 for any that cannot be read
    (gone, or not Linux)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += int(fields[11]) + int(fields[12])
    return total / _CLOCK_TICKS


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def default_processes() -> int:
    """One simulator per core but one: the Python side (state, policies, recording) needs a core of its own.

    Measured on 2 cores, 16 battles in flight: one Node process gave ~25% more battles/s than two, because three busy
    processes on two cores made each simulator step slower (context switches, cold caches).
    """
    return max(1, (os.cpu_count() or 1) - 1)


class SimPool:
    """Several ``SimProcess`` (``default_processes()`` unless told); each battle key sticks to one process.

    The pool heals: ``live()`` replaces a process that died (killed, crashed) with a fresh one, so only the battles
    the dead one was hosting are lost (they end ``aborted``) and every later battle plays on.
    """

    def __init__(self, processes: int | None = None) -> None:
        self.size = max(1, processes or default_processes())
        self.processes: list[SimProcess] = []
        self.replaced = 0
        """How many dead processes were replaced (for reports and tests)."""
        self._next = itertools.count()
        self._healing: asyncio.Lock | None = None

    async def __aenter__(self) -> "SimPool":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        self.processes = [SimProcess() for _ in range(self.size)]
        await asyncio.gather(*(p.start() for p in self.processes))

    @property
    def showdown_version(self) -> str:
        return str(self.processes[0].info.get("showdown", "unknown")) if self.processes else "unknown"

    def pick(self) -> SimProcess:
        """The next process, round robin (placement never affects a battle's result)."""
        return self.processes[next(self._next) % len(self.processes)]

    async def live(self) -> SimProcess:
        """Like ``pick``, but a dead process in that slot is first replaced by a freshly started one."""
        slot = next(self._next) % len(self.processes)
        if self.processes[slot].alive:
            return self.processes[slot]
        self._healing = self._healing or asyncio.Lock()
        async with self._healing:  # battles that find the same corpse share one replacement
            dead = self.processes[slot]
            if not dead.alive:
                fresh = SimProcess()
                try:
                    await fresh.start()
                except BaseException:
                    await fresh.close()
                    raise
                self.processes[slot] = fresh
                self.replaced += 1
                await dead.close()
        return self.processes[slot]

    async def grow(self, size: int) -> None:
        """Start processes until there are ``size``; later battles are spread over all of them (placement never
        changes a battle), the ones already playing stay where they are."""
        fresh = [SimProcess() for _ in range(size - len(self.processes))]
        try:
            await asyncio.gather(*(p.start() for p in fresh))
        except BaseException:
            await asyncio.gather(*(p.close() for p in fresh))
            raise
        self.processes.extend(fresh)
        self.size = len(self.processes)

    def cpu(self) -> float:
        """CPU seconds the pool's live processes have used (``cpu_seconds``)."""
        return cpu_seconds([p.pid for p in self.processes if p.pid is not None])

    async def close(self) -> None:
        await asyncio.gather(*(p.close() for p in self.processes))
