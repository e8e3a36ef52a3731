"""The options several commands take, and how a command's outcome becomes an exit code: one home, so that the CLI
and the console scripts beside it (``env/server.py``'s ``server``) parse and fail the same way without importing
each other. Argparse only: importing this loads none of the commands, and of the library only the recording schema
(for its seed and turn limits)."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from wolfeclick.battle.schema import MAX_SEED, MAX_TURNS
from wolfeclick.errors import WolfeClickError


def run_command(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run one command: a ``WolfeClickError`` (what the user asked could not be done) is its one line and exit code;
    anything else is a bug and shows its traceback."""
    try:
        return command(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except WolfeClickError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception:  # anything else is ours to fix: show where it broke
        traceback.print_exc()
        print("error: this is a bug in WolfeClick Arena, please report it with the traceback above", file=sys.stderr)
        return 3


def add_team_options(parser: argparse.ArgumentParser, *, seats: bool = True) -> None:
    group = parser.add_argument_group("teams (formats that play given teams: gen9ou, gen9ubers, gen4ou, gen1ou, …)")
    if seats:
        group.add_argument("--team1", type=Path, default=None, metavar="FILE",
                           help="p1's team: Showdown export text or a packed team")
        group.add_argument("--team2", type=Path, default=None, metavar="FILE", help="p2's team")
    group.add_argument("--teams", type=Path, default=None, metavar="DIR",
                       help="a pool folder of team files (*.txt, *.team, *.paste); each battle deals each seat "
                            "one of them from the battle seed" + (" (seats without --team1/--team2)" if seats else ""))


def team_sources(args: argparse.Namespace) -> Any:  # a TeamSources (imported lazily, like the rest of the library)
    from wolfeclick.battle.teams import TeamSources

    return TeamSources(getattr(args, "team1", None), getattr(args, "team2", None), args.teams)


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a plain integer in [low, high], refused in one usage line otherwise (no silent clamping)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range; expected {low} to {high}")
        return value

    parse.__name__ = "integer"
    return parse


def skip_openenv_web_ui() -> None:
    """Before ``env.server`` is imported: openenv-core imports gradio for an optional web UI that the env server
    never mounts; gradio's import is most of the start-up time, and openenv-core treats a missing gradio as "no web
    UI" (``ENABLE_WEB_INTERFACE=1`` keeps it)."""
    import os

    if "gradio" not in sys.modules and os.environ.get("ENABLE_WEB_INTERFACE", "").lower() not in ("1", "true", "yes"):
        sys.modules["gradio"] = None  # type: ignore[assignment]


SERVE_DESCRIPTION = ("An OpenEnv server (openenv-core): POST /reset, POST /step, GET /state, GET /schema, GET /health, "
                     "WS /ws; one battle per session. Every episode is saved as a recording (source: training).")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """``serve-env``'s options (the CLI's command and the ``server`` console script take the same)."""
    from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS

    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=bounded_int(1, 65535), default=8001, help="port (default 8001)")
    parser.add_argument("--opponent", default="random", help="default opponent spec (a reset may name another)")
    parser.add_argument("--format", default=DEFAULT_FORMAT, help=f"default format (default {DEFAULT_FORMAT})")
    parser.add_argument("--prompt", default="wolfeclick-v1", help="prompt profile of the observation text")
    parser.add_argument("--max-turns", type=TURNS, default=DEFAULT_MAX_TURNS, help="truncate battles after this turn")
    parser.add_argument("--max-sessions", type=bounded_int(1, 4096), default=32, help="battles in flight at once")
    parser.add_argument("--max-per-client", type=bounded_int(1, 4096), default=None,
                        help="battles (HTTP battles and WebSocket sessions) one client address may hold at once "
                             "(default: half of --max-sessions)")
    parser.add_argument("--opponents", type=lambda text: [p.strip() for p in text.split(",") if p.strip()],
                        default=[], help="more opponent specs a client's reset may name, comma separated (besides "
                                         "--opponent and the app's served baselines; nothing else is ever built)")
    parser.add_argument("--out", type=Path, default=None,
                        help="directory for the recordings (default $WOLFECLICK_RECORDINGS or recordings)")
    parser.add_argument("--no-recordings", dest="recordings", action="store_false",
                        help="do not save episodes as recordings")
    add_team_options(parser)


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    """The checkpoint kinds' options from the policy registry, as flags (each also written ``llm:…?mode=…``)."""
    from wolfeclick.policies.registry import default_registry

    options = {o.name: o for o in default_registry().checkpoint_options()}
    group = parser.add_argument_group("checkpoint options (llm:/preset: specs only)")
    for name, default in (("mode", "score"), ("quant", None), ("profile", None), ("temperature", 0.0),
                          ("parser", None)):
        option = options[name]
        group.add_argument(f"--{name}", type=option.type, choices=option.choices, default=default, help=option.help)


def llm_options(args: argparse.Namespace) -> dict:
    return {"mode": args.mode, "quant": args.quant, "profile": args.profile, "temperature": args.temperature,
            "parser": args.parser}


MAX_BATTLES = 1_000_000
"""At most this many battles (or pairs) per command."""


SEED = bounded_int(0, MAX_SEED - MAX_BATTLES)
COUNT = bounded_int(1, MAX_BATTLES)
CONCURRENCY = bounded_int(1, 256)
TURNS = bounded_int(1, MAX_TURNS)
