"""``serve-env``: the training env over OpenEnv; its options (``options.add_serve_arguments``) are ``server``'s too."""

from __future__ import annotations

import argparse

from wolfeclick.cli.options import SERVE_DESCRIPTION, add_serve_arguments, skip_openenv_web_ui


def add_serve_env_parser(commands: argparse._SubParsersAction) -> None:
    serve_env = commands.add_parser("serve-env", help="serve the training env over OpenEnv (HTTP + WebSocket)",
                                    description=SERVE_DESCRIPTION)
    add_serve_arguments(serve_env)


def cmd_serve_env(args: argparse.Namespace) -> int:
    from wolfeclick.extras import require

    require("train", "serve-env")
    skip_openenv_web_ui()
    from wolfeclick.env.server import serve_from_args

    return serve_from_args(args)
