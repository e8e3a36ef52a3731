"""``app``: serve the Gradio app (as ``python app.py`` does)."""

from __future__ import annotations

import argparse
import os

from wolfeclick.cli.options import bounded_int


def add_app_parser(commands: argparse._SubParsersAction) -> None:
    app = commands.add_parser("app", help="serve the Gradio app (as python app.py does)",
                              description="Serves Live, Replays, Compare and Leaderboard on GRADIO_SERVER_NAME:"
                                          "GRADIO_SERVER_PORT (default 127.0.0.1:7860).")
    app.add_argument("--port", type=bounded_int(1, 65535), default=None,
                     help="the port to listen on (default: $GRADIO_SERVER_PORT, else 7860)")
    app.add_argument("--host", default=None,
                     help="the address to listen on (default: $GRADIO_SERVER_NAME, else 127.0.0.1; 0.0.0.0 serves "
                          "every interface: see docs/app.md, Trust, before you open it to others)")


def cmd_app(args: argparse.Namespace) -> int:
    from wolfeclick.ui.app_process import serve

    # Gradio reads these when launch() is not told: the options are the variables, said on the command line
    if args.port is not None:
        os.environ["GRADIO_SERVER_PORT"] = str(args.port)
    if args.host is not None:
        os.environ["GRADIO_SERVER_NAME"] = args.host
    serve()
    return 0
