"""One battle played step by step: the runner on the service's loop, the agent's seat handed to the caller's thread.

The agent is a blocking ``Policy`` whose ``decide`` publishes the observation and waits for the caller's decision,
so the runner, its turn records and its recordings are exactly what ``stream_battle`` makes for any other policy.
The caller's thread and the runner meet through two ``Stream``s (``wolfeclick.battle.stream``); an episode that is
abandoned (closed, garbage collected, reset) makes the seat raise, which the runner turns into a forfeit that frees the simulator slot.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wolfeclick.battle.batch import relaxed_gc
from wolfeclick.battle.branch import stream_branch
from wolfeclick.battle.runner import stream_battle
from wolfeclick.battle.schema import Recording, SourceInfo, TurnRecord
from wolfeclick.battle.store import save_recording
from wolfeclick.battle.stream import Stream, StreamEnded
from wolfeclick.battle.teams import TeamSources, load_deal
from wolfeclick.env.service import SimService
from wolfeclick.errors import WolfeClickError
from wolfeclick.policies.base import Decision, Observation, Policy
from wolfeclick.sides import Side

AGENT_SPEC = "env:agent"
STEP_TIMEOUT_S = 120.0
"""No step waits longer than this for the simulator (it answers in milliseconds; only a wedged process is slower)."""


class EnvError(WolfeClickError, RuntimeError):
    """The env cannot do what was asked (no battle in progress, the battle is over, the simulator died)."""


class EpisodeClosed(Exception):
    """Raised inside the agent's seat when the episode is abandoned: the runner forfeits the agent's side."""


class AgentSeat:
    """The agent's side of the battle: ``decide`` waits for the decision the env's caller makes."""

    blocking = True
    interactive = True
    """Like a person, the agent is never asked to re-decide the decisions a branch replays (``start``)."""

    def __init__(self, spec: str, events: Stream[tuple[str, Any]]) -> None:
        self.spec = spec
        self.events = events
        self.decisions: Stream[Decision] = Stream()
        """The caller's decisions; ended when the episode is abandoned."""
        self.abandoned = threading.Event()

    def metadata(self) -> dict[str, Any]:
        return {"kind": "env", "description": "an agent stepping wolfeclick.env (Gymnasium / TRL / OpenEnv)"}

    def decide(self, observation: Observation) -> Decision:
        if self.abandoned.is_set():
            raise EpisodeClosed("the env was closed before the battle ended")
        if observation.request.get("teamPreview"):  # prompts and tools name moves and switches, not team orders
            return Decision(action=None, command="default", info={"note": "team preview: the team file's order"})
        if not observation.allowed():  # never hand the agent a decision it cannot make (no listed action is legal)
            return Decision(action=None, command="default",
                            info={"note": "no listed action is legal here: the simulator's default"})
        self.events.put(("decide", observation))
        try:
            return self.decisions.get()
        except StreamEnded:
            raise EpisodeClosed("the env was closed before the battle ended") from None


@dataclass
class EpisodeEnd:
    recording: Recording
    path: Path | None


class Episode:
    """A battle in flight on ``service``; ``wait`` returns the turn records up to the agent's next decision."""

    def __init__(self, service: SimService, opponent: Policy, *, agent_side: Side, format_id: str, seed: int,
                 max_turns: int, recordings: Path | None, source_detail: str | None, agent_spec: str = AGENT_SPEC,
                 teams: TeamSources | None = None, start: tuple[Recording, int] | None = None,
                 compress: bool = False) -> None:
        self.compress = compress
        """Save the recording gzip-compressed (``wolfeclick.battle.store.compress_recording``)."""
        self.events: Stream[tuple[str, Any]] = Stream()
        self.seat = AgentSeat(agent_spec, self.events)
        self.side = agent_side
        self.end: EpisodeEnd | None = None
        self.open_decision: dict[str, Any] | None = None
        """Set before a forfeit: the decision the agent was reading when it left, kept in its player metadata."""
        p1, p2 = (self.seat, opponent) if agent_side == "p1" else (opponent, self.seat)
        service.track(self)
        self.teams = teams
        self.start = start
        """(recording, k): replay that recording's choices up to decision k, then the agent and the opponent play on
        (``wolfeclick.battle.branch``); the agent is first asked at the first of its decisions from k on."""
        self.future = service.submit(self._play(service, p1, p2, format_id, seed, max_turns, recordings,
                                                source_detail))

    async def _play(self, service: SimService, p1: Policy, p2: Policy, format_id: str, seed: int, max_turns: int,
                    recordings: Path | None, source_detail: str | None) -> None:
        try:
            # training is bulk play: collect cycles as rarely as batches do, but freeze nothing: one episode after
            # another froze the last one's garbage out of every collection for good (issue 60)
            with relaxed_gc(freeze=False):
                await self._stream(service, p1, p2, format_id, seed, max_turns, recordings, source_detail)
        except BaseException as exc:  # surfaced in the caller's thread (a refused start, a full disk, a bug)
            self.events.fail(exc)
            raise
        self.events.end()

    async def _stream(self, service: SimService, p1: Policy, p2: Policy, format_id: str, seed: int, max_turns: int,
                      recordings: Path | None, source_detail: str | None) -> None:
        process = await service.process()
        source = SourceInfo(kind="training", detail=source_detail)
        if self.start is not None:
            parent, step = self.start
            items = stream_branch(parent, step, {"p1": p1, "p2": p2}, process=process, max_turns=max_turns)
            source = source.model_copy(update={"parent": parent.id, "branch_step": step})
        else:
            teams = None
            if self.teams is not None and self.teams.given:  # validated by the simulator; dealt from the battle seed
                teams = (await load_deal(self.teams, format_id, process)).infos(seed)
            items = stream_battle(p1, p2, format_id=format_id, seed=seed, max_turns=max_turns, process=process,
                                  teams=teams)
        async for item in items:
            if isinstance(item, TurnRecord):
                self.events.put(("record", item))
                continue
            update: dict[str, Any] = {"source": source}
            if self.open_decision is not None:
                player = item.players[self.side]
                metadata = {**player.metadata, "open_decision": self.open_decision}
                update["players"] = {**item.players, self.side: player.model_copy(update={"metadata": metadata})}
            recording = item.model_copy(update=update)
            path = None
            if recordings is not None:
                path = await asyncio.to_thread(save_recording, recording, recordings, compress=self.compress)
            self.events.put(("end", EpisodeEnd(recording, path)))

    def answer(self, decision: Decision) -> None:
        self.seat.decisions.put(decision)

    def wait(self, timeout: float = STEP_TIMEOUT_S) -> tuple[list[TurnRecord], Observation | None]:
        """Turn records finished since the last call, and the agent's next observation (None once the battle ended)."""
        records: list[TurnRecord] = []
        while True:
            try:
                kind, value = self.events.get(timeout=timeout)  # raises what the battle raised
            except TimeoutError:
                self.abandon()
                raise EnvError(f"the simulator did not answer within {timeout:.0f} s; the battle was abandoned") from None
            except StreamEnded:
                raise EnvError("the battle is over: call reset() to start another") from None
            if kind == "record":
                records.append(value)
            elif kind == "decide":
                return records, value
            else:
                self.end = value
                return records, None

    def abandon(self) -> None:
        """Make the agent forfeit (now, or at its next decision); returns at once."""
        self.seat.abandoned.set()
        self.seat.decisions.end()

    def finish(self, timeout: float = STEP_TIMEOUT_S) -> EpisodeEnd | None:
        """Abandon the battle if it is still going and wait for its recording (saved by then)."""
        if self.end is not None:
            return self.end
        self.abandon()
        try:
            self.future.result(timeout=timeout)
        except Exception:  # already reported to the caller through ``wait``, or a forfeit that could not be written
            pass
        while self.end is None:
            try:
                kind, value = self.events.get(timeout=0)
            except BaseException:  # noqa: BLE001 - nothing more: the end, or a failure ``wait`` reports
                break
            if kind == "end":
                self.end = value
        return self.end
