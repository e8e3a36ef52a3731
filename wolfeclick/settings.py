"""Every ``WOLFECLICK_*`` environment variable, read in this one place into one ``Settings`` object.

Modules ask ``settings()`` (the environment as it is now) or take a ``Settings`` their caller passes in; none reads
the environment itself (a test greps for that). Paths have one default each, relative to the working directory, so
an installed package writes beside the user's project, never into site-packages. A value that is not what its
variable takes is a one-line ``InputError`` naming the variable. Every layer may import this module; it imports
only ``wolfeclick.errors``.

| variable | default | what |
| --- | --- | --- |
| ``WOLFECLICK_RECORDINGS`` | ``./recordings`` | recordings, rescores, uploads |
| ``WOLFECLICK_RESULTS`` | ``./results`` | tournaments and the history index |
| ``WOLFECLICK_CACHE`` | ``$XDG_CACHE_HOME/wolfeclick`` or ``~/.cache/wolfeclick`` | the simulator's install |
| ``WOLFECLICK_SHOWDOWN`` | (the cache's install) | an existing ``pokemon-showdown`` package folder |
| ``WOLFECLICK_NODE`` | ``node`` on PATH | the Node.js executable |
| ``WOLFECLICK_SERVER`` | ``ws://127.0.0.1:8000/showdown/websocket`` | the server ``showdown:`` seats play on |
| ``WOLFECLICK_SHOWDOWN_PASSWORD`` | none | the ``ladder`` password when no ``--password-file`` is given |
| ``WOLFECLICK_LIVE_PACE`` | ``0.4`` | seconds between live decisions in the app |
| ``WOLFECLICK_SPRITES`` | ``1`` | show Pokémon sprites in the viewer (``0``/``false``/``no``/``off``: names) |
| ``WOLFECLICK_LLM_BATCH_MS`` | ``4`` | how long a model waits to batch decisions (ms) |
| ``WOLFECLICK_LLM_MAX_MODELS`` | ``2`` | base models kept loaded |
| ``WOLFECLICK_LLM_MAX_ADAPTERS`` | ``8`` | adapters kept loaded per base |
| ``WOLFECLICK_ENV_OPPONENT`` | the env's own | the training env's opponent spec |
| ``WOLFECLICK_APP_POLICIES`` | none | more specs the app offers its visitors, comma separated (``docs/app.md``) |
| ``WOLFECLICK_APP_MAX_K`` | ``64`` | the app: most rollouts per estimate a visitor's analysis may ask |
| ``WOLFECLICK_APP_MAX_DECISIONS`` | ``400`` | the app: most decisions a battle a visitor analyses may have |
| ``WOLFECLICK_APP_MAX_BATTLES`` | ``120`` | the app: most battles in one visitor's Compare run |
| ``WOLFECLICK_APP_MAX_LIVE`` | ``4`` | the app: live battles in flight at once, all visitors together |
| ``WOLFECLICK_APP_MAX_UPLOAD_MB`` | ``20`` | the app: largest upload a visitor may send (MB) |
| ``WOLFECLICK_APP_ENGINES`` | ``local`` | the app: tournament engines a visitor may pick (``local``, ``ray``) |
| ``WOLFECLICK_APP_IDLE_S`` | ``300`` | the app: a person's seat with no answer for this long closes |
| ``WOLFECLICK_APP_COUNT_UPLOADS`` | ``0`` | the app: rate verified uploads on the Leaderboard (off: only battles played here) |
| ``WOLFECLICK_APP_LIVE_PER_VISITOR`` | ``1`` | the app: live battles one visitor (page or address) may run at once |
| ``WOLFECLICK_APP_HEAVY_PER_VISITOR`` | ``1`` | the app: heavy jobs (analysis, Compare, rescore) one visitor may run at once |
| ``WOLFECLICK_APP_UPLOADS_PER_HOUR`` | ``20`` | the app: uploads one visitor may store in an hour |
| ``WOLFECLICK_APP_UPLOAD_MB_PER_VISITOR`` | ``100`` | the app: bytes of uploads one visitor may have stored (MB) |
| ``WOLFECLICK_APP_UPLOAD_STORE_MB`` | ``1000`` | the app: all uploads together (MB); the oldest are removed beyond it |
| ``WOLFECLICK_APP_SESSIONS`` | ``256`` | the app: visitors' sessions kept in memory (the least recently used dropped first) |
| ``WOLFECLICK_APP_SESSION_IDLE_S`` | ``1800`` | the app: a session no request used for this long is dropped |
| ``WOLFECLICK_SIM_NICE`` | ``0`` (the app: ``10``) | how much lower the simulator processes run than the process that starts them |
| ``WOLFECLICK_SIM_SNAPSHOT`` | ``1`` | ``0``: simulators start plainly, not from the startup snapshot (``wolfeclick.sim.snapshot``) |
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from wolfeclick.errors import InputError

__all__ = ["Settings", "settings", "VARIABLES", "DEFAULT_SERVER", "PASSWORD_VARIABLE"]

DEFAULT_SERVER = "ws://127.0.0.1:8000/showdown/websocket"
"""Showdown's own default port on this machine (``wolfeclick server --port 8000``)."""

VARIABLES = (
    "WOLFECLICK_RECORDINGS", "WOLFECLICK_RESULTS", "WOLFECLICK_CACHE", "WOLFECLICK_SHOWDOWN", "WOLFECLICK_NODE",
    "WOLFECLICK_SERVER", "WOLFECLICK_SHOWDOWN_PASSWORD", "WOLFECLICK_LIVE_PACE", "WOLFECLICK_SPRITES",
    "WOLFECLICK_LLM_BATCH_MS", "WOLFECLICK_LLM_MAX_MODELS", "WOLFECLICK_LLM_MAX_ADAPTERS", "WOLFECLICK_ENV_OPPONENT",
    "WOLFECLICK_APP_POLICIES", "WOLFECLICK_APP_MAX_K", "WOLFECLICK_APP_MAX_DECISIONS", "WOLFECLICK_APP_MAX_BATTLES",
    "WOLFECLICK_APP_MAX_LIVE", "WOLFECLICK_APP_MAX_UPLOAD_MB", "WOLFECLICK_APP_ENGINES", "WOLFECLICK_APP_IDLE_S",
    "WOLFECLICK_APP_COUNT_UPLOADS", "WOLFECLICK_APP_LIVE_PER_VISITOR", "WOLFECLICK_APP_HEAVY_PER_VISITOR",
    "WOLFECLICK_APP_UPLOADS_PER_HOUR", "WOLFECLICK_APP_UPLOAD_MB_PER_VISITOR", "WOLFECLICK_APP_UPLOAD_STORE_MB",
    "WOLFECLICK_APP_SESSIONS",
    "WOLFECLICK_APP_SESSION_IDLE_S",
    "WOLFECLICK_SIM_NICE",
    "WOLFECLICK_SIM_SNAPSHOT",
)
"""Every variable read, in the order of the table above."""
PASSWORD_VARIABLE = "WOLFECLICK_SHOWDOWN_PASSWORD"
"""Named in messages (``ladder``'s help): the password never comes from the command line."""

_T = TypeVar("_T")
_OFF = ("0", "false", "no", "off")


@dataclass(frozen=True)
class Settings:
    """The environment's settings, parsed. Build one with ``Settings.from_env`` (or directly, in a test)."""

    recordings: Path
    results: Path
    cache: Path
    showdown: Path | None
    """None: the cache's own install (``sim.install``)."""
    node: str | None
    """None: ``node`` on PATH."""
    server: str
    showdown_password: str | None
    live_pace: float
    sprites: bool
    llm_batch_ms: float
    llm_max_models: int
    llm_max_adapters: int
    env_opponent: str | None
    app_policies: tuple[str, ...] = ()
    """Specs the operator opens to the app's visitors, besides the catalogue's own (``policies.catalogue``)."""
    app_max_k: int = 64
    app_max_decisions: int = 400
    app_max_battles: int = 120
    app_max_live: int = 4
    app_max_upload_mb: float = 20.0
    app_engines: tuple[str, ...] = ("local",)
    app_idle_s: float = 300.0
    app_count_uploads: bool = False
    app_live_per_visitor: int = 1
    app_heavy_per_visitor: int = 1
    app_uploads_per_hour: int = 20
    app_upload_mb_per_visitor: float = 100.0
    app_upload_store_mb: float = 1000.0
    app_sessions: int = 256
    """Gradio keeps ~330 kB of component settings per session and dropped none below 10,000 (``ui.sessions``)."""
    app_session_idle_s: float = 1800.0
    sim_nice: int = 0
    """Added to the simulators' niceness (0-19): the app lowers them so that a page's own work comes first."""
    sim_snapshot: bool = True
    """Simulators start from a V8 startup snapshot (``wolfeclick.sim.snapshot``); 0 starts them plainly."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        """The settings ``environ`` (default ``os.environ``) gives; a bad value is a one-line ``InputError``."""
        env = os.environ if environ is None else environ

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def number(name: str, default: _T, kind: Callable[[str], _T], low: float) -> _T:
            value = text(name)
            if value is None:
                return default
            try:
                parsed = kind(value)
            except ValueError:
                what = "whole number" if kind is int else "number"
                raise InputError(f"${name} is {value[:40]!r}, not a {what}") from None
            if not parsed >= low:  # type: ignore[operator]
                raise InputError(f"${name} is {value[:40]!r}; it must be at least {low:g}")
            return parsed

        xdg = text("XDG_CACHE_HOME")
        cache = text("WOLFECLICK_CACHE")
        showdown = text("WOLFECLICK_SHOWDOWN")
        return cls(
            recordings=_folder(text("WOLFECLICK_RECORDINGS") or "recordings"),
            results=_folder(text("WOLFECLICK_RESULTS") or "results"),
            cache=Path(cache).expanduser() if cache else (Path(xdg).expanduser() if xdg else
                                                           Path.home() / ".cache") / "wolfeclick",
            showdown=Path(showdown).expanduser() if showdown else None,
            node=text("WOLFECLICK_NODE"),
            server=text("WOLFECLICK_SERVER") or DEFAULT_SERVER,
            showdown_password=env.get("WOLFECLICK_SHOWDOWN_PASSWORD") or None,
            live_pace=number("WOLFECLICK_LIVE_PACE", 0.4, float, 0.0),
            sprites=(text("WOLFECLICK_SPRITES") or "1").lower() not in _OFF,
            llm_batch_ms=number("WOLFECLICK_LLM_BATCH_MS", 4.0, float, 0.0),
            llm_max_models=number("WOLFECLICK_LLM_MAX_MODELS", 2, int, 1),
            llm_max_adapters=number("WOLFECLICK_LLM_MAX_ADAPTERS", 8, int, 1),
            env_opponent=text("WOLFECLICK_ENV_OPPONENT"),
            app_policies=_listed(text("WOLFECLICK_APP_POLICIES")),
            app_max_k=number("WOLFECLICK_APP_MAX_K", 64, int, 1),
            app_max_decisions=number("WOLFECLICK_APP_MAX_DECISIONS", 400, int, 1),
            app_max_battles=number("WOLFECLICK_APP_MAX_BATTLES", 120, int, 2),
            app_max_live=number("WOLFECLICK_APP_MAX_LIVE", 4, int, 1),
            app_max_upload_mb=number("WOLFECLICK_APP_MAX_UPLOAD_MB", 20.0, float, 0.001),
            app_engines=_engines(text("WOLFECLICK_APP_ENGINES")),
            app_idle_s=number("WOLFECLICK_APP_IDLE_S", 300.0, float, 1.0),
            app_count_uploads=(text("WOLFECLICK_APP_COUNT_UPLOADS") or "0").lower() not in _OFF,
            app_live_per_visitor=number("WOLFECLICK_APP_LIVE_PER_VISITOR", 1, int, 1),
            app_heavy_per_visitor=number("WOLFECLICK_APP_HEAVY_PER_VISITOR", 1, int, 1),
            app_uploads_per_hour=number("WOLFECLICK_APP_UPLOADS_PER_HOUR", 20, int, 1),
            app_upload_mb_per_visitor=number("WOLFECLICK_APP_UPLOAD_MB_PER_VISITOR", 100.0, float, 0.001),
            app_upload_store_mb=number("WOLFECLICK_APP_UPLOAD_STORE_MB", 1000.0, float, 0.001),
            app_sessions=number("WOLFECLICK_APP_SESSIONS", 256, int, 1),
            app_session_idle_s=number("WOLFECLICK_APP_SESSION_IDLE_S", 1800.0, float, 1.0),
            sim_nice=min(19, number("WOLFECLICK_SIM_NICE", 0, int, 0)),
            sim_snapshot=(text("WOLFECLICK_SIM_SNAPSHOT") or "1").lower() not in _OFF,
        )


def _listed(value: str | None) -> tuple[str, ...]:
    """A comma-separated list of specs (blank entries dropped); a spec itself never holds a comma."""
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


ENGINES = ("local", "ray")


def _engines(value: str | None) -> tuple[str, ...]:
    engines = _listed(value) or ("local",)
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        raise InputError(f"$WOLFECLICK_APP_ENGINES names {unknown[0][:20]!r}; engines: {', '.join(ENGINES)}")
    return engines


def _folder(value: str) -> Path:
    """A folder setting: ``~`` expanded, relative to the working directory, absolute."""
    return Path(value).expanduser().resolve()


APP_SIM_NICE = 10
"""The app's simulators run this much nicer than its page handlers unless ``$WOLFECLICK_SIM_NICE`` says otherwise."""


def app_simulators_yield() -> None:
    """The app's default for ``$WOLFECLICK_SIM_NICE`` (set for this process and every process it starts, unless the
    operator set it): a visitor's replay step never waits on the CPU behind another visitor's battles."""
    os.environ.setdefault("WOLFECLICK_SIM_NICE", str(APP_SIM_NICE))


def settings() -> Settings:
    """The settings of the environment as it is now (read afresh: cheap, and a test's ``setenv`` is seen)."""
    return Settings.from_env()
