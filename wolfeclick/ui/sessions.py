"""How many visitors' sessions the app keeps in memory, and for how long.

Gradio keeps, for every session (every page load, every API client), a copy of each component's settings: about
330 kB for this app's 230 components, more once a handler has sent new choices. It drops one only when 10,000 are held
and never drops a closed one, so the serving process grew with every visitor and never gave it back (issue 60: 527 MB
a quiet minute after a 10-minute load, 245 MB idle). The app keeps at most ``Settings.sessions`` (Gradio's own
capacity: the least recently used go first) and drops a session that no request used for ``Settings.session_idle_s``,
sweeping once a minute from Gradio's own event loop. A dropped session's visitor loses only what the server kept
for that page (a finished live battle's "Open in Replays"); the next request starts a fresh session.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import datetime
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

__all__ = ["drop_idle_sessions", "session_lifespan", "SWEEP_EVERY_S"]

log = logging.getLogger(__name__)

SWEEP_EVERY_S = 60.0


def drop_idle_sessions(holder: Any, idle_s: float, now: datetime.datetime | None = None) -> int:
    """Drop from Gradio's ``StateHolder`` every session last used more than ``idle_s`` seconds before ``now``;
    returns how many. Runs on Gradio's event loop, as Gradio's own sweep of expired state does."""
    now = now or datetime.datetime.now()
    with holder.lock:
        stale = [key for key, used in holder.time_last_used.items() if (now - used).total_seconds() > idle_s]
        for key in stale:
            holder.session_data.pop(key, None)
            holder.time_last_used.pop(key, None)
    return len(stale)


def give_freed_memory_back() -> None:
    """Ask glibc to return the freed heap pages to the system (``malloc_trim``): Python frees a dropped session's
    objects, but the allocator keeps the pages for reuse, so the process's RSS would not fall. Does nothing where
    there is no glibc. The process's own symbols hold libc's: ``ctypes.util.find_library`` would start ``ldconfig``
    on every sweep, from the event loop."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass


def session_lifespan(idle_s: float, every_s: float = SWEEP_EVERY_S,
                     trim: Callable[[], None] = give_freed_memory_back,
                     caches: Sequence[Callable[[float], int]] = ()) -> Callable[[Any], Any]:
    """A Starlette lifespan (``launch(app_kwargs={"lifespan": …})``) that sweeps idle sessions while the app serves,
    and with them whatever ``caches`` hold that nobody used for as long (each is called with ``idle_s`` and returns
    how many entries it dropped: the replay library's ``drop_idle_views``)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async def sweep() -> None:
            while True:
                await asyncio.sleep(every_s)
                dropped = drop_idle_sessions(app.state_holder, idle_s)
                cached = sum(drop(idle_s) for drop in caches)
                if dropped or cached:
                    trim()
                    log.info("dropped %d sessions and %d cached entries idle for %.0f s", dropped, cached, idle_s)

        task = asyncio.create_task(sweep())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return lifespan
