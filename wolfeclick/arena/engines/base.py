"""What every tournament engine shares (``arena.engines`` tells the whole story): the job, the finished battle,
the engine protocol and the local engine. Apart from the package's ``make_engine`` so that the Ray engine, which
imports these, is not imported by the module it imports (issue 50: no circles)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from wolfeclick.arena.results import BattleFacts, battle_facts, swap_seats
from wolfeclick.battle.remote import RemoteBattle, ServerSeat
from wolfeclick.battle.runner import DEFAULT_MAX_TURNS
from wolfeclick.battle.schema import Recording, SourceInfo, TeamInfo
from wolfeclick.battle.store import AnyRecording, EncodedRecording
from wolfeclick.errors import InputError
from wolfeclick.policies.base import Policy
from wolfeclick.sides import Side, other

__all__ = ["SpecJob", "FinishedBattle", "finished_battle", "battle_job", "server_seat", "Engine", "LocalEngine"]


@dataclass(frozen=True)
class SpecJob:
    """One battle to play, by policy spec: plain, picklable data (a ``BattleJob`` once its policies are built)."""

    p1: str
    p2: str
    format_id: str
    seed: int
    max_turns: int = DEFAULT_MAX_TURNS
    battle_id: str | None = None
    teams: dict[Side, TeamInfo] | None = None


@dataclass(frozen=True)
class FinishedBattle:
    """What an engine hands the driver for one finished battle: the facts of its row and, only when recordings are
    kept, the recording to save — the ``Recording`` itself from this process, an ``EncodedRecording`` (its bytes)
    from another, where sending the model would cost more than the battle's own bookkeeping."""

    facts: BattleFacts
    recording: AnyRecording | None = None


def finished_battle(recording: Recording, keep: SourceInfo | None, *, encode: bool = False,
                    swapped: bool = False) -> FinishedBattle:
    """``recording`` as an engine hands it over: its facts, and itself marked with ``keep`` (encoded if
    ``encode``) when recordings are kept. ``swapped``: the recording's seats are the other way round from the
    schedule's (a server seated the players), so the facts are turned back to the schedule's."""
    facts = swap_seats(battle_facts(recording)) if swapped else battle_facts(recording)
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
             keep: SourceInfo | None = None) -> AsyncGenerator[tuple[int, FinishedBattle], None]:
        """Play ``jobs``; yield ``(position in jobs, finished battle)`` as each ends, in any order (recordings
        in them only when ``keep``, marked with it)."""


class LocalEngine:
    """Battles in this process, on a local simulator pool: ``run_jobs`` with one replay of an aborted battle."""

    name = "local"

    def prepare(self, specs: Sequence[str], policies: Mapping[str, Policy],
                llm_options: Mapping[str, Any]) -> dict[str, Policy]:
        from wolfeclick.battle.policy_specs import make_policy

        built = dict(policies)
        for spec in specs:
            if spec not in built:  # ``showdown:USER`` too: the registry builds its server seat
                built[spec] = make_policy(spec, **dict(llm_options))
        for policy in built.values():
            if isinstance(policy, ServerSeat) and policy.spec in specs:
                policy.check()  # its user is connected: one line before anything is written, not at its first battle
        return built

    async def play(self, jobs: Sequence[SpecJob], lineup: Mapping[str, Policy], *, concurrency: int,
                   keep: SourceInfo | None = None) -> AsyncGenerator[tuple[int, FinishedBattle], None]:
        from contextlib import aclosing

        from wolfeclick.battle.batch import run_jobs

        remote = [(i, job) for i, job in enumerate(jobs) if server_seat(job, lineup) is not None]
        for position, job in remote:  # first: a bot that went away ends the run before the rest is played
            yield position, await play_on_server(job, lineup, keep)
        local = [(i, job) for i, job in enumerate(jobs) if server_seat(job, lineup) is None]
        stream = run_jobs([battle_job(job, lineup) for _, job in local], concurrency=concurrency, replays=1)
        async with aclosing(stream):
            async for position, recording in stream:
                yield local[position][0], finished_battle(recording, keep)  # in-process: the recording itself


def server_seat(job: SpecJob, policies: Mapping[str, Policy]) -> tuple[ServerSeat, Side] | None:
    """The job's server seat and the side the schedule gives it, or None when both seats play here. Two server
    seats cannot meet: the Arena plays one side of every battle."""
    seated: tuple[tuple[str, Side], ...] = ((job.p1, "p1"), (job.p2, "p2"))
    seats = [(policies[spec], side) for spec, side in seated
             if isinstance(policies[spec], ServerSeat)]
    if len(seats) == 2:
        raise InputError(f"{job.p1} and {job.p2} both play on a server: the Arena must play one side of each battle")
    if not seats:
        return None
    seat, side = seats[0]
    assert isinstance(seat, ServerSeat)
    return seat, side


async def play_on_server(job: SpecJob, policies: Mapping[str, Policy], keep: SourceInfo | None) -> FinishedBattle:
    """One battle of ``job`` on its server seat's server, the Arena's policy challenging the bot."""
    found = server_seat(job, policies)
    assert found is not None
    seat, side = found
    ours = other(side)
    policy = policies[job.p1 if ours == "p1" else job.p2]
    team = job.teams.get(ours) if job.teams else None
    recording = await seat.play_against(policy, RemoteBattle(job.format_id, job.max_turns, job.battle_id, team))
    return finished_battle(recording, keep, swapped=recording.players[side].policy != seat.spec)


def battle_job(job: SpecJob, policies: Mapping[str, Policy]) -> Any:
    """The ``BattleJob`` of a ``SpecJob``, its seats filled from ``policies`` (spec → policy)."""
    from wolfeclick.battle.batch import BattleJob

    return BattleJob(policies[job.p1], policies[job.p2], job.format_id, job.seed, job.max_turns, job.battle_id,
                     teams=job.teams)


