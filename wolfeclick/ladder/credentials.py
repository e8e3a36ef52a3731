"""A server password, read from a file or the environment and never shown.

Passwords never come from the command line (where every user of the machine can read them in the process list) and
never reach a recording, a log or the terminal: ``Secret`` hides its value from ``repr``/``str``, and only the
login request (``wolfeclick.ladder.client``) ever reads it.
"""

from __future__ import annotations

from pathlib import Path

from wolfeclick.errors import InputError
from wolfeclick.settings import PASSWORD_VARIABLE, Settings, settings

PASSWORD_ENV = PASSWORD_VARIABLE
"""The environment variable read (by ``wolfeclick.settings``) for the password when no ``--password-file`` is
given."""


class Secret:
    """A value that prints as ``***``; ``reveal()`` is the one way to read it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        """``text`` with the secret (if it appears at all) replaced by ``***``: for messages from elsewhere."""
        return text.replace(self._value, "***") if self._value else text

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__


def read_password(path: Path | None, environ: Settings | None = None) -> Secret | None:
    """The password from ``path`` (its first line), else from ``$WOLFECLICK_SHOWDOWN_PASSWORD``, else None."""
    if path is not None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc.__class__.__name__
            raise InputError(f"cannot read the password file {path}: {reason}") from None
        if not lines or not lines[0]:
            raise InputError(f"the password file {path} is empty")
        return Secret(lines[0])
    value = (environ or settings()).showdown_password
    return Secret(value) if value else None
