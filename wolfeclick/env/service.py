"""One asyncio loop in a background thread, with one simulator pool, shared by every env that is handed it.

Gymnasium, TRL and a web server all call ``reset``/``step`` from ordinary threads, while the battle runner is async.
The service runs ``stream_battle`` for every env on its own loop (so many envs share the simulator processes) and
hands results back to the calling threads; nothing here knows about observations or rewards.

Lifecycle: a script (or TRL) that never closes its envs must still exit. The agent's seat waits in one of the
runner's worker threads, which the interpreter joins before ``atexit`` handlers run, so a service that ran an
episode registers a hook that runs before that join: it forfeits every open episode (its recording is saved) and
stops the simulators. Threads do not survive ``fork`` (Gymnasium's ``AsyncVectorEnv`` default): poke-env runs a
background loop from the moment it is imported, and a service its loop and the runner its decision threads, so an
env built in a forked child would wait on a thread that is not there. It refuses in one line instead, naming
``context="spawn"`` (a child forked before any of those threads existed works).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import weakref
from concurrent.futures import Future
from typing import Any, Coroutine, Protocol

from wolfeclick.errors import WolfeClickError
from wolfeclick.sim.process import SimPool, SimProcess, SimulatorError

EXIT_TIMEOUT_S = 30.0
"""At interpreter exit, how long each open episode may take to forfeit and save (it takes milliseconds)."""


class ForkedServiceError(WolfeClickError, RuntimeError):
    """An env used in a forked child of a process whose env threads were already running."""


class OpenEpisode(Protocol):
    def abandon(self) -> None: ...

    def finish(self, timeout: float) -> Any: ...


_PLAYED_IN_PID: int | None = None
"""The process whose env threads (service loops, the runner's decision threads) were started, if any."""
_FORKED_WITHOUT_THREADS = False
"""Set in a forked child when the parent already had threads an env needs (poke-env's loop, a service's)."""
_SERVICES: "weakref.WeakSet[SimService]" = weakref.WeakSet()
_EXIT_HOOK_LOCK = threading.Lock()
_EXIT_HOOK_PID: int | None = None


def _after_fork_in_child() -> None:
    global _FORKED_WITHOUT_THREADS
    if _PLAYED_IN_PID is not None or "poke_env.concurrency" in sys.modules:
        _FORKED_WITHOUT_THREADS = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def check_not_forked() -> None:
    """Refuse, in one line, to build or run an env in a forked child whose parent's env threads are lost."""
    if _FORKED_WITHOUT_THREADS:
        raise ForkedServiceError(
            "envs cannot run in a process forked after wolfeclick.env was imported (the threads they need are not "
            "copied by fork): build them in fresh processes (gymnasium AsyncVectorEnv(..., context=\"spawn\"), multiprocessing "
            "get_context(\"spawn\"))")


def _register_exit_hook() -> None:
    """Once per process: forfeit open episodes and stop simulators before the interpreter joins worker threads."""
    global _EXIT_HOOK_PID
    with _EXIT_HOOK_LOCK:
        if _EXIT_HOOK_PID == os.getpid():
            return
        import concurrent.futures.thread  # noqa: F401  (its join hook must be registered first: hooks run last-first)

        register = getattr(threading, "_register_atexit", None)
        if register is None:  # not CPython ≥ 3.9: atexit runs too late for a blocked seat, still stops simulators
            import atexit

            atexit.register(shutdown_all)
        else:
            register(shutdown_all)
        _EXIT_HOOK_PID = os.getpid()


def shutdown_all() -> None:
    """Forfeit every open episode of every service of this process and stop their simulators (the exit hook)."""
    for service in list(_SERVICES):
        if service.pid == os.getpid():
            service.close(timeout=EXIT_TIMEOUT_S)


class SimService:
    """A background event loop and a ``SimPool`` started on it the first time a battle needs one."""

    def __init__(self, processes: int | None = None) -> None:
        self.processes = processes
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pool: SimPool | None = None
        self._pool_ready: asyncio.Future[SimPool] | None = None
        self._episodes: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self.pid: int | None = None
        """The process whose thread runs this service's loop (None until the first battle)."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        global _PLAYED_IN_PID
        with self._lock:
            check_not_forked()
            if self._loop is None or not self._loop.is_running():
                ready = threading.Event()
                loop = asyncio.new_event_loop()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                _register_exit_hook()
                self._thread = threading.Thread(target=run, name="wolfeclick-env-loop", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
                self.pid = _PLAYED_IN_PID = os.getpid()
                _SERVICES.add(self)
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        """Run ``coro`` on the service's loop; the returned future is safe to wait on from any other thread."""
        try:
            loop = self.loop
        except BaseException:
            coro.close()
            raise
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def track(self, episode: OpenEpisode) -> None:
        """Remember an open episode so that closing the service (or the interpreter exiting) forfeits it."""
        self._episodes.add(episode)

    async def process(self) -> SimProcess:
        """A simulator process for the next battle (round robin); the pool is started on first use, and a process
        that died (killed, crashed) is replaced, under the pool's own lock, before it is handed out again."""
        if self._pool_ready is None:
            self._pool_ready = asyncio.get_running_loop().create_future()
            pool = SimPool(self.processes)
            try:
                await pool.start()
            except BaseException as exc:
                self._pool_ready.set_exception(exc)
                self._pool_ready = None
                raise
            self._pool = pool
            self._pool_ready.set_result(pool)
        pool = await asyncio.shield(self._pool_ready)
        for _ in range(pool.size):
            process = await pool.live()
            try:
                await process.call("hello")  # a process killed a moment ago answers at once with SimulatorError
                return process
            except SimulatorError:
                continue  # now marked dead: live() replaces it when its slot comes round
        process = await pool.live()  # every slot was dead a moment ago and has been (or is being) replaced
        await process.call("hello")
        return process

    @property
    def pool(self) -> SimPool | None:
        return self._pool

    def close(self, timeout: float = 30.0) -> None:
        """Forfeit open episodes (their recordings are saved), then stop the simulators and the loop."""
        if self.pid is not None and self.pid != os.getpid():
            return  # a forked child's copy: the parent owns the loop and the simulators
        episodes = list(self._episodes)
        for episode in episodes:
            episode.abandon()
        for episode in episodes:
            episode.finish(timeout)
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None or not loop.is_running():
            return
        pool, self._pool, self._pool_ready = self._pool, None, None
        if pool is not None:
            asyncio.run_coroutine_threadsafe(pool.close(), loop).result(timeout=timeout)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)


_DEFAULT: SimService | None = None
_DEFAULT_LOCK = threading.Lock()


def default_service() -> SimService:
    """The process-wide service used by envs built without one (TRL builds envs with no arguments)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = SimService()
        return _DEFAULT
