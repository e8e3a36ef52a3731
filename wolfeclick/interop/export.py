"""Recordings → the rows a trainer reads, one JSON object per line (``datasets.load_dataset("json", …)`` loads them).

- ``sft``: ``{"prompt", "completion"}`` strings, TRL ``SFTTrainer``'s prompt-completion shape (it trains on the
  completion only). ``prompt`` is the exact chat-templated prompt a checkpoint was shown (its profile applied the
  chat template), the exact observation an env agent read (``wolfeclick.env`` recordings keep it byte for byte),
  or the state markdown for a baseline; ``completion`` is the action JSON. This is what the
  reference's JSON warm-up trained on. Decisions flagged illegal (a fallback was played, not chosen) and decisions
  without an action are left out: they teach nothing to imitate.
- ``grpo``: one row per decision with the prompt, the completion the policy produced, the shaped reward and its
  components, the outcome, the legal actions and where it came from (battle id, side, turn). Extra columns are what
  TRL's ``GRPOTrainer`` hands to reward functions.
- ``jsonl``: the ``grpo`` row plus the rest of the decision (state, command, raw output, policy extras as JSON text,
  so every row has the same column types).

Decisions nobody saw a prompt or state for (Showdown imports: public log only) get the player's view inferred from
the public log (``wolfeclick.interop.views``: the side's own team completed from the format's set data) when the
format is a random battle: the prompt is the ``wolfeclick-v1`` chat's user text (``profile``: or ``arena-v1``'s)
that player would have read, and the row says so. Every row carries ``inferred`` (whether anything in it was
inferred) and ``confidence`` (the probability, from the set data, that its prompt is the one the player saw: 1.0
for a played battle); ``exact_only`` keeps the rows with nothing inferred. Other public-log decisions are skipped,
and counted. Rows are pure functions of the recordings (and the simulator's set data), in input order: same files,
same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from wolfeclick.battle.schema import Recording, SideDecision
from wolfeclick.battle.store import load_recording, recording_files, write_atomic
from wolfeclick.errors import WolfeClickError
from wolfeclick.sides import SIDES, Side, is_side

KINDS = ("sft", "grpo", "jsonl")
PROFILES = ("wolfeclick-v1", "arena-v1")
"""The prompt an inferred row shows: the published checkpoints' v1 chat (default) or the Arena's own."""
Views = Callable[[Recording], "dict[tuple[int, str], Any] | str"]
"""A recording → its inferred player views by (decision index, side), or why it has none (one line)."""


class ExportError(WolfeClickError, ValueError):
    """An export that cannot be done as asked (unknown kind or side, nothing to write)."""


@dataclass(frozen=True)
class ExportFilter:
    """Which battles and sides to export: a policy spec (the side that played it), the winner, the format."""

    policy: str | None = None
    winner: str | None = None
    """``p1``, ``p2`` or ``none`` (no winner: a tie or an unfinished battle)."""
    format: str | None = None

    def battle_ok(self, recording: Recording) -> bool:
        if self.format and recording.format != self.format:
            return False
        if self.winner:
            won = recording.result.winner or "none"
            if won != self.winner:
                return False
        return True

    def side_ok(self, recording: Recording, side: Side) -> bool:
        return not self.policy or recording.players[side].policy == self.policy


@dataclass
class ExportStats:
    recordings: int = 0
    battles: int = 0
    rows: int = 0
    inferred: int = 0
    """Rows whose prompt was inferred from a public log."""
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def summary(self) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items()))
        inferred = f", {self.inferred} of them inferred from public logs" if self.inferred else ""
        return (f"{self.rows} rows from {self.battles} of {self.recordings} recordings{inferred}"
                + (f" (skipped: {skipped})" if skipped else ""))


def action_json(decision: SideDecision) -> str:
    """The action as the checkpoints speak it; the model's own text when it is exactly that action."""
    if decision.action is None:
        return ""
    canonical = {"action": decision.action.action, "choice": decision.action.choice}
    raw = decision.raw_output
    if raw and not decision.illegal:
        try:
            parsed = json.loads(raw)
        except (ValueError, TypeError):
            parsed = None
        if isinstance(parsed, dict) and parsed.get("action") == canonical["action"]:
            return raw.strip()  # e.g. the wolfeclick-v1 option name, exactly as the model was taught to write it
    return json.dumps(canonical, ensure_ascii=False)


def prompt_of(decision: SideDecision) -> tuple[str, str]:
    """(prompt text, what it is): the chat-templated prompt a checkpoint saw, else the exact observation an env
    agent read, else the state markdown."""
    prompt = decision.policy_info.get("prompt")
    if isinstance(prompt, str) and prompt:
        return prompt, "chat_template"
    seen = decision.seen()
    return seen, "observation" if seen is not decision.state else "state"


def outcome_word(recording: Recording, side: Side) -> str:
    winner = recording.result.winner
    if winner is None:
        return "tie" if recording.result.reason == "tie" else "unfinished"
    return "win" if winner == side else "loss"


def _public_only(decision: SideDecision) -> bool:
    return bool(decision.policy_info.get("public_only"))


def decision_rows(recording: Recording, sides: Iterable[Side], kind: str, stats: ExportStats,
                  views: Views | None = None, *, exact_only: bool = False,
                  profile: str = PROFILES[0]) -> Iterator[dict]:
    """The rows of one recording for ``sides``, in decision order (``views``: the inferred player views of a
    public-log import; ``exact_only``: only rows with nothing inferred)."""
    sides = list(sides)
    inferred: dict[tuple[int, str], Any] | str | None = None
    for turn in recording.turns:
        for side in sides:
            decision = turn.decisions.get(side)
            if decision is None:
                continue
            prompt, prompt_kind = prompt_of(decision)
            view = None
            if not prompt and _public_only(decision) and views is not None:
                if inferred is None:
                    inferred = views(recording)
                if isinstance(inferred, str):
                    stats.skip(f"public-log decisions with no inferred view ({inferred})")
                    continue
                view = inferred.get((turn.index, side))
                if view is not None:
                    prompt = view.prompt if profile == PROFILES[0] else view.arena_prompt
                    prompt_kind = f"{profile}-inferred"
            if not prompt:
                stats.skip("decisions without a prompt or state (public-log imports)")
                continue
            if exact_only and view is not None and not view.exact:
                stats.skip("decisions with an inferred prompt (--exact-only)")
                continue
            marks = {"inferred": view is not None and not view.exact,
                     "confidence": view.total_confidence if view is not None else 1.0}
            completion = action_json(decision)
            if view is not None:
                completion = (view.completion if profile == PROFILES[0] else view.action.json_text()) \
                    if view.action is not None else ""
            if kind == "sft":
                if decision.action is None or decision.illegal or not completion:
                    stats.skip("illegal or action-less decisions (sft)")
                    continue
                if view is not None:
                    stats.inferred += 1
                yield {"prompt": prompt, "completion": completion, "battle_id": recording.id,
                       "side": side, "turn": turn.turn, "index": turn.index, **marks}
                continue
            if view is not None:
                stats.inferred += 1
            legal = [a.model_dump() for a in decision.legal_actions] if view is None else [
                {"action": a.kind, "choice": a.name} for a in view.legal_actions]
            row = {
                "prompt": prompt,
                "prompt_kind": prompt_kind,
                "completion": decision.raw_output if decision.raw_output is not None else completion,
                "action": completion,
                **marks,
                "inferred_fields": dict(view.confidence) if view is not None else None,
                "reward": decision.reward.total,
                "reward_components": dict(sorted(decision.reward.components.items())),
                "outcome_reward": decision.reward.outcome,
                "outcome": outcome_word(recording, side),
                "legal_actions": legal,
                "illegal": decision.illegal,
                "battle_id": recording.id,
                "format": recording.format,
                "side": side,
                "policy": recording.players[side].policy,
                "source": recording.source.kind,
                "turn": turn.turn,
                "index": turn.index,
            }
            if kind == "jsonl":
                info = {k: v for k, v in decision.policy_info.items() if k not in ("prompt", "observation")}
                row.update(state=view.state if view is not None else decision.state, command=decision.command,
                           raw_output=decision.raw_output,
                           illegal_reason=decision.illegal_reason, latency_ms=decision.latency_ms,
                           policy_info=json.dumps(info, sort_keys=True, ensure_ascii=False))
            yield row


def wanted_sides(side: str) -> list[Side]:
    """The sides an export's ``side`` option names: ``p1``, ``p2`` or ``both`` (anything else: one line)."""
    if side == "both":
        return list(SIDES)
    if not is_side(side):
        raise ExportError(f"unknown side {side!r}; choose p1, p2 or both")
    return [side]


def export_rows(recordings: Iterable[Recording], side: str, kind: str, flt: ExportFilter,
                stats: ExportStats, views: Views | None = None, *, exact_only: bool = False,
                profile: str = PROFILES[0]) -> Iterator[dict]:
    """Every row of ``recordings`` that passes ``flt``, for ``side`` (``p1``, ``p2`` or ``both``)."""
    if kind not in KINDS:
        raise ExportError(f"unknown export kind {kind!r}; choose one of {', '.join(KINDS)}")
    if profile not in PROFILES:
        raise ExportError(f"unknown prompt profile {profile!r}; choose one of {', '.join(PROFILES)}")
    wanted = wanted_sides(side)
    for recording in recordings:
        stats.recordings += 1
        if not flt.battle_ok(recording):
            continue
        sides = [s for s in wanted if flt.side_ok(recording, s)]
        if not sides:
            continue
        stats.battles += 1
        for row in decision_rows(recording, sides, kind, stats, views, exact_only=exact_only, profile=profile):
            stats.rows += 1
            yield row


def book_views() -> Views:
    """The player views of public-log imports, from the set data of the installed simulator (loaded once per
    format; a format with no set data, a team format, gives its one-line reason)."""
    import asyncio

    from wolfeclick.errors import InputError
    from wolfeclick.interop.views import player_views
    from wolfeclick.sim.setdata import load_book

    books: dict[str, Any] = {}

    def views(recording: Recording) -> dict[tuple[int, str], Any] | str:
        if recording.format not in books:
            try:
                books[recording.format] = asyncio.run(load_book(recording.format))
            except InputError as exc:
                books[recording.format] = str(exc)
        book = books[recording.format]
        if isinstance(book, str):
            return book
        found = player_views(recording, book)
        if not found:
            return "its decision points do not match its log"
        return {(view.index, view.side): view for view in found}

    return views


def dataset_card(out: Path, kind: str, stats: ExportStats, *, exact_only: bool, profile: str) -> str:
    """A short dataset card for ``out``: what the rows are and how many were inferred from public logs."""
    skipped = "".join(f"- {n} {why}\n" for why, n in sorted(stats.skipped.items()))
    return (f"# {out.name}\n\nWolfeClick Arena export, `--as {kind}`"
            f"{' --exact-only' if exact_only else ''}: {stats.rows} rows from {stats.battles} battles "
            f"({stats.recordings} recordings read).\n\n"
            f"- rows inferred from public logs: {stats.inferred} (prompt: the `{profile}` view each player would have "
            "had, its own team completed from the format's set data; `inferred` and `confidence` per row; "
            "docs/interop.md)\n"
            f"- rows as played (nothing inferred): {stats.rows - stats.inferred}\n"
            + (f"\nSkipped:\n\n{skipped}" if skipped else ""))


def export_files(paths: list[Path], out: Path, *, side: str = "both", kind: str = "grpo",
                 flt: ExportFilter | None = None, progress: Callable[[Path], None] | None = None,
                 exact_only: bool = False, profile: str = PROFILES[0], views: Views | None = None) -> ExportStats:
    """Read recordings from ``paths`` (files, or folders of ``*.json``) and write the rows to ``out`` atomically,
    with a dataset card beside it (``<out>.card.md``). ``views`` defaults to the set data's (``book_views``)."""
    files = recording_files(paths)
    if not files:
        raise ExportError("no recordings to export (no .json files in the paths given)")
    stats = ExportStats()

    def recordings() -> Iterator[Recording]:
        for path in files:
            recording = load_recording(path)
            if progress is not None:
                progress(path)
            yield recording

    lines = [json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
             for row in export_rows(recordings(), side, kind, flt or ExportFilter(), stats,
                                    views if views is not None else book_views(), exact_only=exact_only,
                                    profile=profile)]
    if not lines:
        raise ExportError(f"nothing to export: {stats.summary()}")
    write_atomic(out, "".join(lines))
    write_atomic(card_path(out), dataset_card(out, kind, stats, exact_only=exact_only, profile=profile))
    return stats


def card_path(out: Path) -> Path:
    """Where an export's dataset card goes: ``rows.jsonl`` → ``rows.jsonl.card.md``."""
    return out.with_name(out.name + ".card.md")


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an exported file (for checks and tests)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]
