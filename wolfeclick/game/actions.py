"""Legal actions and the action JSON the checkpoints speak.

The legal set is computed from the simulator's own ``|request|`` JSON (the ground truth of what a side may do), not
from a tracker's guess. An action is written ``{"action": "move"|"switch", "choice": NAME}``; NAME is matched by
Showdown id, so ``Thunder Wave``, ``thunder-wave`` and ``thunderwave`` are the same move.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

MAX_MOVES = 4
MAX_SWITCHES = 5

ActionKind = Literal["move", "switch"]


def to_id(text: str) -> str:
    """Showdown's ``toID``: lowercase, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


@dataclass(frozen=True)
class LegalAction:
    """One thing a side may do now. ``slot`` is the request's 1-based move index or team position."""

    kind: ActionKind
    name: str
    id: str
    slot: int

    def command(self) -> str:
        """The choice string for the simulator, e.g. ``move 2`` or ``switch 4``."""
        return f"{self.kind} {self.slot}"

    def to_json(self, choice: str | None = None) -> dict[str, str]:
        return {"action": self.kind, "choice": self.name if choice is None else choice}

    def json_text(self, choice: str | None = None) -> str:
        """The canonical JSON text of this action (what a model is asked to emit)."""
        return json.dumps(self.to_json(choice))


def species_of(details: str) -> str:
    """``'Pikachu, L88, M'`` → ``'Pikachu'``."""
    return details.split(",")[0].strip()


def legal_actions(request: dict[str, Any]) -> list[LegalAction]:
    """All moves (≤4) and switches (≤5) the request allows, moves first, in the request's order.

    A side that must wait, or whose request is a team preview, has no actions here. ``maybeTrapped`` keeps switches
    (the simulator may still refuse them, and the runner then asks again).
    """
    if not request or request.get("wait") or request.get("teamPreview"):
        return []
    side = request.get("side") or {}
    team = side.get("pokemon") or []
    force_switch = any(request.get("forceSwitch") or [])
    active = (request.get("active") or [{}])[0] if request.get("active") else {}

    actions: list[LegalAction] = []
    if not force_switch:
        for index, move in enumerate(active.get("moves") or [], start=1):
            if move.get("disabled"):
                continue
            name = move.get("move") or move.get("id") or f"move {index}"
            actions.append(LegalAction("move", name, move.get("id") or to_id(name), index))
        actions = actions[:MAX_MOVES]

    trapped = bool(active.get("trapped")) and not force_switch
    if not trapped:
        switches = []
        for position, mon in enumerate(team, start=1):
            condition = str(mon.get("condition", ""))
            if mon.get("active") or condition.endswith(" fnt") or condition == "0 fnt":
                continue
            name = species_of(str(mon.get("details", mon.get("ident", "?"))))
            switches.append(LegalAction("switch", name, to_id(name), position))
        actions.extend(switches[:MAX_SWITCHES])
    return actions


@dataclass(frozen=True)
class ParsedAction:
    """The outcome of reading a policy's text: the legal action it names, or why it names none."""

    action: LegalAction | None
    reason: str | None = None

    @property
    def legal(self) -> bool:
        return self.action is not None


_THINK_RE = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in ``text``, in order of appearance."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        index = text.find("{", end)
    return found


def parse_action(text: str | None, legal: list[LegalAction]) -> ParsedAction:
    """Find the first action object in ``text`` and match it to a legal action.

    Tolerant about form (key order and case, prose or ``<think>`` blocks around it), exact about meaning: the kind
    must agree and the choice must equal a legal action's name by Showdown id.
    """
    if text is None or not text.strip():
        return ParsedAction(None, "empty output")
    body = _THINK_RE.sub("", text)
    candidates = _json_objects(body) or _json_objects(text)
    if not candidates:
        return ParsedAction(None, "no JSON object in output")
    last_reason = "no action object in output"
    for obj in candidates:
        lowered = {str(k).strip().lower(): v for k, v in obj.items()}
        kind, choice = lowered.get("action"), lowered.get("choice")
        if not isinstance(kind, str) or not isinstance(choice, str):
            continue
        kind_id, choice_id = to_id(kind), to_id(choice)
        if kind_id not in ("move", "switch"):
            last_reason = f"unknown action kind {kind!r}"
            continue
        for action in legal:
            if action.kind == kind_id and choice_id in (action.id, to_id(action.name)):
                return ParsedAction(action)
        last_reason = f"{kind_id} {choice!r} is not a legal action now"
    return ParsedAction(None, last_reason)


def find_by_command(command: str, legal: list[LegalAction]) -> LegalAction | None:
    """Map a simulator choice (``move thunderbolt terastallize``, ``switch 3``, ``move 2``) to a legal action."""
    parts = command.replace("/choose", "").split()
    if len(parts) < 2 or parts[0] not in ("move", "switch"):
        return None
    kind, target = parts[0], parts[1]
    for action in legal:
        if action.kind != kind:
            continue
        if target.isdigit() and int(target) == action.slot:
            return action
        if to_id(target) in (action.id, to_id(action.name)):
            return action
    return None
