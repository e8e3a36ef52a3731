"""Legal actions and the action JSON the checkpoints speak.

The legal set is computed from the simulator's own ``|request|`` JSON (the ground truth of what a side may do), not
from a tracker's guess. An action is written ``{"action": "move"|"switch", "choice": NAME}``. Two parser modes read it:

- ``tolerant`` (the default): NAME is matched by Showdown id, so ``Thunder Wave``, ``thunder-wave`` and
  ``thunderwave`` are the same move; the first object in the text that names a legal action wins.
- ``reference``: exactly what the published checkpoints' own harness (OpenEnv-WolfeClick ``record_battle.py`` with
  ``action_space.parse_llm_action``) accepted, so illegal-action rates compare with its published runs.

``docs/llm.md`` tabulates where the two differ; each row is a test in ``tests/test_game_actions.py``.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Literal, Sequence

from wolfeclick.digits import ascii_int

MAX_MOVES = 4
MAX_SWITCHES = 5

ActionKind = Literal["move", "switch", "team"]
ParserMode = Literal["tolerant", "reference"]
PARSER_MODES: tuple[str, ...] = ("tolerant", "reference")
DEFAULT_PARSER: ParserMode = "tolerant"


def to_id(text: str) -> str:
    """Showdown's ``toID``: lowercase, letters and digits only."""
    return _to_id(str(text))


@functools.lru_cache(maxsize=4096)
def _to_id(text: str) -> str:
    """Memoised: every request names the same few dozen moves and species again (about 2% of a recorded battle's
    Python CPU went to this substitution); bounded, so free text from models cannot grow it."""
    return _NOT_ID.sub("", text.lower())


_NOT_ID = re.compile(r"[^a-z0-9]")


@dataclass(frozen=True)
class LegalAction:
    """One thing a side may do now. ``slot`` is the request's 1-based move index or team position.

    A ``team`` action is a team-preview choice: ``team 3`` leads with the third Pokémon, the rest follow in order.
    """

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

    def ids(self) -> set[str]:
        """The Showdown ids that name this action. Hidden Power is also its typed id without the power
        (``hiddenpowergrass`` for the request's ``Hidden Power Grass 70``), the name poke-env and the v1 prompt use."""
        names = {self.id, to_id(self.name)}
        if self.id == "hiddenpower":
            names.add(re.sub(r"[0-9]+$", "", to_id(self.name)))
        return names


@functools.lru_cache(maxsize=4096)
def _action(kind: ActionKind, name: str, action_id: str, slot: int) -> LegalAction:
    """An action is an immutable value and the same few come back every turn: each is built once (a frozen
    dataclass costs about a microsecond to build, most of what a request's legal set cost)."""
    return LegalAction(kind, name, action_id, slot)


def species_of(details: str) -> str:
    """``'Pikachu, L88, M'`` → ``'Pikachu'``."""
    return details.split(",")[0].strip()


def legal_actions(request: dict[str, Any]) -> list[LegalAction]:
    """All moves (≤4) and switches (≤5) the request allows, moves first, in the request's order.

    A team-preview request offers one ``team N`` action per Pokémon (choose the lead; the rest keep their order).
    A side that must wait has no actions. After Revival Blessing (a forced switch whose active is ``reviving``) the
    switches are the fainted Pokémon, which the move brings back. ``maybeTrapped`` keeps switches (the simulator may still refuse them, and
    the runner then asks again).
    """
    if not request or request.get("wait"):
        return []
    if request.get("teamPreview"):
        return preview_actions(request)
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
            actions.append(_action("move", name, move.get("id") or to_id(name), index))
        actions = actions[:MAX_MOVES]

    trapped = bool(active.get("trapped")) and not force_switch
    # Revival Blessing asks for a "switch" that names a fainted Pokémon to revive, and only a fainted one.
    reviving = force_switch and any(mon.get("active") and mon.get("reviving") for mon in team)
    if not trapped:
        switches = []
        for position, mon in enumerate(team, start=1):
            condition = str(mon.get("condition", ""))
            fainted = condition.endswith(" fnt") or condition == "0 fnt"
            if mon.get("active") or fainted != reviving:
                continue
            name = species_of(str(mon.get("details", mon.get("ident", "?"))))
            switches.append(_action("switch", name, to_id(name), position))
        actions.extend(switches[:MAX_SWITCHES])
    return actions


def preview_actions(request: dict[str, Any]) -> list[LegalAction]:
    """The leads a team-preview request allows: ``team N`` for each Pokémon of the side, in team order."""
    team = (request.get("side") or {}).get("pokemon") or []
    actions = []
    for position, mon in enumerate(team, start=1):
        name = species_of(str(mon.get("details", mon.get("ident", "?"))))
        actions.append(_action("team", name, to_id(name), position))
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


Listed = Sequence[tuple[LegalAction, str]]
"""The options as a prompt listed them: each legal action with the choice text shown for it."""


def parse_action(text: str | None, legal: list[LegalAction], *, mode: str = DEFAULT_PARSER,
                 listed: Listed | None = None) -> ParsedAction:
    """Read the action ``text`` names, in parser ``mode``; ``listed`` is what the prompt offered (default: each
    legal action under its simulator name). Raises ``ValueError`` for an unknown mode (a bug: callers validate)."""
    options = list(listed) if listed is not None else [(a, a.name) for a in legal]
    if mode == "tolerant":
        return _parse_tolerant(text, legal, options)
    if mode == "reference":
        return _parse_reference(text, options)
    raise ValueError(f"unknown parser mode {mode!r} (expected one of {', '.join(PARSER_MODES)})")


def _parse_tolerant(text: str | None, legal: list[LegalAction], options: Listed) -> ParsedAction:
    """The first action object in ``text`` that names a legal action.

    Tolerant about form (key order and case, case of the kind, prose or ``<think>`` blocks around it, an illegal
    object before a legal one), exact about meaning: the kind must agree and the choice must be one of a legal
    action's ids (``LegalAction.ids``) or the id of the choice the prompt listed for it.
    """
    if text is None or not text.strip():
        return ParsedAction(None, "empty output")
    body = _THINK_RE.sub("", text)
    candidates = _json_objects(body) or _json_objects(text)
    if not candidates:
        return ParsedAction(None, "no JSON object in output")
    shown = {action: to_id(choice) for action, choice in options}
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
            if action.kind == kind_id and (choice_id in action.ids() or choice_id == shown.get(action)):
                return ParsedAction(action)
        last_reason = f"{kind_id} {choice!r} is not a legal action now"
    return ParsedAction(None, last_reason)


# The reference's rules (OpenEnv-WolfeClick, action_space.py and record_battle.py), restated:
# 1. drop closed <think>…</think> blocks (case-sensitive), strip, and read the rest as one JSON document;
# 2. failing that, take the first {"action": "move"|"switch", "choice": "…"} object (that key order, nothing else
#    inside; the pattern ignores case, the schema check after it does not) in the text without think blocks, or
#    if there is none, in the raw text; only that first object is tried;
# 3. either way the value must be an object with "action" exactly "move" or "switch" and a string "choice"
#    (other keys are ignored), and the choice must equal a listed option's choice after strip, lower-casing and
#    spaces to hyphens, for an option of that kind.
_REFERENCE_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL)
_REFERENCE_OBJECT_RE = re.compile(r'\{\s*"action"\s*:\s*"(?:move|switch)"\s*,\s*"choice"\s*:\s*"[^"]*"\s*\}',
                                  re.IGNORECASE)


def _reference_key(choice: str) -> str:
    return choice.strip().lower().replace(" ", "-")


def _reference_match(document: str, options: Listed) -> ParsedAction:
    try:
        value = json.loads(document)
    except ValueError:
        return ParsedAction(None, "not a JSON document")
    if not isinstance(value, dict):
        return ParsedAction(None, "the JSON is not an object")
    kind, choice = value.get("action"), value.get("choice")
    if kind not in ("move", "switch") or not isinstance(choice, str):
        return ParsedAction(None, "the JSON does not match {\"action\": \"move\"|\"switch\", \"choice\": str}")
    key = _reference_key(choice)
    for action, shown in options:
        if action.kind == kind and _reference_key(shown) == key:
            return ParsedAction(action)
    return ParsedAction(None, f"{kind} {choice!r} is not a listed option")


def _parse_reference(text: str | None, options: Listed) -> ParsedAction:
    """What the reference's harness accepts for one sample, and the action it plays for it."""
    if text is None or not text.strip():
        return ParsedAction(None, "empty output")
    whole = _reference_match(_REFERENCE_THINK_RE.sub("", text).strip(), options)
    if whole.legal:
        return whole
    stripped = _REFERENCE_THINK_RE.sub("", text).strip()
    found = _REFERENCE_OBJECT_RE.search(stripped) or _REFERENCE_OBJECT_RE.search(text)
    if found is None:
        return ParsedAction(None, f"{whole.reason}, and no {{\"action\", \"choice\"}} object in it")
    return _reference_match(found.group(0), options)


CHOICE_FLAGS = frozenset({"mega", "megax", "megay", "zmove", "ultra", "dynamax", "gigantamax", "max", "terastal",
                          "terastallize"})
"""The words Showdown reads after a move's name (``move thunderbolt terastallize``): never part of the name."""


def split_command(command: str) -> tuple[str, str, tuple[str, ...]] | None:
    """A ``move``/``switch`` choice as ``(kind, target, flags)``: the target is every word after the kind but a
    move's trailing flags (``CHOICE_FLAGS``), so ``switch Raging Bolt`` names Raging Bolt, not Raging. None for any
    other choice (``pass``, ``default``, ``team 1``)."""
    text = command.strip()
    if text.startswith("/choose"):
        text = text[len("/choose"):]
    words = text.split()
    if len(words) < 2 or words[0] not in ("move", "switch"):
        return None
    kind, rest = words[0], words[1:]
    flags: list[str] = []
    while kind == "move" and len(rest) > 1 and rest[-1].lower() in CHOICE_FLAGS:
        flags.insert(0, rest.pop().lower())
    return kind, " ".join(rest), tuple(flags)


def _base_ids(species: str) -> set[str]:
    """The ids a forme's base name may be spelled by: ``Kyurem`` for ``Kyurem-Black``, ``Necrozma`` and
    ``Necrozma-Dusk`` for ``Necrozma-Dusk-Mane`` (random battles name each Pokémon after its base species)."""
    return {to_id(species[:i]) for i, char in enumerate(species) if char == "-" and i > 0}


def find_by_command(command: str, legal: list[LegalAction]) -> LegalAction | None:
    """Map a simulator choice (``move thunderbolt terastallize``, ``switch Raging Bolt``, ``switch 3``, ``move 2``)
    to a legal action, reading it as Showdown does (``Side.choose``), so a baseline's choice is never lost to its
    spelling: the whole target (less a move's flags) by Showdown id; a number is the slot; any ``hiddenpower…`` is
    the Hidden Power move (poke-env says ``hiddenpowerfire`` for the request's ``Hidden Power Fire 70``); a switch
    may name the Pokémon by its name, which random battles set to the base species (poke-env's ``switch Kyurem``
    for a ``Kyurem-Black``), when exactly one legal switch is of that base species."""
    parsed = split_command(command)
    if parsed is None:
        return None
    kind, target, _ = parsed
    options = [action for action in legal if action.kind == kind]
    slot = ascii_int(target, 2)
    if slot is not None:
        return next((action for action in options if action.slot == slot), None)
    wanted = to_id(target)
    if not wanted:
        return None
    for action in options:
        if wanted in action.ids():
            return action
    if kind == "move" and wanted.startswith("hiddenpower"):
        return next((action for action in options if action.id == "hiddenpower"), None)
    if kind == "switch":
        formes = [action for action in options if wanted in _base_ids(action.name)]
        return formes[0] if len(formes) == 1 else None
    return None
