"""Play one battle between two policies on the embedded simulator, and record it.

The flow is one way: simulator chunks → each side's poke-env view → observation + legal actions → policy →
decision → turn record. A decision point is reached when the simulator has asked at least one side to act; all
deciding sides decide (concurrently, for language models), and their choices are sent in side order, so the input
log — and so the whole battle — depends only on the seed and the policies.

A turn record is handed out (``stream_battle``) once every reward in it is known, i.e. when each of its deciding
sides has decided again or the battle has ended: a reward is what happened *after* a decision.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import functools
import hashlib
import itertools
import os
import platform
import random
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, AsyncGenerator, Awaitable, Callable

import wolfeclick
from wolfeclick.battle.schema import (
    ActionRecord,
    EndReason,
    PlayerInfo,
    PokemonSnapshot,
    Recording,
    Result,
    TeamInfo,
    TurnRecord,
    Versions,
    is_valid_id,
)
from wolfeclick.battle.tracker import SideTracker, generation, split_lines
from wolfeclick.digits import ascii_int
from wolfeclick.errors import WolfeClickError
from wolfeclick.game.actions import LegalAction, legal_actions
from wolfeclick.game.reward import RewardBudget, outcome_reward, reward_view, shaped_reward, total
from wolfeclick.game.snapshot import SnapshotEntries, side_snapshot
from wolfeclick.game.state import RosterLines, format_state
from wolfeclick.policies.base import Decision, Observation, Policy
from wolfeclick.sides import Side, other
from wolfeclick.sim.process import SimPool, SimProcess, SimulatorError
from wolfeclick.sim.protocol import (
    SIDES,
    derive_int,
    door_names,
    is_timestamp,
    parse_chunk,
    split_update,
    start_lines,
)

DEFAULT_FORMAT = "gen4randombattle"
DEFAULT_MAX_TURNS = 300
_RUN_NUMBERS = itertools.count(1)
_POLICY_THREADS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="wolfeclick-policy")
"""Blocking (model) decisions wait here, one thread per battle in flight, so a batcher can gather them all:
asyncio's default pool has only cores + 4 threads, which would cap a batch at 6 on a 2-core machine."""


def _fresh_policy_threads() -> None:
    """A forked child has none of the parent's pool threads: give it its own pool (a copied one never runs work)."""
    global _POLICY_THREADS
    _POLICY_THREADS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="wolfeclick-policy")


os.register_at_fork(after_in_child=_fresh_policy_threads)
INTERRUPTED = "interrupted: saved while the battle was still being played"
MAX_REJECTIONS = 3
"""After this many refused choices at one decision point the side sends ``default``."""


class BattleNotStarted(WolfeClickError, ValueError):
    """The simulator refused to start the battle (an unknown format, say): nothing was played, nothing recorded."""


class PolicyFailure(RuntimeError):
    """A policy raised while deciding; its side forfeits the battle."""

    def __init__(self, side: Side, error: BaseException) -> None:
        self.side = side
        super().__init__(f"{side} policy failed: {error.__class__.__name__}: {error}".splitlines()[0])


def slug(text: str, limit: int = 40) -> str:
    """A file-name-safe rendering of a policy spec; long ones end in a short hash so they stay distinct."""
    cleaned = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "policy"
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 9] + "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
    return cleaned


def recording_id(format_id: str, seed: int, p1: str, p2: str) -> str:
    """Deterministic id: same format, seed and policies → same id (and same file name)."""
    value = f"{slug(format_id, 24)}-s{seed}-{slug(p1)}-vs-{slug(p2)}"
    assert is_valid_id(value), value
    return value


def player_names(p1: str, p2: str) -> dict[Side, str]:
    """Display names for the simulator: the spec, cleaned of protocol separators, distinct per side."""
    return door_names({side: re.sub(r"[^A-Za-z0-9 :._@/+-]", "", spec)[:24] for side, spec in zip(SIDES, (p1, p2))})


class _Parts:
    """The small pieces of one battle's turn records, validated once and shared by every turn that repeats them.

    A benched Pokémon's snapshot and the moves on offer are the same turn after turn; a turn record built around
    model instances only checks them (pydantic does not validate an instance again), so each turn validates a few
    models instead of dozens. The shared models are frozen, so no reader can change one turn through another.
    """

    def __init__(self) -> None:
        self._mons: dict[tuple[Any, ...], PokemonSnapshot] = {}
        self._actions: dict[tuple[str, str], ActionRecord] = {}

    def snapshot(self, snapshot: dict[str, Any]) -> dict[str, Any]:
        """``side_snapshot``'s dict with each team entry a shared ``PokemonSnapshot``."""
        snapshot["team"] = [self._mon(entry) for entry in snapshot["team"]]
        return snapshot

    def _mon(self, entry: dict[str, Any]) -> PokemonSnapshot:
        key = tuple(entry.values())  # side_snapshot writes every field, always in one order
        mon = self._mons.get(key)
        if mon is None:
            mon = self._mons[key] = PokemonSnapshot.model_validate(entry)
        return mon

    def action(self, action: LegalAction) -> ActionRecord:
        """An action as recorded."""
        key = (action.kind, action.name)
        record = self._actions.get(key)
        if record is None:
            record = self._actions[key] = ActionRecord.model_validate({"action": action.kind, "choice": action.name})
        return record


@dataclass
class _Pending:
    """A turn record being built; final once every deciding side has a reward."""

    index: int
    turn: int
    deciding: list[Side]
    events: list[str]
    snapshot: dict[Side, Any]
    decisions: dict[Side, dict[str, Any]] = field(default_factory=dict)
    awaiting_reward: set[Side] = field(default_factory=set)

    def to_record(self) -> TurnRecord:
        """One validation of plain data around the shared parts (``_Parts``)."""
        return TurnRecord.model_validate({
            "index": self.index, "turn": self.turn, "deciding": self.deciding, "events": self.events,
            "snapshot": self.snapshot, "decisions": self.decisions,
        })


class BattleRun:
    """The state of one battle in progress. Use ``stream_battle`` / ``play_battle`` rather than this directly."""

    def __init__(self, p1: Policy, p2: Policy, *, format_id: str, seed: int, max_turns: int,
                 battle_id: str | None, names: dict[Side, str] | None = None,
                 teams: dict[Side, TeamInfo] | None = None) -> None:
        generation(format_id)  # fail early, in one line, on a format without a generation
        self.policies = {"p1": p1, "p2": p2}
        self.format = format_id
        self.seed = seed
        self.teams = dict(teams) if teams else None
        """Given teams (OU and the like), per side; None for random battles, whose teams come from the seed."""
        self.max_turns = max_turns
        self.id = battle_id or recording_id(format_id, seed, p1.spec, p2.spec)
        self.key = f"{self.id}#{next(_RUN_NUMBERS)}"
        """The simulator's name for this run: unique even when the same battle is played twice at once."""
        self.names = door_names(names) if names else player_names(p1.spec, p2.spec)
        """As the ``>player`` lines carry them: a parent's or caller's names pass the door's rules (``door_names``)."""
        self.trackers = {side: SideTracker(self.key, side, self.names[side], format_id) for side in SIDES}
        self.rngs = {side: random.Random(derive_int(seed, f"policy:{side}")) for side in SIDES}
        self.log: list[str] = []
        self.inputlog: list[str] = []
        self.sent: list[str] = []
        """Every line we fed the simulator (its own input log says the same in normalised form)."""
        self.turn = 0
        self.winner: Side | None = None
        self.ended = False
        self.pending_requests: dict[Side, dict[str, Any]] = {}
        self.errors: dict[Side, list[str]] = {side: [] for side in SIDES}
        self.events_since_point: list[str] = []
        self.events_since_decision: dict[Side, list[str]] = {side: [] for side in SIDES}
        self.last_view: dict[Side, Any] = {}
        self.current_view: dict[Side, Any] = {}
        self.budgets = {side: RewardBudget() for side in SIDES}
        self.open_records: list[_Pending] = []
        self.last_record: dict[Side, _Pending] = {}
        self.finished: list[TurnRecord] = []
        self.index = 0
        self.parts = _Parts()
        self.roster_lines: dict[Side, RosterLines] = {side: {} for side in SIDES}
        """Each side's state-text roster lines by what they show (``format_state``'s cache)."""
        self.snapshot_entries: dict[Side, SnapshotEntries] = {side: {} for side in SIDES}
        """Each side's snapshot entries by what they are read from (``side_snapshot``'s cache)."""

    # --- the recording ---------------------------------------------------------------------------------------
    def recording(self, reason: EndReason, error: str | None, winner: Side | None, sim_info: dict[str, Any]) -> Recording:
        """The recording of everything finished so far, ended with ``reason``."""
        return Recording(
            id=self.id,
            created=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            format=self.format,
            seed=self.seed,
            players={side: PlayerInfo(name=self.names[side], policy=self.policies[side].spec,
                                      metadata=self.policies[side].metadata()) for side in SIDES},
            result=Result(winner=winner, reason=reason, turns=self.turn, error=error),
            versions=versions(str(sim_info.get("showdown", "unknown"))),
            log=list(self.log),
            inputlog=list(self.inputlog or self.sent),
            turns=list(self.finished),
            teams=self.teams,
        )

    # --- reading the simulator -------------------------------------------------------------------------------
    def absorb(self, chunks: list[str]) -> None:
        for raw in chunks:
            chunk = parse_chunk(raw)
            if chunk.kind == "update":
                self.absorb_views(split_update(chunk.lines))
            elif chunk.kind == "request" and chunk.side and chunk.request is not None:
                self.trackers[chunk.side].feed_request(chunk.request)
                self.pending_requests[chunk.side] = chunk.request
            elif chunk.kind == "error" and chunk.side:
                self.errors[chunk.side].append(chunk.text)
            elif chunk.kind == "end":
                self.ended = True

    def absorb_views(self, views: dict[str, list[str]]) -> None:
        """Battle lines as each side and a spectator see them (``p1``, ``p2``, ``spectator``): trackers, log, turn,
        winner. The embedded simulator's updates and a server's battle room (``wolfeclick.ladder.play``) both
        come in here."""
        shared: dict[str, list[str]] = {}  # a public line is split once for both sides
        for side in SIDES:
            self.trackers[side].feed_parts(split_lines(views[side], shared))
        public = [line for line in views["spectator"] if line and not is_timestamp(line)]
        self.log.extend(public)
        self.events_since_point.extend(public)
        for side in SIDES:
            self.events_since_decision[side].extend(public)
        for line in public:
            if line.startswith("|turn|"):
                number = ascii_int(line.split("|")[2], 7)  # a server's odd turn text changes nothing
                self.turn = self.turn if number is None else number
            elif line.startswith("|win|"):
                parts = line.split("|")
                self.winner = next((s for s in SIDES if self.names[s] == parts[2]), None)

    def deciding_sides(self) -> list[Side]:
        return [s for s in SIDES if s in self.pending_requests and not self.pending_requests[s].get("wait")
                and legal_or_default(self.pending_requests[s])]

    # --- rewards ------------------------------------------------------------------------------------------------
    def settle_reward(self, side: Side, outcome: float = 0.0) -> None:
        """Close the reward window of ``side``'s last decision: what happened from then until now."""
        current = reward_view(self.trackers[side].battle)
        self.current_view[side] = current  # the next decision's window opens on this same state
        record = self.last_record.pop(side, None)
        if record is None:
            return
        decision = record.decisions[side]
        components, self.budgets[side] = shaped_reward(
            self.last_view[side], current, self.events_since_decision[side], side,
            bool(decision["illegal"]), self.budgets[side],
        )
        decision["reward"] = {"total": total(components), "components": components, "outcome": outcome}
        record.awaiting_reward.discard(side)

    def flush(self) -> list[TurnRecord]:
        """Turn records whose rewards are all known, in order."""
        done: list[TurnRecord] = []
        while self.open_records and not self.open_records[0].awaiting_reward:
            done.append(self.open_records.pop(0).to_record())
        self.finished.extend(done)
        return done

    # --- one decision point ----------------------------------------------------------------------------------
    def open_point(self, deciding: list[Side]) -> _Pending:
        for side in deciding:
            self.settle_reward(side)
        snapshot = {
            side: self.parts.snapshot(side_snapshot(self.trackers[side].battle, self.trackers[other(side)].battle,
                                                    self.snapshot_entries[side]))
            for side in SIDES
        }
        record = _Pending(self.index, self.turn, list(deciding), self.events_since_point, snapshot,
                          awaiting_reward=set(deciding))
        self.index += 1
        self.events_since_point = []
        self.open_records.append(record)
        return record

    observed: type[Observation] = Observation
    """What ``observation`` builds (``wolfeclick.battle.lean`` builds one whose state text is made when read)."""

    def state_text(self, side: Side) -> Any:
        return format_state(self.trackers[side].battle, self.roster_lines[side])

    def observation(self, side: Side, rejected: tuple[str, ...]) -> Observation:
        tracker = self.trackers[side]
        request = self.pending_requests[side]
        legal = legal_actions(request)
        if rejected:
            legal = [a for a in legal if a.command() not in rejected]
        return self.observed(
            side=side, turn=self.turn, format=self.format, battle=tracker.battle, request=request,
            legal_actions=legal, state=self.state_text(side), rng=self.rngs[side], rejected=rejected,
        )

    async def decide(self, side: Side, rejected: tuple[str, ...]) -> tuple[Observation, Decision, float]:
        observation = self.observation(side, rejected)
        policy = self.policies[side]
        started = time.perf_counter()
        try:
            if policy.blocking:
                decision = await asyncio.get_running_loop().run_in_executor(_POLICY_THREADS, policy.decide,
                                                                            observation)
            else:
                decision = policy.decide(observation)
        except Exception as exc:
            raise PolicyFailure(side, exc) from exc
        return observation, decision, (time.perf_counter() - started) * 1000.0

    def note_decision(self, record: _Pending, side: Side, observation: Observation, decision: Decision,
                      latency_ms: float, rejected: tuple[str, ...]) -> None:
        previous = record.decisions.get(side)
        action = decision.action
        record.decisions[side] = {
            "state": previous["state"] if previous else observation.state,
            "legal_actions": previous["legal_actions"] if previous else [self.parts.action(a)
                                                                         for a in observation.legal_actions],
            "action": self.parts.action(action) if action is not None else None,
            "command": decision.choice(),
            "raw_output": decision.raw_output,
            "illegal": decision.illegal or bool(previous and previous["illegal"]),
            "illegal_reason": decision.illegal_reason or (previous["illegal_reason"] if previous else None),
            "rejected": list(rejected),
            "latency_ms": round(latency_ms + (previous["latency_ms"] if previous else 0.0), 3),
            "reward": {"total": 0.0, "components": {}},
            "policy_info": decision.info,
        }
        if previous is None:
            self.last_record[side] = record
            self.last_view[side] = self.current_view[side]
            self.events_since_decision[side] = []


def legal_or_default(request: dict[str, Any]) -> bool:
    """A request that asks for a choice (even one with no listed actions, which then gets ``default``)."""
    return bool(request.get("active") or request.get("forceSwitch") or request.get("teamPreview"))


def versions(showdown: str) -> Versions:
    return Versions(wolfeclick=wolfeclick.__version__, pokemon_showdown=showdown, poke_env=_installed("poke-env"),
                    python=platform.python_version())


@functools.cache
def _installed(package: str) -> str:
    """An installed package's version; looked up once (``importlib.metadata`` scans every installed package)."""
    return version(package)


async def stream_battle(
    p1: Policy,
    p2: Policy,
    *,
    format_id: str = DEFAULT_FORMAT,
    seed: int = 0,
    max_turns: int = DEFAULT_MAX_TURNS,
    battle_id: str | None = None,
    pool: SimPool | None = None,
    process: SimProcess | None = None,
    stop: asyncio.Event | None = None,
    checkpoint: Callable[[Recording], Awaitable[None]] | None = None,
    checkpoint_every: int = 10,
    names: dict[Side, str] | None = None,
    teams: dict[Side, TeamInfo] | None = None,
    opening: list[str] | None = None,
) -> AsyncGenerator[TurnRecord | Recording, None]:
    """Play a battle, yielding each finished ``TurnRecord`` and finally the ``Recording``.

    Whatever goes wrong (a dead simulator, a policy that raises, ``stop`` being set), the recording of everything
    played so far is still yielded, with ``result.reason`` saying how it ended and ``result.error`` why. With
    ``checkpoint``, a recording of the battle so far (marked ``aborted``: what a crash would leave) is handed to it
    every ``checkpoint_every`` turn records, so even a process that dies mid-battle leaves the turns it played.
    ``names`` overrides the players' names as the simulator shows them (a branch keeps its parent's). ``teams`` are
    the sides' teams in a format that plays given teams (``wolfeclick.battle.teams``); the simulator validates them.
    ``opening`` replaces the seeded ``>start``/``>player`` lines with a battle's own (a Showdown server's, re-simulated
    on import: ``wolfeclick.interop.serverlog``); they pass the simulator's door like any line.
    """
    run = BattleRun(p1, p2, format_id=format_id, seed=seed, max_turns=max_turns, battle_id=battle_id, names=names,
                    teams=teams)
    own_pool = None
    if process is None:
        if pool is None:
            own_pool = pool = SimPool(1)
            await pool.start()
        process = await pool.live()  # a pool whose simulator died starts a fresh one
    reason: EndReason = "win"
    error: str | None = None
    checkpointed = 0
    try:
        packed = {side: team.packed for side, team in run.teams.items()} if run.teams else None
        run.sent = list(opening) if opening else start_lines(format_id, seed, run.names, packed)
        try:
            reply = await process.call("start", battle=run.key, format=format_id, lines=run.sent)
        except SimulatorError as exc:
            run.ended = True  # nothing to close
            raise BattleNotStarted(str(exc).replace("simulator refused start: ", "")) from None
        run.absorb(reply["out"])
        while not run.ended:
            if stop is not None and stop.is_set():
                reason, error = "aborted", "stopped by the user"
                break
            if run.turn > max_turns:
                reason = "turn_limit"
                break
            deciding = run.deciding_sides()
            if not deciding:
                raise SimulatorError("the simulator is waiting for no one; the battle cannot go on")
            record = run.open_point(deciding)
            for done in run.flush():
                yield done
            if checkpoint is not None and len(run.finished) >= checkpointed + checkpoint_every:
                checkpointed = len(run.finished)
                await checkpoint(run.recording("aborted", INTERRUPTED, None, process.info))
            await decide_point(run, record, deciding, process)
        if run.ended:
            reason = "win" if run.winner else "tie"
    except PolicyFailure as exc:  # the failing side forfeits; everything played so far is kept
        reason, error = await forfeit(run, process, exc)
    except SimulatorError as exc:
        reason, error = "aborted", str(exc)
    finally:
        await close_unfinished(run, process)
        if own_pool is not None:
            await own_pool.close()
    decided = reason in ("win", "forfeit") and run.winner is not None
    for side in SIDES:
        run.settle_reward(side, outcome_reward(run.winner, side) if decided else 0.0)
    for done in run.flush():
        yield done
    yield run.recording(reason, error, run.winner if decided else None, process.info)


async def forfeit(run: BattleRun, process: SimProcess, failure: PolicyFailure) -> tuple[EndReason, str]:
    """The failing policy's side loses (``>forcelose``): the end reason and error the result carries."""
    try:
        reply = await process.call("write", battle=run.key, lines=[f">forcelose {failure.side}"])
        run.absorb(reply["out"])
        run.inputlog = reply.get("inputlog", [])
    except SimulatorError as sim_exc:
        return "aborted", f"{failure}; then {sim_exc}"
    return "forfeit", str(failure)


async def close_unfinished(run: BattleRun, process: SimProcess) -> None:
    """Close a battle that did not end in the simulator, keeping its input log."""
    if not run.ended:
        try:
            reply = await process.call("close", battle=run.key)
            run.inputlog = reply.get("inputlog", [])
        except SimulatorError:
            run.inputlog = run.sent  # the simulator is gone: what we fed it still re-simulates the battle


async def decide_point(run: BattleRun, record: _Pending, deciding: list[Side], process: SimProcess) -> None:
    """Ask every deciding side, send their choices in side order, and re-ask sides whose choice was refused."""

    async def write(lines: list[str]) -> None:
        run.sent.extend(lines)
        reply = await process.call("write", battle=run.key, lines=lines)
        run.absorb(reply["out"])
        if reply.get("ended"):
            run.inputlog = reply.get("inputlog", [])

    await decide_and_send(run, record, deciding, write)


async def decide_and_send(run: BattleRun, record: _Pending, deciding: list[Side],
                          send: Callable[[list[str]], Awaitable[None]]) -> None:
    """``decide_point`` over any channel: ``send(lines)`` delivers the choices (``>p1 move 1``…) and returns once
    what they caused has been absorbed into ``run`` (a refusal lands in ``run.errors``, a new request in
    ``run.pending_requests``). The embedded simulator answers at once; a server's battle room is waited on."""
    rejected: dict[str, tuple[str, ...]] = {side: () for side in deciding}
    asking = list(deciding)
    while asking:
        if any(run.policies[side].blocking for side in asking):
            results = await asyncio.gather(*(run.decide(side, rejected[side]) for side in asking))
        else:  # quick policies: no tasks to schedule, same order
            results = [await run.decide(side, rejected[side]) for side in asking]
        lines = []
        for side, (observation, decision, latency) in zip(asking, results):
            if len(rejected[side]) >= MAX_REJECTIONS:
                decision = Decision(action=None, command="default", info={"note": "choices refused; default sent"})
            run.note_decision(record, side, observation, decision, latency, rejected[side])
            lines.append(f">{side} {decision.choice()}")
            run.pending_requests.pop(side, None)
        for side in SIDES:
            run.errors[side].clear()
        await send(lines)
        refused = [side for side in asking if run.errors[side]]
        for side in refused:
            sent = record.decisions[side]["command"]
            rejected[side] = (*rejected[side], sent)
            if side not in run.pending_requests:  # an [Invalid choice]: the old request still stands
                run.pending_requests[side] = run.trackers[side].request or {}
        asking = refused


async def play_battle(p1: Policy, p2: Policy, **options: Any) -> Recording:
    """Play a battle to its end and return its recording."""
    recording = None
    async for item in stream_battle(p1, p2, **options):
        if isinstance(item, Recording):
            recording = item
    assert recording is not None
    return recording
