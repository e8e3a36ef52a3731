"""What a person is shown for each legal action: one button label per action. Pure; no battle, no UI.

The simulator's request is the ground truth of what may be done now (PP left, each benched Pokémon's HP); a move's
type and base power come from the generation's move data (poke-env's ``GenData.moves``, passed in as a mapping), so
these functions stay plain data in, plain data out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from wolfeclick.game.actions import LegalAction, species_of, to_id
from wolfeclick.game.state import request_hp

__all__ = ["ChoiceButton", "choice_buttons", "move_label", "switch_label", "preview_label", "hp_percent"]

_HIDDEN_POWER = re.compile(r"^hidden power\s+([a-z]+)(?:\s+(\d+))?$", re.IGNORECASE)


@dataclass(frozen=True)
class ChoiceButton:
    """One legal action as a button: what it sends and what it says."""

    command: str
    label: str
    kind: str


def hp_percent(condition: str) -> int | None:
    """``'123/300 par'`` → 41; ``'0 fnt'`` → 0. A Pokémon with any HP left never reads 0%."""
    hp = request_hp(condition)
    if hp is None:
        return None
    now_f, top_f = hp
    percent = round(100 * now_f / top_f)
    return max(1, percent) if now_f > 0 else 0


def _status(condition: str) -> str | None:
    parts = str(condition or "").split()
    return parts[1].upper() if len(parts) > 1 and parts[1] != "fnt" else None


def move_label(name: str, move_type: str | None, power: int | None, category: str | None,
               pp: int | None, max_pp: int | None) -> str:
    """``Thunderbolt · Electric · 95 BP · 15/15 PP`` (status moves say ``status``; fixed/variable damage ``—``)."""
    parts = [name]
    if move_type:
        parts.append(move_type)
    if category == "Status":
        parts.append("status")
    elif power:
        parts.append(f"{power} BP")
    elif category:
        parts.append("— BP")
    if pp is not None and max_pp:
        parts.append(f"{pp}/{max_pp} PP")
    return " · ".join(parts)


def switch_label(species: str, hp: int | None, status: str | None) -> str:
    """``Switch to Pikachu · 78% HP · PAR``."""
    parts = [f"Switch to {species}"]
    if hp is not None:
        parts.append(f"{hp}% HP")
    if status:
        parts.append(status)
    return " · ".join(parts)


def preview_label(slot: int, species: str) -> str:
    """Team preview: ``Lead with Garchomp (slot 1)``; the rest follow in team order."""
    return f"Lead with {species} (slot {slot})"


def _move_facts(action: LegalAction, movedex: Mapping[str, Mapping[str, Any]]) -> tuple[Any, Any, Any]:
    """Type, base power and category of a move; Hidden Power's type and power come from its request name."""
    hidden = _HIDDEN_POWER.match(action.name.strip())
    if hidden:
        typed = movedex.get("hiddenpower" + to_id(hidden.group(1))) or {}
        power = int(hidden.group(2)) if hidden.group(2) else typed.get("basePower")
        return hidden.group(1).capitalize(), power, typed.get("category", "Special")
    data = movedex.get(action.id) or movedex.get(to_id(action.name)) or {}
    return data.get("type"), data.get("basePower"), data.get("category")


def choice_buttons(actions: Sequence[LegalAction], request: Mapping[str, Any],
                   movedex: Mapping[str, Mapping[str, Any]]) -> list[ChoiceButton]:
    """A button per legal action, in the legal actions' order (moves first, then switches; or the preview leads)."""
    active = (request.get("active") or [{}])[0] if request.get("active") else {}
    moves = active.get("moves") or []
    team = (request.get("side") or {}).get("pokemon") or []
    buttons = []
    for action in actions:
        if action.kind == "move":
            entry = moves[action.slot - 1] if 0 < action.slot <= len(moves) else {}
            move_type, power, category = _move_facts(action, movedex)
            label = move_label(action.name, move_type, power, category, entry.get("pp"), entry.get("maxpp"))
        elif action.kind == "switch":
            mon = team[action.slot - 1] if 0 < action.slot <= len(team) else {}
            condition = str(mon.get("condition", ""))
            label = switch_label(action.name, hp_percent(condition), _status(condition))
        else:
            mon = team[action.slot - 1] if 0 < action.slot <= len(team) else {}
            label = preview_label(action.slot, species_of(str(mon.get("details", action.name))))
        buttons.append(ChoiceButton(action.command(), label, action.kind))
    return buttons
