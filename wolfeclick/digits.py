"""ASCII-only whole numbers from text: the one way the project reads digits it did not write itself.

``str.isdigit()`` is true for ``'²'``, ``'①'`` and ``'٣'``, and ``int()`` then either raises (``int('²')``) or
reads a number nobody typed (``int('٣')`` is 3); an unbounded run of digits makes ``int()`` slow and an ``os``
call overflow. Every parser of names, query strings, protocol fields and file names goes through here instead.
Every layer may import this module; it imports nothing of the project.
"""

from __future__ import annotations

import re

__all__ = ["ascii_int", "is_ascii_digits", "MAX_DIGITS"]

MAX_DIGITS = 18
"""The default bound: any 18-digit number fits in 63 bits (what the recordings and the OS accept)."""
_DIGITS = re.compile(r"[0-9]+")


def is_ascii_digits(text: object, max_digits: int = MAX_DIGITS) -> bool:
    """True when ``text`` is a string of 1 to ``max_digits`` ASCII digits, nothing else (no sign, no spaces)."""
    return isinstance(text, str) and 0 < len(text) <= max_digits and _DIGITS.fullmatch(text) is not None


def ascii_int(text: object, max_digits: int = MAX_DIGITS, *, signed: bool = False) -> int | None:
    """The whole number ``text`` spells in ASCII digits (a leading ``-`` too when ``signed``), else None.

    Surrounding whitespace is not stripped: callers that accept it strip first, so what counts as a number is
    written at the call."""
    if not isinstance(text, str):
        return None
    negative = signed and text.startswith("-")
    body = text[1:] if negative else text
    if not is_ascii_digits(body, max_digits):
        return None
    return -int(body) if negative else int(body)
