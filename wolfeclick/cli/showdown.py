"""``setup`` and ``server``: install the pinned Showdown simulator, and run it as a local server for ``ladder``."""

from __future__ import annotations

import argparse
import sys

from wolfeclick.cli.options import bounded_int


def add_server_parser(commands: argparse._SubParsersAction) -> None:
    server = commands.add_parser(
        "server", help="run a local no-security Showdown server on 127.0.0.1 (for ladder)",
        description="Start pokemon-showdown from node_modules with --no-security, bound to 127.0.0.1 only (never "
                    "beyond this machine), from a private config folder; print its websocket URL; stop on Ctrl-C.")
    server.add_argument("--port", type=bounded_int(1024, 65535), default=None, help="port (default: a free one)")
    server.add_argument("--lean", action="store_true", help="no child processes: quicker to start, less memory")


def cmd_server(args: argparse.Namespace) -> int:
    import time

    from wolfeclick.sim.server import LocalServer

    with LocalServer(port=args.port, lean=args.lean) as server:
        print(server.url, flush=True)
        try:
            while server.alive:
                time.sleep(0.5)
        except KeyboardInterrupt:
            return 130
    print("error: the local Showdown server exited", file=sys.stderr)
    return 1


def add_setup_parser(commands: argparse._SubParsersAction) -> None:
    commands.add_parser("setup", help="install the pinned Pokémon Showdown simulator (npm ci, once; battles do it "
                                      "on first use otherwise)",
                        description="Installs the simulator's Node packages from the lock shipped in the package into "
                                    "$WOLFECLICK_CACHE (default ~/.cache/wolfeclick) and prints where. Needs Node.js "
                                    ">= 20 and npm; does nothing when it is already installed.")


def cmd_setup(args: argparse.Namespace) -> int:
    import asyncio

    from wolfeclick.settings import settings
    from wolfeclick.sim.install import ensure_showdown
    from wolfeclick.sim.process import node_executable
    from wolfeclick.sim.snapshot import ensure_blob

    package = ensure_showdown()
    if settings().sim_snapshot:  # the startup snapshot too, so that no first battle waits for it (none: plain starts)
        asyncio.run(ensure_blob(node_executable(), package))
    print(package)
    return 0
