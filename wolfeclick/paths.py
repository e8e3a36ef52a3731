"""The two folders the Arena writes to, read from the environment in this one place.

``$WOLFECLICK_RECORDINGS`` (default ``./recordings``) holds recordings, rescores and uploads; ``$WOLFECLICK_RESULTS``
(default ``./results``) holds tournaments and the history index. Both defaults are relative to the working
directory, so an installed package writes beside the user's project, never into site-packages; in a checkout,
``make run`` and the CLI run from its root and find its sample recordings. Every layer may import this module; the
variables themselves are read in ``wolfeclick.settings``, with every other one.
"""

from __future__ import annotations

from pathlib import Path

from wolfeclick.settings import settings

__all__ = ["recordings_dir", "results_dir"]


def recordings_dir() -> Path:
    """``$WOLFECLICK_RECORDINGS``, else ``recordings`` in the working directory (absolute)."""
    return settings().recordings


def results_dir() -> Path:
    """``$WOLFECLICK_RESULTS``, else ``results`` in the working directory (absolute)."""
    return settings().results
