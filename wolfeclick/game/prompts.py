"""Prompt profiles: how a battle state becomes the chat a checkpoint reads, and which texts count as answers.

``wolfeclick-v1`` reproduces, for the same battle state, the prompt the published WolfeClick checkpoints were
trained on (OpenEnv-WolfeClick: ``state_formatter.py``, ``action_space.py``, the notebooks' system prompt), quirks
included:

- species, moves, items and abilities as poke-env ids (``hitmonchan``, ``closecombat``, ``leftovers``);
- a status is poke-env's ``str(Status)``, e.g. ``PAR (status) object`` (``FNT (status) object`` when fainted);
- HP one decimal in Part A and C (``54.8%``) but none in Part B (``55%``);
- move tags are the first letter of the type's name and the data base power: ``shadowball(G80)`` (Ghost and Grass
  are both ``G``), ``return(N0)``;
- the opponent speed range assumes level 100 (``int((2B+5)*0.9)`` to ``int((2B+31+63+5)*1.1)``), ignoring level;
- Part C lists every opponent Pokémon seen, its last HP and status; revealed moves, then ``Revealed item:``, which
  is poke-env's ``unknown_item`` until the item is seen, and ``Revealed ability:`` once one is known;
- the options list is Python's repr of each option: ``- action: 'move', choice: 'thunderbolt'``; switches name the
  species id; only the first four moves and five switches are listed.

The answer texts are ``{"action": "move", "choice": "closecombat"}`` (``json.dumps`` of the reference's options).
Where poke-env 0.8 (the reference's) and 0.16 (ours) track state differently (moves after Transform, Mimic and
Sketch; abilities after Transform, Trace, Worry Seed and immunities; our own ability; a status Healing Wish cured),
``V1History`` (``wolfeclick.game.v1_history``) replays the battle's parsed events with 0.8's rules
(``docs/llm.md``, Fidelity).

``arena-v1`` (the default for other checkpoints) shows the project's own clearer state markdown (``Observation.state``
from ``wolfeclick.game.state``) and asks for ``{"action": …, "choice": NAME}`` with the names the simulator uses.

Both are rendered by ``wolfeclick.llm.chat`` with the tokenizer's chat template, ``add_generation_prompt=True`` and
thinking disabled (``enable_thinking=False``; Qwen3-4B-Instruct-2507's template has no thinking switch, so its text
is the same). They live in ``game/`` because they only format battle state: the env shows the same text as
observations without importing anything of the model stack.
"""

from __future__ import annotations

import json
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from wolfeclick.errors import InputError
from wolfeclick.game.actions import LegalAction, to_id
from wolfeclick.game.v1_history import (
    V1History,
    v1_moves,
    v1_percent,
    v1_speed_range,
    v1_stat_changes,
    v1_status,
)

V1_SYSTEM_PROMPT = (
    "You are a competitive Pokemon battler. "
    "Analyse the battle state below and choose exactly one action. "
    "You MUST output ONLY a single JSON object — no explanation, no markdown fences, just the raw JSON.\n"
    '{"action": "move" | "switch", "choice": "Exact Name of Move or Pokemon"}'
)

ARENA_SYSTEM_PROMPT = (
    "You are playing a Pokémon Showdown singles battle. Read the battle state, then choose exactly one of the "
    "legal actions listed. Answer with a single JSON object and nothing else: "
    '{"action": "move" or "switch", "choice": NAME}, where NAME is written exactly as in the list.'
)


@dataclass(frozen=True)
class Candidate:
    """One legal action and the exact answer text that stands for it."""

    action: LegalAction
    choice: str
    text: str


@dataclass
class Prompt:
    profile: str
    messages: list[dict[str, str]]
    candidates: list[Candidate]
    text: str = ""
    """The chat-templated prompt (filled in by ``wolfeclick.llm.chat.render``)."""


class Profile:
    """Base class: ``build`` the chat and candidates for an observation (``wolfeclick.llm.chat`` renders it)."""

    name = "base"

    def build(self, observation: Any) -> Prompt:  # pragma: no cover - abstract
        raise NotImplementedError


# --------------------------------------------------------------------------------------------- wolfeclick-v1


def v1_state(battle: Any, history: V1History, request: dict[str, Any] | None = None) -> str:
    """The reference's Part A/B/C markdown for ``battle`` (``history`` is updated first, as the reference does;
    ``request`` is the one being answered)."""
    history.update(battle, request)
    lines = ["## Part A: Active Field"]
    own = battle.active_pokemon
    if own is not None:
        lines.append("### Active Self")
        lines.append("\n".join([
            f"- Name: {own.species or 'Unknown'}",
            f"- HP: {v1_percent(own.current_hp_fraction):.1f}%",
            f"- Status: {v1_status(own, 'Healthy', history.status_of(battle, own))}",
            f"- Ability: {history.own_ability_of(battle, own) or 'Unknown'}",
            f"- Item: {own.item or 'None'}",
            f"- Stat Modifiers: {v1_stat_changes(own)}",
        ]))
    else:
        lines.append("### Active Self\n- None")
    opp = battle.opponent_active_pokemon
    if opp is not None:
        lines.append("### Active Opponent")
        lines.append("\n".join([
            f"- Name: {opp.species or 'Unknown'}",
            f"- HP: {v1_percent(opp.current_hp_fraction):.1f}%",
            f"- Status: {v1_status(opp, 'Healthy', history.status_of(battle, opp))}",
            f"- Speed Range: {v1_speed_range(opp, history.opponent_speed(opp))}",
        ]))
    else:
        lines.append("### Active Opponent\n- None")

    lines.append("\n## Part B: Full Self Roster")
    if not battle.team:
        lines.append("- [Unknown team]")
    for key, mon in battle.team.items():
        lines.append(f"- {mon.species or '?'} HP:{v1_percent(mon.current_hp_fraction):.0f}% "
                     f"{v1_status(mon, 'OK', history.status_of(battle, mon))} Item:{mon.item or '?'}")
        lines.append(v1_moves(mon, history.moves.get(key)))

    lines.append("\n## Part C: Opponent History")
    if not history.seen:
        lines.append("- No opponent Pokémon revealed yet.")
    for entry in history.seen.values():
        lines.append(f"- {entry.name} | Last HP: {entry.hp:.1f}% | Status: {entry.status or 'Healthy'}")
        if entry.moves:
            lines.append(f"  - Revealed moves: {', '.join(entry.moves)}")
        if entry.item:
            lines.append(f"  - Revealed item: {entry.item}")
        if entry.ability:
            lines.append(f"  - Revealed ability: {entry.ability}")
    return "\n".join(lines)


def v1_choice(action: LegalAction, battle: Any, history: V1History | None = None) -> str:
    """The reference's option name: poke-env 0.8's move id (from ``history``'s move sets when given), or the species
    id of the Pokémon to switch to."""
    if action.kind == "move":
        listed = history.option_id(battle, action.id) if history is not None else None
        if listed is not None:
            return listed
        for move in getattr(battle, "available_moves", None) or []:
            if move.id == action.id or (action.id == "hiddenpower" and move.id.startswith("hiddenpower")):
                return str(move.id)
        return action.id
    for mon in getattr(battle, "available_switches", None) or []:
        if to_id(mon.species or "") == action.id:
            return str(mon.species)
    return action.id


def v1_options(legal: list[LegalAction], battle: Any, history: V1History | None = None) -> list[Candidate]:
    moves = [a for a in legal if a.kind == "move"][:4]
    switches = [a for a in legal if a.kind == "switch"][:5]
    out = []
    for action in moves + switches:
        choice = v1_choice(action, battle, history)
        out.append(Candidate(action, choice, json.dumps({"action": action.kind, "choice": choice})))
    return out


def v1_instructions(candidates: list[Candidate]) -> str:
    lines = [
        "You must choose exactly one action and output pure JSON with this schema:",
        "",
        '{"action": "move" | "switch", "choice": "Exact Name of Move or Pokemon"}',
        "",
        "Valid options for this state:",
    ]
    lines += [f"- action: {c.action.kind!r}, choice: {c.choice!r}" for c in candidates]
    return "\n".join(lines)


class WolfeclickV1(Profile):
    """The published checkpoints' training prompt. Keeps one opponent history per battle, as the reference did."""

    name = "wolfeclick-v1"

    def __init__(self) -> None:
        self._histories: "weakref.WeakKeyDictionary[Any, V1History]" = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def history(self, battle: Any) -> V1History:
        with self._lock:
            history = self._histories.get(battle)
            if history is None:
                history = self._histories[battle] = V1History()
            return history

    def build(self, observation: Any) -> Prompt:
        battle = observation.battle
        history = self.history(battle)
        state = v1_state(battle, history, observation.request)
        candidates = v1_options(list(observation.legal_actions), battle, history)
        user = f"{state}\n\n{v1_instructions(candidates)}"
        messages = [{"role": "system", "content": V1_SYSTEM_PROMPT}, {"role": "user", "content": user}]
        return Prompt(self.name, messages, candidates)


# ------------------------------------------------------------------------------------------------- arena-v1


class ArenaV1(Profile):
    """The project's own state markdown, the simulator's names, a plain instruction."""

    name = "arena-v1"

    def build(self, observation: Any) -> Prompt:
        state = observation.state
        if not state:
            from wolfeclick.game.state import format_state

            state = format_state(observation.battle)
        candidates = [Candidate(a, a.name, a.json_text()) for a in observation.legal_actions]
        options = "\n".join(f"- {c.text}" for c in candidates)
        user = (f"{state.rstrip()}\n\n## Legal actions\n{options}\n\n"
                "Answer with exactly one of the JSON objects above.")
        messages = [{"role": "system", "content": ARENA_SYSTEM_PROMPT}, {"role": "user", "content": user}]
        return Prompt(self.name, messages, candidates)


PROFILES: dict[str, type[Profile]] = {WolfeclickV1.name: WolfeclickV1, ArenaV1.name: ArenaV1}
ALIASES = {"v1": WolfeclickV1.name, "reference": WolfeclickV1.name, "default": ArenaV1.name, "arena": ArenaV1.name}
DEFAULT_PROFILE = ArenaV1.name


def profile_names() -> list[str]:
    return sorted(PROFILES)


def make_profile(name: str | None) -> Profile:
    key = ALIASES.get(name or DEFAULT_PROFILE, name or DEFAULT_PROFILE)
    if key not in PROFILES:
        raise InputError(f"unknown prompt profile {name!r}; profiles: {', '.join(profile_names())}")
    return PROFILES[key]()
