"""The ``wolfeclick`` command, one module per command group as pip's commands are laid out (docs/architecture.md).

``main`` is the console script (``wolfeclick.cli:main``); it loads the commands when called, so that importing
``cli.options`` (which ``env/server.py``'s ``server`` script shares) loads none of them."""

from __future__ import annotations

from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from wolfeclick.cli.main_parser import main as run

    return run(argv)
