"""The two sides of a singles battle, as Showdown names them: one type and one tuple for every layer.

Every layer may import this module; it imports nothing of the project.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

__all__ = ["Side", "SIDES", "other", "is_side"]

Side = Literal["p1", "p2"]
SIDES: tuple[Side, Side] = ("p1", "p2")


def other(side: Side) -> Side:
    """The opponent's side."""
    return "p2" if side == "p1" else "p1"


def is_side(value: object) -> TypeGuard[Side]:
    """Whether ``value`` is ``"p1"`` or ``"p2"`` (narrows a ``str`` to ``Side``)."""
    return value in SIDES
