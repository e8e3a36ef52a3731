"""The first Ctrl-C lets the battles in flight end and be saved (``record``, ``ladder``)."""

from __future__ import annotations

import asyncio


class CtrlC:
    """While active (``with``, inside the event loop), the first Ctrl-C sets ``stop`` instead of raising, so the
    battles in flight can end cleanly and be saved; a second Ctrl-C falls back to asyncio's own handling (cancel
    everything, exit 130 at once). Outside the main thread it does nothing."""

    def __init__(self, stop: asyncio.Event) -> None:
        self.stop = stop
        self.pressed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: object = None

    def __enter__(self) -> "CtrlC":
        import signal

        self._previous = signal.getsignal(signal.SIGINT)
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self._press)
            self._loop = loop
        except (ValueError, RuntimeError):  # not the main thread
            pass
        return self

    def _press(self) -> None:
        self.pressed = True
        self.stop.set()
        self._release()

    def _release(self) -> None:
        import signal

        if self._loop is not None:
            self._loop.remove_signal_handler(signal.SIGINT)
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._loop = None

    def __exit__(self, *exc: object) -> None:
        self._release()
