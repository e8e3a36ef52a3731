"""The app's context: everything the tabs share, built once per app and passed to every tab's ``build``.

No module of the UI keeps state of its own: the recordings library, the results folder, the checkpoint cache,
the per-session stop and human-seat registries, the hardware probe and the settings all live here, so a test (or a second app in
one process) builds its own context and nothing leaks between them.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wolfeclick.battle.live import PolicyCache
from wolfeclick.battle.store import RecordingSaver
from wolfeclick.paths import results_dir
from wolfeclick.policies.human import HumanSeat
from wolfeclick.settings import Settings as EnvSettings
from wolfeclick.settings import settings
from wolfeclick.ui.library import Library, recordings_dir
from wolfeclick.ui.live import HardwareProbe
from wolfeclick.ui.standings import Standings
from wolfeclick.ui.uploads import UploadGate

__all__ = ["AppContext", "Settings", "StopRegistry", "SeatRegistry", "results_dir"]

@dataclass(frozen=True)
class Settings:
    """What the environment can change."""

    live_pace: float = 0.4
    """Default seconds between live decisions ($WOLFECLICK_LIVE_PACE)."""
    page_size: int = 25
    """Rows per page in the recordings list and the Compare battles table."""

    @classmethod
    def from_env(cls, environment: EnvSettings | None = None) -> "Settings":
        """The app's settings from the one settings object (``wolfeclick.settings``; default: the environment now)."""
        return cls(live_pace=(environment or settings()).live_pace)


class StopRegistry:
    """One stop event per (kind, browser session): Stop stops this session's battle, nobody else's."""

    def __init__(self) -> None:
        self._events: dict[tuple[str, str], asyncio.Event] = {}

    @staticmethod
    def session(request: Any) -> str:
        return getattr(request, "session_hash", None) or "anonymous"

    def start(self, kind: str, request: Any) -> asyncio.Event:
        """A fresh stop event for this session's new run (an older run of the same kind is stopped)."""
        key = (kind, self.session(request))
        previous = self._events.get(key)
        if previous is not None:
            previous.set()
        self._events[key] = asyncio.Event()
        return self._events[key]

    def stop(self, kind: str, request: Any) -> bool:
        """Stop this session's run; False when none is running."""
        event = self._events.get((kind, self.session(request)))
        if event is None:
            return False
        event.set()
        return True

    def finish(self, kind: str, request: Any, event: asyncio.Event) -> None:
        key = (kind, self.session(request))
        if self._events.get(key) is event:
            del self._events[key]

    def __len__(self) -> int:
        return len(self._events)


class SeatRegistry:
    """The human seat of each browser session's live battle: a button click answers its own session's seat only."""

    def __init__(self) -> None:
        self._seats: dict[str, HumanSeat] = {}

    @staticmethod
    def session(request: Any) -> str:
        return getattr(request, "session_hash", None) or "anonymous"

    def open(self, request: Any, seat: HumanSeat) -> None:
        previous = self._seats.get(self.session(request))
        if previous is not None and previous is not seat:
            previous.close("a new battle was started in this session")
        self._seats[self.session(request)] = seat

    def get(self, request: Any) -> HumanSeat | None:
        return self._seats.get(self.session(request))

    def release(self, request: Any, seat: HumanSeat) -> None:
        seat.close()
        if self._seats.get(self.session(request)) is seat:
            del self._seats[self.session(request)]

    def __len__(self) -> int:
        return len(self._seats)


@dataclass
class AppContext:
    library: Library
    results: Path
    policies: PolicyCache = field(default_factory=PolicyCache)
    stops: StopRegistry = field(default_factory=StopRegistry)
    seats: SeatRegistry = field(default_factory=SeatRegistry)
    """Each session's human seat ("You" in Live), so a click answers its own battle only."""
    hardware: HardwareProbe = field(default_factory=HardwareProbe)
    settings: Settings = field(default_factory=Settings)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("wolfeclick.ui"))
    uploads: UploadGate = field(default_factory=UploadGate)
    """Uploads are checked in a worker process, one in flight per session (``ui.uploads``)."""
    standings: Standings | None = None
    """The battle history of ``results`` and the library, rated together (made from them when not given)."""

    def __post_init__(self) -> None:
        if self.standings is None:
            self.standings = Standings(self.results, self.library.directory)

    @classmethod
    def from_env(cls, library: Library | None = None) -> "AppContext":
        return cls(library=library or Library(recordings_dir()), results=results_dir(), settings=Settings.from_env())

    def saver(self) -> RecordingSaver:
        """A saver for one battle run into the recordings folder."""
        return RecordingSaver(self.library.directory)
