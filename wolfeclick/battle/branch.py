"""Branch a recorded battle, or ask a policy what it would have done, by replaying the recording's own choices.

The simulator replays a battle exactly from its seed and its choices, and every policy draws only from its side's
seeded generator. So feeding a recording's choices back through the runner puts the simulator — and each side's
view — in exactly the state it was in at any decision point. From there other policies can play on (``branch``),
or a policy can be shown every observation a side saw and asked for its choice, with no battle of its own
(``wolfeclick.battle.rescore``). A recording whose choices do not reproduce its states (imported, tampered) is
refused in one line.

A branch is a recording like any other, so it can be branched in turn, to any depth: it notes where each side's
policy took over (``PlayerInfo.since``) and keeps its parent's way of starting (seed, or opening lines), and the
replay is held only to what the replayed choices decide (``open_rewards``: a reward still open at the branch point
is the branch's own).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass
from typing import Any, AsyncGenerator, Awaitable, Callable, Mapping

from wolfeclick.battle.runner import DEFAULT_MAX_TURNS, stream_battle
from wolfeclick.battle.schema import Recording, SideDecision, SourceInfo, TurnRecord
from wolfeclick.errors import WolfeClickError
from wolfeclick.policies.base import Decision, Observation, Policy
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimPool, SimProcess
from wolfeclick.sim.protocol import SIDES


class BranchError(WolfeClickError):
    """A recording that cannot be replayed (no input log, choices that no longer fit); one line."""


@dataclass(frozen=True)
class RecordedChoice:
    """One command a side sent: the decision it belongs to, and whether the simulator refused it."""

    index: int
    command: str
    first_attempt: bool
    decision: SideDecision


def recorded_choices(recording: Recording, side: Side, until: int) -> list[RecordedChoice]:
    """Every command ``side`` sent before decision ``until``, in order: refused ones first, then the one played."""
    choices: list[RecordedChoice] = []
    for turn in recording.turns[:until]:
        decision = turn.decisions.get(side)
        if decision is None:
            continue
        attempts = [*decision.rejected, decision.command]
        for number, command in enumerate(attempts):
            choices.append(RecordedChoice(turn.index, command, number == 0, decision))
    return choices


def _matching_action(observation: Observation, command: str, decision: SideDecision, final: bool) -> Any:
    """The legal action behind a recorded command (``move 2 terastallize`` is ``move 2`` plus an extra)."""
    if final and decision.action is not None:
        for action in observation.legal_actions:
            if action.kind == decision.action.action and action.name == decision.action.choice:
                return action
    for action in observation.legal_actions:
        if command == action.command() or command.startswith(action.command() + " "):
            return action
    return None


class ReplayingPolicy:
    """Plays a recording's choices for one side, then hands over to ``then`` (if any).

    ``advance`` (a decision index) also asks ``then`` at each replayed decision from there on (its answer is
    discarded) — the decisions the recorded policy was asked at — so a policy that draws from the battle's generator
    is in exactly the state it was in when the recording reached the branch point: branching with the same policies
    reproduces the parent, whether its policy played from the start or took over in a branch itself. ``probe``, if
    given, is called with every observation of a decision's first attempt and the replayed choice — how
    ``rescore`` sees what the side saw.
    """

    def __init__(self, script: list[RecordedChoice], then: Policy | None, *, spec: str, metadata: dict[str, Any],
                 advance: int | None = None, probe: Any = None, blocking: bool = False) -> None:
        self.script = script
        self.then = then
        self.spec = then.spec if then is not None else spec
        self.blocking = blocking or bool(then is not None and then.blocking)
        self._metadata = metadata
        self.advance = advance if then is not None else None
        self.probe = probe
        self.position = 0
        self.failure: str | None = None

    def metadata(self) -> dict[str, Any]:
        return self.then.metadata() if self.then is not None else dict(self._metadata)

    def decide(self, observation: Observation) -> Decision:
        if self.position >= len(self.script):
            if self.then is None:
                self.failure = "the battle went on past the end of the recording; its choices do not replay it"
                raise BranchError(self.failure)
            return self.then.decide(observation)
        choice = self.script[self.position]
        self.position += 1
        recorded = choice.decision
        if choice.first_attempt and observation.state != recorded.state:
            self.failure = (f"decision {choice.index + 1} ({observation.side}) no longer sees the recorded state: the "
                            "recording's choices do not replay it (imported or edited?)")
            raise BranchError(self.failure)
        if self.advance is not None and choice.index >= self.advance:
            assert self.then is not None
            self.then.decide(observation)
        if self.probe is not None and choice.first_attempt:
            self.probe(choice, observation)
        final = self.position >= len(self.script) or self.script[self.position].first_attempt
        return Decision(action=_matching_action(observation, choice.command, recorded, final), command=choice.command,
                        raw_output=recorded.raw_output, illegal=recorded.illegal,
                        illegal_reason=recorded.illegal_reason, info=dict(recorded.policy_info))


def opening_of(recording: Recording) -> list[str] | None:
    """The ``>start``/``>player`` lines a battle with no seed of ours began with (a Showdown server's battle,
    re-simulated on import: ``wolfeclick.interop.serverlog``), so a replay starts it the same way; None when the
    seed says how it began."""
    if recording.seed is not None:
        return None
    opening = recording.inputlog[:3]
    if len(opening) == 3 and opening[0].startswith(">start ") and opening[1].startswith(">player p1 ") \
            and opening[2].startswith(">player p2 "):
        return opening
    return None


def replayable(recording: Recording) -> None:
    """Raise BranchError unless ``recording`` holds what a replay needs (decisions and an input log)."""
    if not recording.inputlog or not recording.turns or (recording.seed is None and opening_of(recording) is None):
        where = f" ({recording.source.kind}: {recording.source.detail})" if recording.source.kind == "imported" else ""
        raise BranchError(f"{recording.id} has no seed, input log and decisions to replay{where}")


def open_rewards(turns: list[TurnRecord], step: int) -> frozenset[tuple[int, Side]]:
    """(decision, side) before ``step`` whose reward is still open at ``step``: each side's last decision, when that
    side does not decide at ``step`` (the other one switching in after a faint, say).

    A reward covers what happens until its side decides again, so these take in the choices made at ``step`` and
    after — by a branch's own policies. They are the branch's, not the replay's: everything else before ``step``
    follows from the replayed choices alone.
    """
    if step >= len(turns):
        return frozenset()
    last: dict[Side, int] = {}
    for turn in turns[:step]:
        last.update((side, turn.index) for side in turn.decisions)
    return frozenset((index, side) for side, index in last.items() if side not in turns[step].deciding)


def _comparable(turn: TurnRecord, unsettled: frozenset[tuple[int, Side]]) -> dict[str, Any]:
    data = turn.model_dump(mode="json")
    for side, decision in data["decisions"].items():
        decision.pop("latency_ms", None)
        if (turn.index, side) in unsettled:
            decision.pop("reward", None)
    return data


def first_difference(a: list[TurnRecord], b: list[TurnRecord], count: int,
                     unsettled: frozenset[tuple[int, Side]] = frozenset()) -> int | None:
    """The first of the first ``count`` decision indices where two battles' turn records differ, or None; the
    rewards named in ``unsettled`` (``open_rewards``) are left out."""
    for index in range(count):
        if index >= len(a) or index >= len(b) or \
                _comparable(a[index], unsettled) != _comparable(b[index], unsettled):
            return index
    return None


def branch_id(parent: Recording, step: int, specs: Mapping[Side, str]) -> str:
    """``<parent>-b<step>-<hash>``: the same branch of the same parent gets the same id."""
    digest = hashlib.sha256(f"{specs['p1']}\n{specs['p2']}".encode()).hexdigest()[:8]
    return f"{parent.id[:100]}-b{step}-{digest}"


def turn_limit_of(recording: Recording) -> int:
    """The turn limit the recording was played under, where its end says (else the runner's default)."""
    return recording.result.turns - 1 if recording.result.reason == "turn_limit" else DEFAULT_MAX_TURNS


def _takeover(parent: Recording, step: int, policies: dict[str, Policy | None],
              ) -> tuple[dict[str, ReplayingPolicy], dict[Side, int | None]]:
    """Each side's recorded choices up to ``step``, then its new policy (None: the parent's own, made afresh); and
    the decision each side's policy is first asked at (``PlayerInfo.since``).

    The parent's own policy is asked again where it was asked in the parent, from its ``since`` on (and plays from
    ``step`` if that comes first); any other policy (or a person, never asked to re-decide replayed decisions) takes
    over at ``step``, its generator fresh there.
    """
    replayable(parent)
    if not 0 <= step < len(parent.turns):
        raise BranchError(f"step must be between 0 and {len(parent.turns) - 1} (the recording has "
                          f"{len(parent.turns)} decision points)")
    from wolfeclick.battle.policy_specs import make_policy

    wrappers: dict[str, ReplayingPolicy] = {}
    since: dict[Side, int | None] = {}
    for side in SIDES:
        recorded = parent.players[side]
        then = policies.get(side) or make_policy(recorded.policy)
        keeps = then.spec == recorded.policy and not getattr(then, "interactive", False)
        since[side] = recorded.since if keeps and (recorded.since or 0) <= step else step
        wrappers[side] = ReplayingPolicy(recorded_choices(parent, side, step), then, spec=recorded.policy,
                                         metadata=recorded.metadata, advance=(recorded.since or 0) if keeps else None)
    return wrappers, since


def _as_branch(run: Recording, parent: Recording, source: SourceInfo, since: dict[Side, int | None]) -> Recording:
    """A run of a take-over as its recording says it, so that it replays alone: a branch of ``parent``, begun as the
    parent was (a parent with no seed of ours began from its own opening lines, and so did this run; seed 0 only
    seeded the policies' generators), each side's policy with the decision it took over at."""
    players = {side: info.model_copy(update={"since": since[side]}) for side, info in run.players.items()}
    return run.model_copy(update={"source": source, "seed": parent.seed, "players": players})


async def stream_branch(parent: Recording, step: int, policies: dict[str, Policy | None], *,
                        pool: SimPool | None = None, process: SimProcess | None = None, max_turns: int | None = None,
                        stop: asyncio.Event | None = None,
                        checkpoint: Callable[[Recording], Awaitable[None]] | None = None,
                        ) -> AsyncGenerator[TurnRecord | Recording, None]:
    """``branch`` as it plays: each turn record as it finishes (the replayed ones first), then the recording.

    ``checkpoint`` (the runner's crash-safe partial saves) is only handed partials past the branch point, marked as
    branches: a replay that turns out not to reproduce its parent leaves nothing behind. Raises BranchError at the
    end when the replay did not reproduce the parent's first ``step`` decisions.
    """
    wrappers, since = _takeover(parent, step, policies)
    specs = {side: wrappers[side].spec for side in SIDES}
    source = SourceInfo(kind="branch", parent=parent.id, branch_step=step)
    unsettled = open_rewards(parent.turns, step)

    def diverged(index: int) -> BranchError:
        return BranchError(f"{parent.id}: replaying its choices diverged at decision {index + 1}; it cannot be branched")

    async def marked(partial: Recording) -> None:
        if checkpoint is None or len(partial.turns) <= step:
            return
        differs = first_difference(parent.turns, partial.turns, step, unsettled)
        if differs is not None:  # never leave a partial of a replay that does not reproduce its parent
            raise diverged(differs)
        await checkpoint(_as_branch(partial, parent, source, since))

    battle = stream_battle(
        wrappers["p1"], wrappers["p2"], format_id=parent.format, seed=parent.seed or 0, opening=opening_of(parent),
        max_turns=max_turns if max_turns is not None else turn_limit_of(parent),
        battle_id=branch_id(parent, step, specs), pool=pool, process=process, stop=stop,
        checkpoint=marked if checkpoint is not None else None,
        names={side: parent.players[side].name for side in SIDES}, teams=parent.teams,
    )
    async with contextlib.aclosing(battle):
        async for item in battle:
            if not isinstance(item, Recording):
                if item.index < step and \
                        _comparable(parent.turns[item.index], unsettled) != _comparable(item, unsettled):
                    raise diverged(item.index)  # at once: before any partial past the branch point is saved
                yield item
                continue
            failure = next((w.failure for w in wrappers.values() if w.failure), None)
            if failure:
                raise BranchError(f"{parent.id}: {failure}")
            if stop is None or not stop.is_set() or len(item.turns) >= step:
                differs = first_difference(parent.turns, item.turns, step, unsettled)
                if differs is not None:
                    raise diverged(differs)
            yield _as_branch(item, parent, source, since)


async def branch(parent: Recording, step: int, policies: dict[str, Policy | None], *, pool: SimPool | None = None,
                 process: SimProcess | None = None, max_turns: int | None = None) -> Recording:
    """Replay ``parent`` up to decision ``step``, then let ``policies`` play on (None: the parent's own policy).

    The new recording is marked as a branch of its parent and shares its turns before ``step``.
    """
    recording = None
    async for item in stream_branch(parent, step, policies, pool=pool, process=process, max_turns=max_turns):
        if isinstance(item, Recording):
            recording = item
    assert recording is not None
    return recording
