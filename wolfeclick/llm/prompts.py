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

``arena-v1`` (the default for other checkpoints) shows the project's own clearer state markdown (``Observation.state``
from ``wolfeclick.game.state``) and asks for ``{"action": …, "choice": NAME}`` with the names the simulator uses.

Both render with the tokenizer's chat template, ``add_generation_prompt=True`` and thinking disabled
(``enable_thinking=False``; Qwen3-4B-Instruct-2507's template has no thinking switch, so its text is the same).
"""

from __future__ import annotations

import json
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from wolfeclick.game.actions import LegalAction, to_id

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
    """The chat-templated prompt (filled in by ``render``)."""


class Profile:
    """Base class: ``build`` the chat and candidates for an observation; ``render`` applies the chat template."""

    name = "base"

    def build(self, observation: Any) -> Prompt:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self, tokenizer: Any, prompt: Prompt) -> Prompt:
        if not getattr(tokenizer, "chat_template", None):
            from wolfeclick.llm.specs import CheckpointError

            raise CheckpointError(f"the tokenizer has no chat template; profile {self.name} needs one")
        prompt.text = tokenizer.apply_chat_template(prompt.messages, tokenize=False, add_generation_prompt=True,
                                                    enable_thinking=False)
        return prompt

    def prompt(self, tokenizer: Any, observation: Any) -> Prompt:
        return self.render(tokenizer, self.build(observation))


# --------------------------------------------------------------------------------------------- wolfeclick-v1


def v1_percent(fraction: float | None) -> float:
    if fraction is None:
        return 0.0
    return max(0.0, min(1.0, float(fraction))) * 100.0


def v1_status(mon: Any, none: str) -> str:
    return str(mon.status) if mon.status is not None else none


def v1_speed_range(mon: Any, base: int | None = None) -> str:
    base = mon.base_stats.get("spe", 0) if base is None else base
    if base <= 0:
        return "Unknown"
    low = int((((2 * base) * 100) / 100 + 5) * 0.9)
    high = int((((2 * base + 31 + (252 // 4)) * 100) / 100 + 5) * 1.1)
    return f"{low}-{high}"


def v1_stat_changes(mon: Any) -> str:
    parts = [f"{stat.capitalize()} {'+' if stage > 0 else ''}{stage}" for stat, stage in mon.boosts.items() if stage]
    return ", ".join(parts) if parts else "None"


def v1_moves(mon: Any) -> str:
    moves = v1_own_moves(mon)
    if not moves:
        return "  Moves: [unknown]"
    tags = [f"{m.id}({m.type.name[0] if m.type is not None else '?'}{m.base_power or 0})" for m in moves]
    return "  Moves: " + " | ".join(tags)


def v1_single_ability(species: str | None, gen: int) -> str | None:
    """The ability of a species that has exactly one (poke-env 0.8 then set it as known)."""
    if not species:
        return None
    try:
        from poke_env.data import GenData

        abilities = [to_id(a) for a in GenData.from_gen(gen).pokedex[species]["abilities"].values()]
    except (KeyError, ValueError):
        return None
    return abilities[0] if len(abilities) == 1 else None


def v1_revealed_moves(mon: Any) -> list[str]:
    """An opponent's revealed move ids as poke-env 0.8 had them.

    While transformed, poke-env 0.16 lists the target's moves; 0.8 listed the Pokémon's own moves plus the copied
    moves it actually used (their PP went down).
    """
    if not getattr(mon, "transformed", False):
        return [move.id for move in mon.moves.values()]
    own = list(getattr(getattr(mon, "_moves", None), "_base_moves", {}) or {})

    def full_pp(move: Any) -> int:  # a Transform copy starts with 5 PP
        return min(5, move.max_pp) if getattr(move, "_from_transform", False) else move.max_pp

    used = [m.id for m in mon.moves.values() if m.id not in own and m.current_pp < full_pp(m)]
    return own + used


def v1_own_moves(mon: Any) -> list[Any]:
    """Our Pokémon's moves as poke-env 0.8 had them: a transformed one lists the request's moves, in its order."""
    moves = list(mon.moves.values())
    request = getattr(mon, "_last_request", None) or {}
    if not getattr(mon, "transformed", False) or not request.get("moves"):
        return moves
    by_id = {m.id: m for m in moves}
    ordered = [by_id[to_id(m)] for m in request["moves"] if to_id(m) in by_id]
    return ordered + [m for m in moves if m not in ordered][: max(0, 4 - len(ordered))] if ordered else moves


def v1_own_ability(mon: Any) -> str | None:
    """poke-env 0.8 re-read our Pokémon's ability from each new request, so a transformed or tracing Pokémon shows
    its own ability (``limber``, ``trace``); 0.16 keeps the copied one until the switch-out."""
    request = getattr(mon, "_last_request", None) or {}
    own = to_id(request.get("ability") or request.get("baseAbility") or "") or getattr(mon, "_ability", None)
    if getattr(mon, "transformed", False) or own == "trace":
        return own
    return mon.ability


@dataclass
class _Seen:
    """What the reference's opponent tracker remembers about one opponent species."""

    name: str
    hp: float
    status: str | None
    moves: list[str] = field(default_factory=list)
    item: str | None = None
    ability: str | None = None
    traced: str | None = None
    transform_ability: str | None = None
    transform_speed: int | None = None


class V1History:
    """The reference's opponent history: keyed by species, in first-seen order, updated at each decision."""

    def __init__(self) -> None:
        self.seen: dict[str, _Seen] = {}

    def opponent_speed(self, mon: Any) -> int | None:
        """poke-env 0.8 kept a transformed Pokémon's copied base stats after it switched out."""
        entry = self.seen.get(mon.species)
        return entry.transform_speed if entry is not None and not getattr(mon, "transformed", False) else None

    def update(self, battle: Any) -> None:
        for mon in battle.opponent_team.values():
            if not mon.species:
                continue
            status = str(mon.status) if mon.status is not None else None
            entry = self.seen.get(mon.species) or _Seen(mon.species, v1_percent(mon.current_hp_fraction), status)
            entry.hp = v1_percent(mon.current_hp_fraction)
            entry.status = status
            for move_id in v1_revealed_moves(mon):
                if move_id not in entry.moves:
                    entry.moves.append(move_id)
            if mon.item is not None:
                entry.item = mon.item
            ability = mon.ability
            if getattr(mon, "transformed", False):
                # poke-env 0.8 gave a transformed Pokémon the target's ability only when the target's species has
                # exactly one, and kept it after the switch-out; 0.16 copies the known ability until switch-out
                target = battle.active_pokemon
                single = v1_single_ability(target.species, mon.gen) if target is not None else None
                entry.transform_ability = single or entry.transform_ability
                if target is not None and target.base_stats.get("spe"):
                    entry.transform_speed = int(target.base_stats["spe"])
                ability = entry.transform_ability or getattr(mon, "_ability", None)
            elif entry.transform_ability:
                ability = entry.transform_ability
            if getattr(mon, "_ability", None) == "trace":
                # poke-env 0.8 (the reference's) kept a traced ability for good; 0.16 drops it on switch-out
                temporary = getattr(mon, "temporary_ability", None)
                if temporary:
                    entry.traced = temporary
                elif entry.traced:
                    ability = entry.traced
            if ability is not None:
                entry.ability = ability
            self.seen[mon.species] = entry


def v1_state(battle: Any, history: V1History) -> str:
    """The reference's Part A/B/C markdown for ``battle`` (``history`` is updated first, as the reference does)."""
    history.update(battle)
    lines = ["## Part A: Active Field"]
    own = battle.active_pokemon
    if own is not None:
        lines.append("### Active Self")
        lines.append("\n".join([
            f"- Name: {own.species or 'Unknown'}",
            f"- HP: {v1_percent(own.current_hp_fraction):.1f}%",
            f"- Status: {v1_status(own, 'Healthy')}",
            f"- Ability: {v1_own_ability(own) or 'Unknown'}",
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
            f"- Status: {v1_status(opp, 'Healthy')}",
            f"- Speed Range: {v1_speed_range(opp, history.opponent_speed(opp))}",
        ]))
    else:
        lines.append("### Active Opponent\n- None")

    lines.append("\n## Part B: Full Self Roster")
    if not battle.team:
        lines.append("- [Unknown team]")
    for mon in battle.team.values():
        lines.append(f"- {mon.species or '?'} HP:{v1_percent(mon.current_hp_fraction):.0f}% "
                     f"{v1_status(mon, 'OK')} Item:{mon.item or '?'}")
        lines.append(v1_moves(mon))

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


def v1_choice(action: LegalAction, battle: Any) -> str:
    """The reference's option name: poke-env's move id, or the species id of the Pokémon to switch to."""
    if action.kind == "move":
        for move in getattr(battle, "available_moves", None) or []:
            if move.id == action.id or (action.id == "hiddenpower" and move.id.startswith("hiddenpower")):
                return str(move.id)
        return action.id
    for mon in getattr(battle, "available_switches", None) or []:
        if to_id(mon.species or "") == action.id:
            return str(mon.species)
    return action.id


def v1_options(legal: list[LegalAction], battle: Any) -> list[Candidate]:
    moves = [a for a in legal if a.kind == "move"][:4]
    switches = [a for a in legal if a.kind == "switch"][:5]
    out = []
    for action in moves + switches:
        choice = v1_choice(action, battle)
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
        state = v1_state(battle, self.history(battle))
        candidates = v1_options(list(observation.legal_actions), battle)
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
        from wolfeclick.llm.specs import CheckpointError

        raise CheckpointError(f"unknown prompt profile {name!r}; profiles: {', '.join(profile_names())}")
    return PROFILES[key]()
