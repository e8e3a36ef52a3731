"""One asyncio loop in a background thread, with one simulator pool, shared by every env that is handed it.

Gymnasium, TRL and a web server all call ``reset``/``step`` from ordinary threads, while the battle runner is async.
The service runs ``stream_battle`` for every env on its own loop (so many envs share the simulator processes) and
hands results back to the calling threads; nothing here knows about observations or rewards.

Lifecycle: a script (or TRL) that never closes its envs must still exit. The agent's seat waits in one of the
runner's worker threads, which the interpreter joins before ``atexit`` handlers run, so a service that ran an
episode registers a hook that runs before that join: it forfeits every open episode (its recording is saved) and
stops the simulators.

Processes: threads do not survive ``fork`` (Gymnasium's ``AsyncVectorEnv`` default on Linux), so a forked child
starts afresh: every service it inherited forgets the parent's loop, simulators and episodes (they are the
parent's) and starts its own on first use, as the runner's decision threads and the baselines' locks do. A service
handed to another process by pickling (``AsyncVectorEnv``'s spawned workers, ``gymnasium.make``'s copy of its
keyword arguments) is that process's service with the same settings, one per original; a deep copy is the
service itself, since it is a handle shared by envs, not a value.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import weakref
from concurrent.futures import Future
from typing import Any, Coroutine, Protocol

from wolfeclick.sim.process import SimPool, SimProcess, SimulatorError

EXIT_TIMEOUT_S = 30.0
"""At interpreter exit, how long each open episode may take to forfeit and save (it takes milliseconds)."""


class OpenEpisode(Protocol):
    def abandon(self) -> None: ...

    def finish(self, timeout: float) -> Any: ...


_SERVICES: "weakref.WeakSet[SimService]" = weakref.WeakSet()
_EXIT_HOOK_LOCK = threading.Lock()
_EXIT_HOOK_PID: int | None = None
_INHERITED: list[Any] = []
"""A forked child's copies of its parent's loops and pools: kept, never used or closed (closing a copied pool's
transports would try to stop the parent's simulators), so that garbage collection does not touch them either."""
_TOKENS = itertools.count(1)
_BY_TOKEN: "weakref.WeakValueDictionary[tuple[int, int], SimService]" = weakref.WeakValueDictionary()


def _after_fork_in_child() -> None:
    """The child has none of the parent's threads: every inherited service starts over on first use."""
    global _EXIT_HOOK_LOCK, _DEFAULT_LOCK
    _EXIT_HOOK_LOCK = threading.Lock()
    _DEFAULT_LOCK = threading.Lock()
    for service in list(_SERVICES):
        service._forget_parent()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _unpickled_service(pid: int, token: int, processes: int | None) -> "SimService":
    """The receiving process's stand-in for service ``token`` of process ``pid``: one per original."""
    key = (pid, token)
    service = _BY_TOKEN.get(key)
    if service is None:
        service = SimService(processes)
        _BY_TOKEN[key] = service
    return service


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
        self._origin = (os.getpid(), next(_TOKENS))
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pool: SimPool | None = None
        self._pool_ready: asyncio.Future[SimPool] | None = None
        self._episodes: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self.pid: int | None = None
        """The process whose thread runs this service's loop (None until the first battle)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpickled_service, (*self._origin, self.processes)

    def __deepcopy__(self, memo: dict[int, Any]) -> "SimService":
        return self

    def __copy__(self) -> "SimService":
        return self

    def _forget_parent(self) -> None:
        """In a forked child: drop the parent's loop, simulators and episodes (kept unreferenced-but-alive)."""
        _INHERITED.append((self._loop, self._thread, self._pool, self._pool_ready, self._episodes))
        self._lock = threading.Lock()
        self._loop = self._thread = None
        self._pool = None
        self._pool_ready = None
        self._episodes = weakref.WeakSet()
        self.pid = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
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
                self.pid = os.getpid()
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
