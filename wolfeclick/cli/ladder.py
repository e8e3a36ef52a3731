"""``ladder``: play an Arena policy on a Showdown server and record every battle."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.cli.ctrl_c import CtrlC
from wolfeclick.cli.options import COUNT, TURNS, add_llm_options, llm_options
from wolfeclick.paths import recordings_dir


def add_ladder_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from wolfeclick.ladder.credentials import PASSWORD_ENV

    ladder = commands.add_parser(
        "ladder", help="play an Arena policy on a Showdown server and record every battle", allow_abbrev=False,
        description="Log in to a Showdown server with poke-env's client and play N battles with --policy, one after "
                    "another, by accepting challenges, challenging a user or searching the ladder. Every battle is "
                    "saved as a recording (source: ladder; the server's seed is unknown and it keeps the input "
                    "log, so it replays in the viewer but cannot be re-simulated); prints each path. The password "
                    f"comes from --password-file or ${PASSWORD_ENV}, never from the command line.")
    ladder.add_argument("--server", required=True, metavar="URL", help="ws://HOST:PORT/showdown/websocket")
    ladder.add_argument("--policy", required=True, help="the Arena policy spec that plays (random, heuristic, llm:…)")
    ladder.add_argument("--format", default=DEFAULT_FORMAT, help=f"Showdown format (default {DEFAULT_FORMAT})")
    ladder.add_argument("--n", type=COUNT, default=1, help="number of battles")
    how = ladder.add_mutually_exclusive_group(required=True)
    how.add_argument("--accept-challenges", action="store_true", help="accept challenges in --format")
    how.add_argument("--challenge", metavar="USER", default=None, help="challenge this user, N times")
    how.add_argument("--search", action="store_true", help="search the ladder for opponents")
    ladder.add_argument("--from", dest="from_user", metavar="USER", default=None,
                        help="with --accept-challenges: only this user's challenges")
    ladder.add_argument("--user", default=None, help="user name to log in as (default: a fresh Arena… guest name, "
                                                     "which only a --no-security server accepts without a password)")
    ladder.add_argument("--password-file", type=Path, default=None, metavar="FILE",
                        help=f"file whose first line is --user's password (else ${PASSWORD_ENV})")
    ladder.add_argument("--login-server", default=None, metavar="URL",
                        help="the login server that checks the password (default Showdown's)")
    ladder.add_argument("--team", type=Path, default=None, metavar="FILE",
                        help="our team for a format that plays given teams (Showdown export or packed)")
    ladder.add_argument("--timeout", type=float, default=300.0,
                        help="seconds a battle may go without a message from the server (then aborted)")
    ladder.add_argument("--wait", type=float, default=120.0,
                        help="seconds to wait for the login, a challenge, an opponent or a match")
    ladder.add_argument("--max-turns", type=TURNS, default=DEFAULT_MAX_TURNS,
                        help="forfeit a battle past this turn (recorded turn_limit)")
    ladder.add_argument("--out", type=Path, default=recordings_dir(), help="directory for the recordings")
    add_llm_options(ladder)


def cmd_ladder(args: argparse.Namespace) -> int:
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.battle.store import save_recording
    from wolfeclick.ladder.client import DEFAULT_LOGIN_SERVER
    from wolfeclick.ladder.credentials import read_password
    from wolfeclick.ladder.play import LadderOptions, LadderSession, Mode

    if not (args.timeout > 0 and args.wait > 0):
        print("error: --timeout and --wait must be positive numbers of seconds", file=sys.stderr)
        return 2
    password = read_password(args.password_file)
    if password is not None and not args.user:
        print("error: a password needs --user", file=sys.stderr)
        return 2
    team = None
    if args.team is not None:
        from wolfeclick.battle.teams import TeamSources, prepare_deal

        deal = asyncio.run(prepare_deal(TeamSources(args.team, args.team), args.format))  # illegal: one line
        team = deal.p1[0].info() if deal else None
    mode: Mode = "accept" if args.accept_challenges else "challenge" if args.challenge else "search"
    options = LadderOptions(server=args.server, format=args.format, n=args.n, mode=mode,
                            opponent=args.challenge or args.from_user, username=args.user, password=password,
                            login_server=args.login_server or DEFAULT_LOGIN_SERVER, team=team, timeout=args.timeout,
                            wait=args.wait, max_turns=args.max_turns)
    policy = make_policy(args.policy, **llm_options(args))
    aborted = 0

    def saved(recording) -> None:  # type: ignore[no-untyped-def]
        nonlocal aborted
        print(save_recording(recording, args.out), flush=True)
        if recording.result.reason == "aborted":
            aborted += 1
            print(f"warning: {recording.id} aborted: {recording.result.error}", file=sys.stderr, flush=True)

    async def go() -> tuple[object, bool]:
        stop = asyncio.Event()
        with CtrlC(stop) as ctrl_c:
            summary = await LadderSession(policy, options, on_recording=saved, stop=stop).run()
        return summary, ctrl_c.pressed

    summary, interrupted = asyncio.run(go())
    played = len(summary.recordings)  # type: ignore[attr-defined]
    if interrupted:
        print(f"interrupted: {played} battles saved, {args.n - played} not played", file=sys.stderr)
        return 130
    if played < args.n:
        print(f"error: {played} of {args.n} battles played; {summary.stopped}", file=sys.stderr)  # type: ignore[attr-defined]
        return 1
    return 1 if aborted else 0
