"""Tournament engines: who plays a tournament's battles. The driver (``run_tournament``) owns every file.

A tournament's pending battles are cut into ``SpecJob``s (policy *specs*, not policies, so a job can travel to
another process or machine). An engine turns them into recordings and streams ``(job position, recording)`` back
as each battle ends; the driver writes ``progress.jsonl``, recordings, ``results.jsonl`` and ``summary.json``
exactly as before. Placement never changes a battle (see ``battle.runner``), so every engine gives the same rows.

* ``LocalEngine`` — this process: ``battle.batch.run_jobs`` on a local simulator pool (what ``bench`` always did).
* ``RayEngine`` (``engines.ray_engine``, imported only when asked for: Ray is optional) — simulator-worker actors
  and model-server actors on a Ray cluster, or a local Ray instance sized to this machine.

Each engine has two steps: ``prepare(specs, policies, llm_options)`` checks (and, locally, builds) the policies
before the driver writes anything, so a bad spec leaves no directory behind; ``play(jobs, lineup, concurrency=…)``
is an async generator to be closed with ``contextlib.aclosing`` (closing it early stops the battles in flight).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from wolfeclick.battle.runner import DEFAULT_MAX_TURNS
from wolfeclick.battle.schema import Recording, TeamInfo
from wolfeclick.errors import InputError
from wolfeclick.policies.base import Policy

__all__ = ["ENGINES", "SpecJob", "Engine", "LocalEngine", "make_engine"]

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class SpecJob:
    """One battle to play, by policy spec: plain, picklable data (a ``BattleJob`` once its policies are built)."""

    p1: str
    p2: str
    format_id: str
    seed: int
    max_turns: int = DEFAULT_MAX_TURNS
    battle_id: str | None = None
    teams: dict[str, TeamInfo] | None = None


class Engine(Protocol):
    """What ``run_tournament`` needs from an engine (see the module docstring)."""

    name: str

    def prepare(self, specs: Sequence[str], policies: Mapping[str, Policy],
                llm_options: Mapping[str, Any]) -> Any:
        """Check every spec (raising a one-line WolfeClickError); return what ``play`` needs (the *lineup*)."""

    def play(self, jobs: Sequence[SpecJob], lineup: Any, *,
             concurrency: int) -> AsyncIterator[tuple[int, Recording]]:
        """Play ``jobs``; yield ``(position in jobs, recording)`` as each battle ends, in any order."""


class LocalEngine:
    """Battles in this process, on a local simulator pool: ``run_jobs`` with one replay of an aborted battle."""

    name = "local"

    def prepare(self, specs: Sequence[str], policies: Mapping[str, Policy],
                llm_options: Mapping[str, Any]) -> dict[str, Policy]:
        from wolfeclick.battle.specs import make_policy

        built = dict(policies)
        for spec in specs:
            if spec not in built:
                built[spec] = make_policy(spec, **dict(llm_options))
        return built

    async def play(self, jobs: Sequence[SpecJob], lineup: Mapping[str, Policy], *,
                   concurrency: int) -> AsyncIterator[tuple[int, Recording]]:
        from contextlib import aclosing

        from wolfeclick.battle.batch import run_jobs

        stream = run_jobs([battle_job(job, lineup) for job in jobs], concurrency=concurrency, replays=1)
        async with aclosing(stream):
            async for item in stream:
                yield item


def battle_job(job: SpecJob, policies: Mapping[str, Policy]) -> Any:
    """The ``BattleJob`` of a ``SpecJob``, its seats filled from ``policies`` (spec → policy)."""
    from wolfeclick.battle.batch import BattleJob

    return BattleJob(policies[job.p1], policies[job.p2], job.format_id, job.seed, job.max_turns, job.battle_id,
                     teams=job.teams)


def make_engine(name: str | None = "local", *, address: str | None = None, **options: Any) -> Engine:
    """The engine called ``name`` (``local`` or ``ray``); ``address`` (``auto``, ``HOST:PORT``) is Ray's only.

    Ray is imported here only for ``ray``, so the local path (the app, ``bench``) never loads it.
    """
    name = (name or "local").strip().lower()
    if name == "local":
        if address:
            raise InputError("--address needs --engine ray")
        return LocalEngine()
    if name == "ray":
        try:
            from wolfeclick.arena.engines.ray_engine import RayEngine
        except ImportError as exc:
            raise InputError(f"the ray engine needs the ray package (pip install -r requirements.txt): {exc}") from None
        return RayEngine(address=address, **options)
    raise InputError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
