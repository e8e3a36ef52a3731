"""``serve-env``: the training env over OpenEnv; its options (``options.add_serve_arguments``) are ``server``'s too."""

from __future__ import annotations

import argparse
import asyncio
import sys

from wolfeclick.cli.options import SERVE_DESCRIPTION, add_serve_arguments, run_command, skip_openenv_web_ui, team_sources


def add_serve_env_parser(commands: argparse._SubParsersAction) -> None:
    serve_env = commands.add_parser("serve-env", help="serve the training env over OpenEnv (HTTP + WebSocket)",
                                    description=SERVE_DESCRIPTION)
    add_serve_arguments(serve_env)


def cmd_serve_env(args: argparse.Namespace) -> int:
    from wolfeclick.extras import require

    require("train", "serve-env")
    skip_openenv_web_ui()
    return serve_from_args(args)


def serve_from_args(args: argparse.Namespace) -> int:
    """``serve-env`` (the CLI's command and the ``server`` console script): check the opponent and the teams, then
    serve until interrupted."""
    import uvicorn

    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.env.server import create_server_app

    make_policy(args.opponent)  # an unknown spec fails now, in one line, not at the first reset
    recordings = False if not args.recordings else args.out
    teams = team_sources(args)
    if teams.given:  # a team that is not legal in the format fails now, in one line, not at the first reset
        from wolfeclick.battle.teams import prepare_deal

        asyncio.run(prepare_deal(teams, args.format))
    app = create_server_app(opponent=args.opponent, format=args.format, prompt=args.prompt, max_turns=args.max_turns,
                            recordings=recordings, max_sessions=args.max_sessions,
                            teams=teams if teams.given else None, opponents=tuple(args.opponents),
                            max_per_client=args.max_per_client)
    print(f"serving the WolfeClick env on http://{args.host}:{args.port} (WebSocket /ws)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def server_main(argv: list[str] | None = None) -> int:
    """``serve-env`` as a console script (OpenEnv's ``server/app.py`` entry): same options, same app, the same
    one-line errors as the CLI."""
    parser = argparse.ArgumentParser(prog="server", description=SERVE_DESCRIPTION)
    add_serve_arguments(parser)
    skip_openenv_web_ui()
    return run_command(serve_from_args, parser.parse_args(sys.argv[1:] if argv is None else argv))
