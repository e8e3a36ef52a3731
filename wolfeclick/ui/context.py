"""The app's context: everything the tabs share, built once per app and passed to every tab's ``build``.

No module of the UI keeps state of its own: the recordings library, the results folder, the checkpoint cache,
the per-session stop and human-seat registries, the hardware probe, the value model and the settings all live here,
so a test (or a second app in one process) builds its own context and nothing leaks between them.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wolfeclick.analysis.value_model import ValueModel, default_model
from wolfeclick.battle.live_battles import PolicyCache
from wolfeclick.battle.store import RecordingSaver
from wolfeclick.paths import results_dir
from wolfeclick.policies.catalogue import ServedCatalogue
from wolfeclick.policies.human import HumanSeat
from wolfeclick.policies.registry import default_registry
from wolfeclick.settings import Settings as EnvSettings
from wolfeclick.settings import settings
from wolfeclick.ui.history_index import Standings
from wolfeclick.ui.library import Library, recordings_dir
from wolfeclick.ui.live_page import HardwareProbe
from wolfeclick.ui.quotas import RUN_CLASS, RunQuota, UploadQuota, visitor_of
from wolfeclick.ui.uploads import UploadGate

__all__ = ["AppContext", "Settings", "StopRegistry", "SeatRegistry", "results_dir"]

@dataclass(frozen=True)
class Settings:
    """What the environment can change, and the bounds on what one visitor can start (``docs/app.md``, *Trust*)."""

    live_pace: float = 0.4
    """Default seconds between live decisions ($WOLFECLICK_LIVE_PACE)."""
    page_size: int = 25
    """Rows per page in the recordings list and the Compare battles table."""
    max_k: int = 64
    """Most rollouts per estimate a visitor's analysis may ask ($WOLFECLICK_APP_MAX_K)."""
    max_decisions: int = 400
    """Most decisions a battle may have for a visitor to analyse it ($WOLFECLICK_APP_MAX_DECISIONS)."""
    max_battles: int = 120
    """Most battles in one Compare run ($WOLFECLICK_APP_MAX_BATTLES)."""
    max_live: int = 4
    """Live battles in flight at once, every visitor together ($WOLFECLICK_APP_MAX_LIVE): Gradio's queue holds
    the next one until one ends."""
    max_upload_bytes: int = 20 * 1024 * 1024
    """The largest upload ($WOLFECLICK_APP_MAX_UPLOAD_MB)."""
    engines: tuple[str, ...] = ("local",)
    """Tournament engines a visitor may pick ($WOLFECLICK_APP_ENGINES)."""
    max_idle_s: float = 300.0
    """A person's seat that answers nothing for this long closes and frees its battle slot ($WOLFECLICK_APP_IDLE_S)."""
    count_uploads: bool = False
    """Verified uploads are rated on the Leaderboard ($WOLFECLICK_APP_COUNT_UPLOADS); off: only battles played here."""
    live_per_visitor: int = 1
    """Live battles one visitor (session or address) runs at once ($WOLFECLICK_APP_LIVE_PER_VISITOR)."""
    heavy_per_visitor: int = 1
    """Analyses, Compare runs and rescores one visitor runs at once ($WOLFECLICK_APP_HEAVY_PER_VISITOR)."""
    uploads_per_hour: int = 20
    """Uploads one visitor may store in an hour ($WOLFECLICK_APP_UPLOADS_PER_HOUR)."""
    upload_bytes_per_visitor: int = 100 * 1024 * 1024
    """Bytes of uploads one visitor may have stored ($WOLFECLICK_APP_UPLOAD_MB_PER_VISITOR)."""
    upload_store_bytes: int = 1000 * 1024 * 1024
    """All uploads together; the oldest are removed beyond it ($WOLFECLICK_APP_UPLOAD_STORE_MB)."""
    sessions: int = 256
    """Visitors' sessions kept in memory, the least recently used dropped first ($WOLFECLICK_APP_SESSIONS)."""
    session_idle_s: float = 1800.0
    """A session no request used for this long is dropped ($WOLFECLICK_APP_SESSION_IDLE_S)."""

    @classmethod
    def from_env(cls, environment: EnvSettings | None = None) -> "Settings":
        """The app's settings from the one settings object (``wolfeclick.settings``; default: the environment now)."""
        env = environment or settings()
        return cls(live_pace=env.live_pace, max_k=env.app_max_k, max_decisions=env.app_max_decisions,
                   max_battles=env.app_max_battles, max_live=env.app_max_live,
                   max_upload_bytes=int(env.app_max_upload_mb * 1024 * 1024), engines=env.app_engines,
                   max_idle_s=env.app_idle_s, count_uploads=env.app_count_uploads,
                   live_per_visitor=env.app_live_per_visitor, heavy_per_visitor=env.app_heavy_per_visitor,
                   uploads_per_hour=env.app_uploads_per_hour,
                   upload_bytes_per_visitor=int(env.app_upload_mb_per_visitor * 1024 * 1024),
                   upload_store_bytes=int(env.app_upload_store_mb * 1024 * 1024),
                   sessions=env.app_sessions, session_idle_s=env.app_session_idle_s)


class StopRegistry:
    """One stop event per (kind, browser session): Stop stops this session's battle, nobody else's. With a
    ``RunQuota``, starting a run also claims it against the visitor's quota (``QuotaRefused``, one line, when over)
    and finishing it releases the claim."""

    def __init__(self, quota: RunQuota | None = None) -> None:
        self._events: dict[tuple[str, str], asyncio.Event] = {}
        self.quota = quota
        self._claims: dict[int, int] = {}
        """id(stop event) → the quota's token for its run."""

    @staticmethod
    def session(request: Any) -> str:
        return getattr(request, "session_hash", None) or "anonymous"

    def start(self, kind: str, request: Any) -> asyncio.Event:
        """A fresh stop event for this session's new run (an older run of the same kind is stopped); raises
        ``QuotaRefused`` first when the visitor already runs as many of its class as the quota allows."""
        key = (kind, self.session(request))
        previous = self._events.get(key)
        event = asyncio.Event()
        if self.quota is not None and kind in RUN_CLASS:
            self._claims[id(event)] = self.quota.claim(kind, visitor_of(request), replacing=previous is not None)
        if previous is not None:
            previous.set()
        self._events[key] = event
        return event

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
        token = self._claims.pop(id(event), None)
        if token is not None and self.quota is not None:
            self.quota.release(token)

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
    standings: Standings = field(init=False)
    """The battle history of ``results`` and the library, rated together (made from them)."""
    value_model: ValueModel | None = field(default_factory=default_model)
    """The win-probability estimate every replay opens with (``analysis.value_model``; the shipped weights, read
    once per process); None draws none."""
    catalogue: ServedCatalogue = field(default_factory=lambda: ServedCatalogue.from_registry(default_registry()))
    """The policies a visitor may choose (default: the registry's own offer, nothing more); every spec a UI event
    or API call plays passes ``admit`` first (``policies.catalogue``)."""

    upload_quota: UploadQuota = field(init=False)
    """Uploads per visitor per hour and bytes stored per visitor (``ui.quotas``)."""

    def __post_init__(self) -> None:
        self.standings = Standings(self.results, self.library.directory, count_uploads=self.settings.count_uploads)
        if self.stops.quota is None:  # every run a visitor starts counts against the visitor's quota
            self.stops.quota = RunQuota({"live": self.settings.live_per_visitor,
                                         "heavy": self.settings.heavy_per_visitor})
        self.upload_quota = UploadQuota(self.settings.uploads_per_hour, self.settings.upload_bytes_per_visitor)
        if self.policies.admit is None:  # the app's cache builds only what a visitor may choose
            self.policies.admit = self.admit

    @classmethod
    def from_env(cls, library: Library | None = None) -> "AppContext":
        env = settings()
        catalogue = ServedCatalogue.from_registry(default_registry(), env.app_policies)
        return cls(library=library or Library(recordings_dir()), results=results_dir(),
                   settings=Settings.from_env(env), catalogue=catalogue)

    def admit(self, spec: object, *, human: bool = True) -> str:
        """A visitor's chosen policy as the app may play it, or a one-line ``PolicyRefused``: nothing outside the
        served catalogue is imported, read or connected to."""
        return self.catalogue.admit(spec, human=human)

    def saver(self) -> RecordingSaver:
        """A saver for one battle run into the recordings folder."""
        return RecordingSaver(self.library.directory)
