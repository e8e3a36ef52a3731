"""The two folders the Arena writes to, read from the environment in this one place.

``$WOLFECLICK_RECORDINGS`` (default ``./recordings``) holds recordings, rescores and uploads; ``$WOLFECLICK_RESULTS``
(default ``./results``) holds tournaments and the history index. Both defaults are relative to the working
directory, so an installed package writes beside the user's project, never into site-packages; in a checkout,
``make run`` and the CLI run from its root and find its sample recordings. Every layer may import this module.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["recordings_dir", "results_dir"]


def recordings_dir() -> Path:
    """``$WOLFECLICK_RECORDINGS``, else ``recordings`` in the working directory (absolute)."""
    return Path(os.environ.get("WOLFECLICK_RECORDINGS") or "recordings").expanduser().resolve()


def results_dir() -> Path:
    """``$WOLFECLICK_RESULTS``, else ``results`` in the working directory (absolute)."""
    return Path(os.environ.get("WOLFECLICK_RESULTS") or "results").expanduser().resolve()
