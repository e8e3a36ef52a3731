"""A fixed discrete action layout over a singles request: what RL libraries (``Discrete(n)`` + a mask) need.

The text and index actions name the legal actions of the moment, whose count changes every turn; a policy network
wants the same ``n`` outputs at every step, each meaning the same thing. The layout, ``ACTION_COUNT`` = 13 slots:

- ``0..3``: ``move 1``..``move 4`` (the request's move slots, in the request's order);
- ``4..8``: ``switch 2``..``switch 6`` (the request's team positions; the active is position 1 in singles, and a
  Revival Blessing's "switch" names a fainted position the same way);
- ``9..12``: ``move 1``..``move 4`` with the format's gimmick (Terastallize, Mega Evolution, Dynamax or a Z-Move,
  whichever the request offers for that move).

The mask is computed from the legal actions (the simulator's request less the choices it already refused), so a
masked-in action is always one the text action could have named. Pure functions over the request and legal list.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wolfeclick.game.actions import MAX_MOVES, MAX_SWITCHES, LegalAction

MOVE_BASE = 0
SWITCH_BASE = MAX_MOVES
GIMMICK_BASE = MAX_MOVES + MAX_SWITCHES
ACTION_COUNT = GIMMICK_BASE + MAX_MOVES
"""13: four moves, five switches, four moves with the gimmick."""

ACTION_NAMES: tuple[str, ...] = (
    *(f"move {k}" for k in range(1, MAX_MOVES + 1)),
    *(f"switch {p}" for p in range(2, MAX_SWITCHES + 2)),
    *(f"move {k} +gimmick" for k in range(1, MAX_MOVES + 1)),
)
"""What each index means, for docs, logs and tests."""


def gimmick(request: dict[str, Any], slot: int) -> str | None:
    """The choice suffix the request offers for move ``slot`` (1-based): ``terastallize``, ``mega``, ``dynamax``,
    ``zmove``, or None. A Z-Move is offered per move (``canZMove`` lists one entry per move, null where none)."""
    active = (request.get("active") or [{}])[0] if request.get("active") else {}
    if active.get("canTerastallize"):
        return "terastallize"
    if active.get("canMegaEvo"):
        return "mega"
    if active.get("canDynamax"):
        return "dynamax"
    zmoves = active.get("canZMove")
    if isinstance(zmoves, list) and 0 < slot <= len(zmoves) and zmoves[slot - 1]:
        return "zmove"
    return None


def index_of(action: LegalAction) -> int | None:
    """The plain (no gimmick) slot of a legal move or switch; None for what the layout has no slot for."""
    if action.kind == "move" and 1 <= action.slot <= MAX_MOVES:
        return MOVE_BASE + action.slot - 1
    if action.kind == "switch" and 2 <= action.slot <= MAX_SWITCHES + 1:
        return SWITCH_BASE + action.slot - 2
    return None


def action_mask(request: dict[str, Any], legal: Sequence[LegalAction]) -> np.ndarray:
    """``int8`` of length ``ACTION_COUNT``: 1 where the index is a legal choice now."""
    mask = np.zeros(ACTION_COUNT, dtype=np.int8)
    for action in legal:
        index = index_of(action)
        if index is None:
            continue
        mask[index] = 1
        if action.kind == "move" and gimmick(request, action.slot):
            mask[GIMMICK_BASE + action.slot - 1] = 1
    return mask


def resolve(index: int, request: dict[str, Any], legal: Sequence[LegalAction]) -> tuple[LegalAction, str] | None:
    """The legal action and the simulator command an index stands for, or None when it is masked out."""
    if not 0 <= index < ACTION_COUNT:
        return None
    plain = index - GIMMICK_BASE + MOVE_BASE if index >= GIMMICK_BASE else index
    for action in legal:
        if index_of(action) == plain:
            if index < GIMMICK_BASE:
                return action, action.command()
            extra = gimmick(request, action.slot)
            return (action, f"{action.command()} {extra}") if extra else None
    return None
