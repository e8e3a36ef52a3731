"""The project's one error family.

``WolfeClickError`` is for what a user did wrong or what the outside world refused (a malformed recording, an
unknown checkpoint, a dead simulator, a full disk while saving): its message is one line fit to show a person, and
the CLI and the app show exactly that line. Anything else that escapes is a bug and is shown with its traceback.
Every layer may import this module; it imports nothing of the project.
"""

from __future__ import annotations


class WolfeClickError(Exception):
    """Base of every user-facing error; ``str(error)`` is one line."""

    exit_code = 2
    """What the CLI exits with when this error ends a command (2: the request itself was wrong)."""

    def __str__(self) -> str:
        text = super().__str__()
        return text.splitlines()[0] if text else self.__class__.__name__


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (or its class name), for one-line reports."""
    text = str(exc)
    return text.splitlines()[0] if text.strip() else exc.__class__.__name__


def whole_on_one_line(exc: BaseException, limit: int = 300) -> str:
    """The whole message folded onto one line and capped, for a page's status line: where the detail is on later
    lines (a pydantic error's first line only counts them), the first line alone would say nothing."""
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return text[:limit]


class InputError(WolfeClickError, ValueError):
    """An argument, option or file the user gave is not acceptable (a bad count, a bad config, a foreign file)."""


class StorageError(WolfeClickError, OSError):
    """A file could not be written or read (a full disk, a read-only folder); says which file and why."""

    exit_code = 1
