"""The ``wolfeclick`` command, one module per command group as pip's commands are laid out (docs/architecture.md).

``run`` is the command's process entry (the console script ``wolfeclick.cli:run`` and ``python -m wolfeclick``);
``main`` is the command itself, safe to call in a process that goes on. Both load the commands when called, so
that importing ``cli.options`` (which ``env/server.py``'s ``server`` script shares) loads none of them."""

from __future__ import annotations

import gc
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from wolfeclick.cli.main_parser import main as run

    return run(argv)


def run() -> int:
    """``main()`` as the whole process, which ends after it: nothing is collected at exit. The interpreter's last
    collection walked every object the command made (the simulator's replies, recordings, the model stack) for
    nothing, about a third of a CPU second for a one-battle ``record`` (docs/testing.md); atexit handlers and weakref
    finalizers still run. Not in ``main``, which tests and scripts call in a process that goes on collecting."""
    try:
        return main()
    finally:
        gc.freeze()
