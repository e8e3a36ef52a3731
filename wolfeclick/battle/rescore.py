"""Ask a policy what it would have done at every decision a side made in recorded battles.

Each recording is replayed from its own choices (``wolfeclick.battle.branch``), so the policy sees exactly the
observation the side saw — the same state text, legal actions and prompt — and its answer (with every candidate's
score, for a checkpoint in score mode) is noted beside the choice that was played. No battle is played: the
replayed choices drive the simulator. Recordings are replayed concurrently, so a checkpoint's batcher gathers
decisions from many of them into one forward pass.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wolfeclick.battle.branch import (
    BranchError,
    RecordedChoice,
    ReplayingPolicy,
    first_difference,
    opening_of,
    recorded_choices,
    replayable,
    turn_limit_of,
)
from wolfeclick.battle.runner import play_battle, slug
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.battle.store import read_limited, write_atomic
from wolfeclick.policies.base import Observation, Policy
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.protocol import SIDES

RESCORE_SCHEMA: Literal["wolfeclick.rescore/1"] = "wolfeclick.rescore/1"
RESCORE_DIR = "rescores"
"""Rescores live in ``<recordings>/rescores/<recording id>/``, beside (not among) the recordings."""


class CandidateScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str
    choice: str
    logprob: float
    probability: float


class RescoredDecision(BaseModel):
    """One decision point: what was played, what the policy would have played, and how it ranked the played one."""

    model_config = ConfigDict(extra="forbid")

    index: int
    turn: int
    played: ActionRecord | None
    choice: ActionRecord | None
    agree: bool
    probability: float | None = Field(None, description="The policy's probability of its own choice (softmax).")
    played_rank: int | None = Field(None, description="1 = the played action was the policy's first choice.")
    candidates: list[CandidateScore] = Field(default_factory=list)


class Rescore(BaseModel):
    """A policy's answers at every decision of one side of one recording."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["wolfeclick.rescore/1"] = Field(RESCORE_SCHEMA, alias="schema")
    recording: str
    side: Side
    policy: str
    recorded_policy: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    decisions: list[RescoredDecision]

    @property
    def agreement(self) -> float | None:
        return sum(d.agree for d in self.decisions) / len(self.decisions) if self.decisions else None

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=1) + "\n"


def _record(action: Any) -> ActionRecord | None:
    return ActionRecord(action=action.kind, choice=action.name) if action is not None else None


def candidate_scores(info: dict[str, Any]) -> list[CandidateScore]:
    """A checkpoint's scored candidates (``policy_info['candidates']``) with softmax probabilities, best first."""
    raw = info.get("candidates") or []
    if not raw:
        return []
    key = "mean_logprob" if info.get("norm") == "mean" else "logprob"
    top = max(c[key] for c in raw)
    weights = [math.exp(c[key] - top) for c in raw]
    whole = sum(weights)
    scored = [CandidateScore(action=c["action"], choice=c["choice"], logprob=round(c[key], 6),
                             probability=round(w / whole, 6)) for c, w in zip(raw, weights)]
    return sorted(scored, key=lambda c: -c.logprob)


def rescored_decision(choice: RecordedChoice, turn: int, answer_action: Any, info: dict[str, Any]) -> RescoredDecision:
    """Pure: the played choice against the policy's answer and scores."""
    played = choice.decision.action
    chosen = _record(answer_action)
    scores = candidate_scores(info)
    rank = next((n for n, c in enumerate(scores, 1) if played is not None and c.action == played.action
                 and c.choice == played.choice), None)
    probability = next((c.probability for c in scores if chosen is not None and c.action == chosen.action
                        and c.choice == chosen.choice), None)
    return RescoredDecision(index=choice.index, turn=turn, played=played, choice=chosen,
                            agree=played is not None and chosen is not None and played == chosen,
                            probability=probability, played_rank=rank, candidates=scores)


async def rescore_one(recording: Recording, policy: Policy, side: Side, *, pool: SimPool) -> Rescore:
    """Replay ``recording`` and ask ``policy`` at each of ``side``'s decisions; the replay must reproduce it."""
    replayable(recording)
    answers: list[RescoredDecision] = []
    lock = threading.Lock()

    def probe(choice: RecordedChoice, observation: Observation) -> None:
        answer = policy.decide(observation)
        with lock:
            answers.append(rescored_decision(choice, observation.turn, answer.action, answer.info))

    wrappers = {
        s: ReplayingPolicy(recorded_choices(recording, s, len(recording.turns)), None,
                           spec=recording.players[s].policy, metadata=recording.players[s].metadata,
                           probe=probe if s == side else None, blocking=s == side and policy.blocking)
        for s in SIDES
    }
    replay = await play_battle(wrappers["p1"], wrappers["p2"], format_id=recording.format, seed=recording.seed or 0,
                               opening=opening_of(recording),
                               max_turns=turn_limit_of(recording), battle_id=recording.id, process=pool.pick(),
                               names={s: recording.players[s].name for s in SIDES}, teams=recording.teams)
    failure = next((w.failure for w in wrappers.values() if w.failure), None)
    if failure or first_difference(recording.turns, replay.turns, len(recording.turns)) is not None:
        raise BranchError(f"{recording.id}: {failure or 'its choices do not replay the recorded battle'}")
    return Rescore(recording=recording.id, side=side, policy=policy.spec,
                   recorded_policy=recording.players[side].policy, metadata=policy.metadata(),
                   decisions=sorted(answers, key=lambda d: d.index))


async def rescore_many(recordings: list[Recording], policy: Policy, side: Side, *, concurrency: int = 8,
                       processes: int | None = None) -> list[Rescore | BranchError]:
    """Rescore several recordings, ``concurrency`` replays at once; a recording that fails gives its error."""
    slots = asyncio.Semaphore(max(1, concurrency))
    async with SimPool(processes) as pool:
        async def one(recording: Recording) -> Rescore | BranchError:
            async with slots:
                try:
                    return await rescore_one(recording, policy, side, pool=pool)
                except BranchError as exc:
                    return exc

        return list(await asyncio.gather(*(one(r) for r in recordings)))


def rescore_path(recordings_dir: Path, recording_id: str, policy_spec: str, side: str) -> Path:
    return Path(recordings_dir) / RESCORE_DIR / recording_id / f"{slug(policy_spec)}-{side}.json"


def save_rescore(rescore: Rescore, recordings_dir: Path) -> Path:
    return write_atomic(rescore_path(recordings_dir, rescore.recording, rescore.policy, rescore.side),
                        rescore.to_json())


def agreement_by_turn(rescores: list[Rescore]) -> dict[int, float]:
    """Pure: the share of decisions where the policy agreed with the played action, per battle turn, pooled."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for rescore in rescores:
        for decision in rescore.decisions:
            counts[decision.turn][0] += decision.agree
            counts[decision.turn][1] += 1
    return {turn: agreed / total for turn, (agreed, total) in sorted(counts.items())}


def panel_line(decision: RescoredDecision, policy: str) -> str:
    """What the decision panel says: ``preset:run3 would have played X (p = 0.62); this was its choice #2``."""
    if decision.choice is None:
        return f"{policy} had no action to suggest here"
    p = f" (p = {decision.probability:.2f})" if decision.probability is not None else ""
    if decision.agree:
        return f"{policy} would have played the same: {decision.choice.choice}{p}"
    rank = f"; this decision was its choice #{decision.played_rank}" if decision.played_rank else ""
    return f"{policy} would have played {decision.choice.choice}{p}{rank}"


def load_rescores(recordings_dir: Path, recording_id: str) -> tuple[list[Rescore], int]:
    """The rescores stored for one recording, sorted by policy and side, and how many files there were unreadable
    (a broken rescore never stops its recording from opening)."""
    folder = Path(recordings_dir) / RESCORE_DIR / recording_id
    if not folder.is_dir() or folder.is_symlink():
        return [], 0
    found: list[Rescore] = []
    broken = 0
    for path in sorted(folder.glob("*.json")):
        try:
            if path.is_symlink():
                raise ValueError(path.name)
            rescore = Rescore.model_validate_json(read_limited(path))  # a regular file of bounded size, never a FIFO
        except (OSError, ValueError):  # pydantic's ValidationError and RecordingError are ValueErrors
            broken += 1
            continue
        if rescore.recording == recording_id:
            found.append(rescore)
        else:
            broken += 1
    return sorted(found, key=lambda r: (r.policy, r.side)), broken


def decision_notes(rescores: list[Rescore]) -> dict[int, dict[str, list[str]]]:
    """Pure: the decision panel's lines — ``{decision index: {side: [panel_line per stored policy]}}``."""
    notes: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for rescore in rescores:
        for decision in rescore.decisions:
            notes[decision.index][rescore.side].append(panel_line(decision, rescore.policy))
    return {index: dict(sides) for index, sides in notes.items()}


def agreement_lines(rescores: list[Rescore]) -> list[str]:
    """Pure: one line per stored rescore — agreement with the recorded policy overall and per battle turn."""
    lines = []
    for rescore in rescores:
        agreed = sum(d.agree for d in rescore.decisions)
        total = len(rescore.decisions)
        share = f"{agreed / total:.0%}" if total else "—"
        turns = agreement_by_turn([rescore])
        low = [turn for turn, rate in turns.items() if rate < 1.0]
        where = f"; disagrees at turn{'s' if len(low) > 1 else ''} {', '.join(map(str, low[:12]))}" if low else ""
        more = f" (+{len(low) - 12} more)" if len(low) > 12 else ""
        lines.append(f"{rescore.policy} as {rescore.side} ({rescore.recorded_policy} played): agrees {share} "
                     f"({agreed}/{total} decisions){where}{more}")
    return lines
