"""OpenEnv's entry point (``openenv validate`` looks for ``server/app.py`` with ``main()``): the WolfeClick env server,
``python -m wolfeclick serve-env`` with the same options. ``app`` is the FastAPI app with the default settings."""

from __future__ import annotations

import sys

from wolfeclick.cli.env import server_main as serve_env


def main(argv: list[str] | None = None) -> int:
    """Start the server (``--host``, ``--port``, ``--opponent``, ``--format``… as ``serve-env``)."""
    return serve_env(argv)


def __getattr__(name: str):
    if name == "app":
        from wolfeclick.env import server

        return server.app
    raise AttributeError(f"module 'server.app' has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
