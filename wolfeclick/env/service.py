"""One asyncio loop in a background thread, with one simulator pool, shared by every env that is handed it.

Gymnasium, TRL and a web server all call ``reset``/``step`` from ordinary threads, while the battle runner is async.
The service runs ``stream_battle`` for every env on its own loop (so many envs share the simulator processes) and
hands results back to the calling threads; nothing here knows about observations or rewards.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any, Coroutine

from wolfeclick.sim.process import SimPool, SimProcess, SimulatorError


class SimService:
    """A background event loop and a ``SimPool`` started on it the first time a battle needs one."""

    def __init__(self, processes: int | None = None) -> None:
        self.processes = processes
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pool: SimPool | None = None
        self._pool_ready: asyncio.Future[SimPool] | None = None

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

                self._thread = threading.Thread(target=run, name="wolfeclick-env-loop", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        """Run ``coro`` on the service's loop; the returned future is safe to wait on from any other thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def process(self) -> SimProcess:
        """A simulator process for the next battle (round robin); the pool is started on first use, and a process
        that died (killed, crashed) is replaced before it is handed out again."""
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
        process = pool.pick()
        try:
            await process.call("hello")  # a dead process answers at once with SimulatorError
        except SimulatorError:
            replacement = SimProcess()
            await replacement.start()  # a simulator that cannot start fails this battle, in one line
            pool.processes[pool.processes.index(process)] = replacement
            await process.close()
            process = replacement
        return process

    @property
    def pool(self) -> SimPool | None:
        return self._pool

    def close(self) -> None:
        """Stop the simulators and the loop (battles still in flight end ``aborted``)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None or not loop.is_running():
            return
        pool, self._pool, self._pool_ready = self._pool, None, None
        if pool is not None:
            asyncio.run_coroutine_threadsafe(pool.close(), loop).result(timeout=30)
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
