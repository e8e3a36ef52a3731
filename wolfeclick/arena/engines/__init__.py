"""Tournament engines: who plays a tournament's battles. The driver (``run_tournament``) owns every file.

A tournament's pending battles are cut into ``SpecJob``s (policy *specs*, not policies, so a job can travel to
another process or machine). An engine plays them and streams ``(job position, FinishedBattle)`` back as each
battle ends: what the driver needs and no more — the row's ``BattleFacts`` and, only when the tournament keeps
recordings, the recording to save (already marked with the tournament's ``SourceInfo``). The driver writes
``progress.jsonl``, recordings, ``results.jsonl`` and ``summary.json`` exactly as before. Placement never changes a
battle (see ``battle.runner``), so every engine gives the same rows and the same recordings.

* ``LocalEngine`` — this process: ``battle.batch.run_jobs`` on a local simulator pool (what ``bench`` always did).
* ``RayEngine`` (``engines.ray_engine``, imported only when asked for: Ray is optional) — simulator-worker actors
  and model-server actors on a Ray cluster, or a local Ray instance sized to this machine.

Each engine has two steps: ``prepare(specs, policies, llm_options)`` checks (and, locally, builds) the policies
before the driver writes anything, so a bad spec leaves no directory behind; ``play(jobs, lineup, concurrency=…,
keep=…)`` is an async generator to be closed with ``contextlib.aclosing`` (closing it early stops the battles in
flight). ``keep`` is the ``SourceInfo`` to mark kept recordings with, or None when none are kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from wolfeclick.arena.results import BattleFacts, battle_facts
from wolfeclick.battle.runner import DEFAULT_MAX_TURNS
from wolfeclick.battle.schema import Recording, SourceInfo, TeamInfo
from wolfeclick.battle.store import AnyRecording, EncodedRecording
from wolfeclick.errors import InputError
from wolfeclick.extras import require
from wolfeclick.policies.base import Policy

__all__ = ["ENGINES", "SpecJob", "FinishedBattle", "finished_battle", "Engine", "LocalEngine", "make_engine"]

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


@dataclass(frozen=True)
class FinishedBattle:
    """What an engine hands the driver for one finished battle: the facts of its row and, only when recordings are
    kept, the recording to save — the ``Recording`` itself from this process, an ``EncodedRecording`` (its bytes)
    from another, where sending the model would cost more than the battle's own bookkeeping."""

    facts: BattleFacts
    recording: AnyRecording | None = None


def finished_battle(recording: Recording, keep: SourceInfo | None, *, encode: bool = False) -> FinishedBattle:
    """``recording`` as an engine hands it over: its facts, and itself marked with ``keep`` (encoded if
    ``encode``) when recordings are kept."""
    facts = battle_facts(recording)
    if keep is None:
        return FinishedBattle(facts)
    marked = recording.model_copy(update={"source": keep})
    return FinishedBattle(facts, EncodedRecording.of(marked) if encode else marked)


class Engine(Protocol):
    """What ``run_tournament`` needs from an engine (see the module docstring)."""

    name: str

    def prepare(self, specs: Sequence[str], policies: Mapping[str, Policy],
                llm_options: Mapping[str, Any]) -> Any:
        """Check every spec (raising a one-line WolfeClickError); return what ``play`` needs (the *lineup*)."""

    def play(self, jobs: Sequence[SpecJob], lineup: Any, *, concurrency: int,
             keep: SourceInfo | None = None) -> AsyncIterator[tuple[int, FinishedBattle]]:
        """Play ``jobs``; yield ``(position in jobs, finished battle)`` as each ends, in any order (recordings
        in them only when ``keep``, marked with it)."""


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

    async def play(self, jobs: Sequence[SpecJob], lineup: Mapping[str, Policy], *, concurrency: int,
                   keep: SourceInfo | None = None) -> AsyncIterator[tuple[int, FinishedBattle]]:
        from contextlib import aclosing

        from wolfeclick.battle.batch import run_jobs

        stream = run_jobs([battle_job(job, lineup) for job in jobs], concurrency=concurrency, replays=1)
        async with aclosing(stream):
            async for position, recording in stream:
                yield position, finished_battle(recording, keep)  # in-process: the recording itself


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
        require("ray", "the ray engine")
        from wolfeclick.arena.engines.ray_engine import RayEngine

        return RayEngine(address=address, **options)
    raise InputError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
