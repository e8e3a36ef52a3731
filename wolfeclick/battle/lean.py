"""Play a battle on to its end for its winner only: the runner's battle without its record.

Analysis rollouts (``wolfeclick.analysis``) need nothing but who won, thousands of times. The full path
(``runner.stream_battle``) spends most of a rollout's Python time on what makes a recording: the spectator log,
per-decision snapshots, shaped rewards, validated turn records and the ``Recording``. ``LeanRun`` is a ``BattleRun``
that keeps only what the policies see — the same trackers fed the same simulator output, the same observations
(state text made only if a policy reads it), the same seeded generators — and ``play_out`` drives it with the
runner's own ``decide_point``, so the same simulator, policies and seeds give the same winner (tested against the
full path). ``freeze``/``thaw`` copy what the policies see at a decision, so copies of one decision start from its
state instead of re-reading its prefix.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

from wolfeclick.battle.runner import (
    DEFAULT_FORMAT,
    DEFAULT_MAX_TURNS,
    BattleNotStarted,
    BattleRun,
    PolicyFailure,
    _Pending,
    close_unfinished,
    decide_point,
    forfeit,
)
from wolfeclick.battle.tracker import split_lines
from wolfeclick.digits import ascii_int
from wolfeclick.game.state import format_state
from wolfeclick.policies.base import Decision, Observation, Policy
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimProcess, SimulatorError
from wolfeclick.sim.protocol import SIDES, start_lines

_UNSET = object()


class _LazyObservation(Observation):
    """An ``Observation`` whose state text is made on first read: most rollout policies never read it, and it is
    a pure function of the side's battle, which nothing changes while the policy decides."""

    _state: Any

    @property
    def state(self) -> str:
        if self._state is _UNSET:
            self._state = format_state(self.battle)
        return str(self._state)

    @state.setter
    def state(self, value: Any) -> None:
        self._state = value


@dataclass(frozen=True)
class Ending:
    """How a lean battle ended, as the full path's ``Result`` would say it."""

    winner: str | None
    reason: str
    error: str | None = None
    inputlog: list[str] = field(default_factory=list)
    """The simulator's input log once the battle ended (every line it was fed): the same log, the same battle."""


class LeanRun(BattleRun):
    """A ``BattleRun`` that records nothing: no log, no events, no snapshots, no rewards, no turn records."""

    def absorb_views(self, views: dict[str, list[str]]) -> None:
        shared: dict[str, list[str]] = {}
        for side in SIDES:
            self.trackers[side].feed_parts(split_lines(views[side], shared))
        for line in views["spectator"]:
            if line.startswith("|turn|"):
                number = ascii_int(line.split("|")[2], 7)
                self.turn = self.turn if number is None else number
            elif line.startswith("|win|"):
                name = line.split("|")[2]
                self.winner = next((s for s in SIDES if self.names[s] == name), None)

    def open_point(self, deciding: list[Side]) -> _Pending:
        record = _Pending(self.index, self.turn, list(deciding), [], {})
        self.index += 1
        return record

    observed = _LazyObservation

    def state_text(self, side: Side) -> Any:
        return _UNSET  # made by _LazyObservation if a policy reads it

    def note_decision(self, record: _Pending, side: Side, observation: Observation, decision: Decision,
                      latency_ms: float, rejected: tuple[str, ...]) -> None:
        record.decisions[side] = {"command": decision.choice()}  # what decide_and_send re-reads on a refusal

    def freeze(self) -> bytes:
        """What the policies see now (both trackers, the open requests, the turn) as bytes ``thaw`` restores."""
        return pickle.dumps((self.trackers, self.pending_requests, self.turn, self.winner, self.ended),
                            protocol=pickle.HIGHEST_PROTOCOL)

    def thaw(self, frozen: bytes) -> None:
        """Continue from a ``freeze`` of another run at the same point (its own copy: nothing is shared)."""
        self.trackers, self.pending_requests, self.turn, self.winner, self.ended = pickle.loads(frozen)


async def play_out(run: LeanRun, process: SimProcess) -> Ending:
    """Play ``run`` (started: its first output absorbed) to its end as ``stream_battle`` would, and close it.

    The same turn limit, forfeit on a failing policy and end reasons as the full path; the winner is set only
    for a win or a forfeit, as there."""
    reason, error = "win", None
    try:
        while not run.ended:
            if run.turn > run.max_turns:
                reason = "turn_limit"
                break
            deciding = run.deciding_sides()
            if not deciding:
                raise SimulatorError("the simulator is waiting for no one; the battle cannot go on")
            await decide_point(run, run.open_point(deciding), deciding, process)
        if run.ended:
            reason = "win" if run.winner else "tie"
    except PolicyFailure as exc:
        reason, error = await forfeit(run, process, exc)
    except SimulatorError as exc:
        reason, error = "aborted", str(exc)
    finally:
        await close_unfinished(run, process)
    decided = reason in ("win", "forfeit") and run.winner is not None
    return Ending(run.winner if decided else None, reason, error, list(run.inputlog))


async def play_winner(p1: Policy, p2: Policy, *, process: SimProcess, format_id: str = DEFAULT_FORMAT, seed: int = 0,
                      max_turns: int = DEFAULT_MAX_TURNS) -> Ending:
    """``play_battle`` for its ending only: the same battle from the same seed and policies, nothing recorded."""
    run = LeanRun(p1, p2, format_id=format_id, seed=seed, max_turns=max_turns, battle_id=None)
    try:
        reply = await process.call("start", battle=run.key, format=format_id,
                                   lines=start_lines(format_id, seed, run.names, None))
    except SimulatorError as exc:
        raise BattleNotStarted(str(exc).replace("simulator refused start: ", "")) from None
    run.absorb(reply["out"])
    return await play_out(run, process)

