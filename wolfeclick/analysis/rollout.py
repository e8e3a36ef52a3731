"""One continuation of a recorded battle from one of its decisions, with fresh luck.

The simulator replays a battle exactly from its input log, so feeding it the recording's own input up to a decision
puts it in the true state of that decision — both teams, every hidden roll so far. A ``>reseed`` line (the door's
one admitted form, derived from the analysis seed) then gives it new luck, and the rollout policies play on through
the ordinary runner. The prefix is fed in the ``start`` request itself, so the runner's first decision point *is* the
recording's decision; each side's view is checked against the state the recording says it saw there.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from wolfeclick.battle.branch import BranchError, replayable, turn_limit_of
from wolfeclick.battle.lean import LeanRun, play_out
from wolfeclick.battle.runner import stream_battle
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.errors import WolfeClickError
from wolfeclick.policies.base import Decision, Observation, Policy
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.protocol import SIDES, derive_int, reseed_line

RESET_LINE = "|message|The battle's RNG was reset."
"""What Showdown writes to the log when ``>reseed`` arrives: the first line that belongs to the rollout."""


def prefix_lines(recording: Recording, step: int) -> list[str]:
    """The recording's input log up to decision ``step``: its start lines and every choice committed before it.

    Showdown logs one committed choice per deciding side per decision point (refused choices never reach its log),
    so decision ``step`` begins after ``sum(len(turn.deciding) for turns before it)`` choice lines.
    """
    replayable(recording)
    if not 0 <= step < len(recording.turns):
        raise BranchError(f"step must be between 0 and {len(recording.turns) - 1} ({recording.id} has "
                          f"{len(recording.turns)} decision points)")
    head = next((n for n, line in enumerate(recording.inputlog) if line.startswith((">p1 ", ">p2 "))),
                len(recording.inputlog))
    cut = head + sum(len(turn.deciding) for turn in recording.turns[:step])
    choices = recording.inputlog[head:cut]
    if len(choices) < cut - head or not all(line.startswith((">p1 ", ">p2 ")) for line in choices):
        raise BranchError(f"{recording.id}: its input log does not hold the choices of its first {step} decisions")
    return recording.inputlog[:cut]


def luck_label(step: int, rollout: int) -> str:
    """Rollout ``rollout`` from decision ``step`` gets the same luck whichever option it starts with (common random
    numbers: the options of one decision differ by their choices, not by their dice)."""
    return f"analysis:{step}:{rollout}"


class AnalysisStopped(WolfeClickError):
    """The analysis was asked to stop; nothing was written. (Here, beside the rollouts, so that the local and the
    Ray engine raise one error without either importing the other's driver.)"""


class Forks:
    """Rollouts that start as copies of a decision instead of replaying its prefix each time.

    Per simulator process and decision, the prefix is replayed once and frozen there (the bridge's ``snapshot``:
    Showdown's ``State.serializeBattle``), and its output kept; each rollout is then a ``fork`` of that snapshot
    (``deserializeBattle``) fed only its reseed, and the runner absorbs the kept output followed by the copy's own.
    A lean rollout (``begin``) keeps instead what the policies saw at the decision, read from that output once per
    decision and copied into each rollout (``LeanRun.freeze``/``thaw``), and absorbs only the copy's own output.
    ``close`` frees the snapshots. One per analysis: nothing is shared between analyses.
    """

    def __init__(self, worlds: Worlds | None = None) -> None:
        self.worlds = worlds
        """Where each decision's snapshot comes from instead of a replayed prefix (a public replay: an inferred
        state, ``wolfeclick.interop.takeover.InferredWorlds``)."""
        self._kept: dict[tuple[int, int, str], tuple[str, Any]] = {}
        self._locks: dict[tuple[int, int, str], asyncio.Lock] = {}
        self._processes: dict[int, SimProcess] = {}
        self._frozen: dict[int, bytes] = {}

    async def _template(self, process: SimProcess, recording: Recording, step: int, prefix: list[str],
                        kind: str, keep: Callable[[list[str]], Any]) -> tuple[str, Any]:
        """The snapshot of decision ``step`` on ``process`` (made on first use) and ``keep`` of its prefix's output
        (``kind`` names what ``keep`` makes: full and lean copies keep different things)."""
        slot = (id(process), step, kind)
        async with self._locks.setdefault(slot, asyncio.Lock()):
            if slot not in self._kept:
                name = f"analysis-{id(self)}-{kind}-{step}"
                if self.worlds is not None:
                    out = await self.worlds.load(process, step, name)
                else:
                    template = f"{name}-template"
                    reply = await process.call("start", battle=template, format=recording.format, lines=prefix)
                    await process.call("snapshot", battle=template, snapshot=name)
                    await process.call("close", battle=template)
                    out = reply["out"]
                self._kept[slot] = (name, keep(list(out)))
                self._processes[id(process)] = process
        return self._kept[slot]

    async def snapshot(self, process: SimProcess, recording: Recording, step: int, prefix: list[str]) -> str:
        """The name of decision ``step``'s snapshot on ``process`` (made on first use), for the bridge's ``fork``
        and ``playout``."""
        return (await self._template(process, recording, step, prefix, "full", lambda out: out))[0]

    async def start(self, process: SimProcess, recording: Recording, step: int, prefix: list[str], key: str,
                    lines: list[str]) -> dict[str, Any]:
        """A copy of decision ``step`` named ``key``, fed ``lines``: its reply, the prefix's output first."""
        name, kept = await self._template(process, recording, step, prefix, "full", lambda out: out)
        reply = await process.call("fork", snapshot=name, battle=key, lines=lines)
        return {**reply, "out": [*kept, *reply["out"]]}

    async def begin(self, process: SimProcess, recording: Recording, step: int, prefix: list[str], run: LeanRun,
                    lines: list[str]) -> None:
        """The lean form of ``start``: ``run`` continues from what the policies saw at decision ``step`` (read from
        the prefix's output once per decision, then copied) and absorbs only the copy's own output."""

        def freeze(out: list[str]) -> bytes:
            if step not in self._frozen:  # the prefix's output is the same on every process: read it once
                reader = LeanRun(run.policies["p1"], run.policies["p2"], format_id=run.format, seed=0,
                                 max_turns=run.max_turns, battle_id=run.id, names=run.names, teams=run.teams)
                reader.absorb(out)
                self._frozen[step] = reader.freeze()
            return self._frozen[step]

        name, frozen = await self._template(process, recording, step, prefix, "lean", freeze)
        reply = await process.call("fork", snapshot=name, battle=run.key, lines=lines)
        run.thaw(frozen)
        run.absorb(reply["out"])

    async def close(self) -> None:
        for (process_id, *_), (name, _) in list(self._kept.items()):
            process = self._processes[process_id]
            if process.alive:
                await process.call("forget", snapshot=name)
        self._kept.clear()
        self._frozen.clear()


class Worlds(Protocol):
    """Decisions built in the simulator from something other than the recording's input log."""

    label: str
    """What the analysis starts from (its ``sees``)."""
    names: dict[Side, str]
    """The players' names in the built battles."""

    async def load(self, process: SimProcess, step: int, snapshot: str) -> list[str]:
        """Build decision ``step`` as ``snapshot`` on ``process``; the output a runner reads before a copy's own."""
        ...


class _FromDecision:
    """A simulator process whose next battle starts from a recorded prefix and a reseed instead of a fresh start:
    the prefix replayed in the ``start`` request itself, or (with ``forks``) a copy of the decision."""

    def __init__(self, process: SimProcess, recording: Recording, step: int, prefix: list[str], reseed: str,
                 forks: Forks | None) -> None:
        self.process = process
        self.recording = recording
        self.step = step
        self.prefix = prefix
        self.reseed = reseed
        self.forks = forks

    @property
    def info(self) -> dict[str, Any]:
        return self.process.info

    async def call(self, op: str, **fields: Any) -> dict[str, Any]:
        if op == "start":
            if self.forks is not None:
                return await self.forks.start(self.process, self.recording, self.step, self.prefix,
                                              fields["battle"], [self.reseed])
            fields["lines"] = [*self.prefix, self.reseed]
        return await self.process.call(op, **fields)


class _Opening:
    """Plays ``first`` (an action as recorded) at the side's first decision, then ``then``; checks the first view.

    If the simulator refuses the action (a trap the request did not show), ``then`` decides instead.
    """

    def __init__(self, then: Policy, expected_state: str | None, first: ActionRecord | None) -> None:
        self.then = then
        self.spec = then.spec
        self.blocking = then.blocking
        self.expected_state = expected_state
        self.first = first
        self.started = False
        self.failure: str | None = None

    def metadata(self) -> dict[str, Any]:
        return self.then.metadata()

    def decide(self, observation: Observation) -> Decision:
        if not self.started:
            self.started = True
            if self.expected_state is not None and observation.state != self.expected_state:
                self.failure = (f"the replayed prefix does not reach the recorded state of {observation.side} "
                                "(imported or edited recording?)")
            if self.first is not None:
                action = next((a for a in observation.legal_actions if a.kind == self.first.action
                               and a.name == self.first.choice), None)
                if action is None:
                    self.failure = f"{self.first.action} {self.first.choice} is not legal for {observation.side} here"
                return Decision(action=action)
        return self.then.decide(observation)


@dataclass(frozen=True)
class Outcome:
    """How one rollout ended: the winner (None for a tie or the turn limit), the battle's log (empty for a lean
    rollout, which keeps none) and the simulator's input log (what makes the battle: equal logs, equal battles)."""

    winner: str | None
    reason: str
    log: list[str]
    inputlog: list[str] = field(default_factory=list)


def _openings(recording: Recording, step: int, policies: dict[Side, Policy],
              first: dict[Side, ActionRecord] | None, forks: Forks | None = None) -> dict[str, _Opening]:
    turn = recording.turns[step]
    checked = forks is None or forks.worlds is None  # a built world has no recorded state to check against
    return {side: _Opening(policies[side], turn.decisions[side].state if side in turn.decisions and checked
                           else None, (first or {}).get(side)) for side in SIDES}


def _names(recording: Recording, forks: Forks | None) -> dict[Side, str]:
    if forks is not None and forks.worlds is not None:
        return dict(forks.worlds.names)
    return {side: recording.players[side].name for side in SIDES}


def _checked(recording: Recording, step: int, wrappers: dict[str, _Opening], reason: str, error: str | None) -> None:
    """Raise BranchError unless the rollout began at the recorded decision and was played to an end."""
    failure = next((w.failure for w in wrappers.values() if w.failure), None)
    missing = [side for side in recording.turns[step].deciding if not wrappers[side].started]
    if failure or missing:
        raise BranchError(f"{recording.id} decision {step + 1}: "
                          f"{failure or 'the replayed prefix does not reach a decision of ' + ', '.join(missing)}")
    if reason == "aborted":
        raise BranchError(f"{recording.id} decision {step + 1}: a rollout could not be played: {error}")


def _policy_seed(seed: int, step: int, number: int) -> int:
    return derive_int(seed, f"analysis-policy:{step}:{number}") >> 2


async def rollout(recording: Recording, step: int, policies: dict[Side, Policy], *, process: SimProcess, seed: int,
                  number: int, first: dict[Side, ActionRecord] | None = None,
                  prefix: list[str] | None = None, forks: Forks | None = None) -> Outcome:
    """Continue ``recording`` from decision ``step`` with ``policies``, luck and policy draws from ``seed`` and
    ``number``; ``first`` forces a side's first action; ``forks`` starts it as a copy of the decision rather than
    a replay of its prefix (the same battle either way). Raises BranchError if the prefix does not reach the
    recorded decision or the battle cannot be played to an end."""
    lines = prefix if prefix is not None else prefix_lines(recording, step)
    reseed = reseed_line(seed, luck_label(step, number))
    wrappers = _openings(recording, step, policies, first, forks)
    result = None
    async for item in stream_battle(
        wrappers["p1"], wrappers["p2"], format_id=recording.format, seed=_policy_seed(seed, step, number),
        max_turns=turn_limit_of(recording), battle_id=recording.id,
        process=_FromDecision(process, recording, step, lines, reseed, forks),  # type: ignore[arg-type]
        names=_names(recording, forks), teams=recording.teams,
    ):
        if isinstance(item, Recording):
            result = item
    assert result is not None
    _checked(recording, step, wrappers, result.result.reason, result.result.error)
    return Outcome(result.result.winner, result.result.reason, result.log, result.inputlog)


async def lean_rollout(recording: Recording, step: int, policies: dict[Side, Policy], *, process: SimProcess,
                       seed: int, number: int, first: dict[Side, ActionRecord] | None = None,
                       prefix: list[str] | None = None, forks: Forks | None = None) -> Outcome:
    """``rollout`` for its winner only (``wolfeclick.battle.lean``): the same battle, the same winner, no log."""
    lines = prefix if prefix is not None else prefix_lines(recording, step)
    reseed = reseed_line(seed, luck_label(step, number))
    wrappers = _openings(recording, step, policies, first, forks)
    run = LeanRun(wrappers["p1"], wrappers["p2"], format_id=recording.format, seed=_policy_seed(seed, step, number),
                  max_turns=turn_limit_of(recording), battle_id=recording.id, names=_names(recording, forks),
                  teams=recording.teams)
    if forks is not None:
        await forks.begin(process, recording, step, lines, run, [reseed])
    else:
        run.absorb((await process.call("start", battle=run.key, format=recording.format,
                                       lines=[*lines, reseed]))["out"])
    ending = await play_out(run, process)
    _checked(recording, step, wrappers, ending.reason, ending.error)
    return Outcome(ending.winner, ending.reason, [], ending.inputlog)
