"""``wolfeclick`` (or ``python -m wolfeclick``): record battles, validate and re-simulate recordings, run tournaments, import, export.

Thin: parse arguments, call the library, print paths and one-line errors. Every command has ``--help``.

This module: the top-level parser, built from each command module's ``add_*_parser`` in the order ``--help``
lists them, and ``COMMANDS``, which runs the one asked for.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from wolfeclick.cli import analysis, app, env, interop, ladder, play, policies, recordings, showdown, tournament, yardstick
from wolfeclick.cli.options import run_command

EXIT_STATUSES = """exit statuses:
  0    everything asked for was done
  1    some battles ended aborted, recordings are invalid or differ on resim, a file could not be saved, or the
       simulator failed
  2    usage error: a bad argument, spec, format or file name (nothing was played)
  3    a bug in WolfeClick Arena (a traceback is printed; please report it)
  130  interrupted (Ctrl-C): record saves its battles in flight as aborted; bench --resume finishes the rest"""


def build_parser() -> argparse.ArgumentParser:
    from wolfeclick.battle.policy_specs import spec_help

    specs = (f"policy specs (--p1, --players, --policy…):\n  {spec_help(installed=False)}\n  or an installed "
             "agent's name; `wolfeclick policies` lists every kind with its options\n\n")
    parser = argparse.ArgumentParser(prog="wolfeclick", description=__doc__.split("\n")[0],
                                     epilog=specs + EXIT_STATUSES, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    play.add_record_parser(commands)
    recordings.add_validate_parser(commands)
    recordings.add_resim_parser(commands)
    recordings.add_schema_parser(commands)
    tournament.add_bench_parser(commands)
    play.add_branch_parser(commands)
    analysis.add_rescore_parser(commands)
    analysis.add_analyse_parser(commands)
    tournament.add_leaderboard_parser(commands)
    yardstick.add_gauntlet_parser(commands)
    yardstick.add_reference_ladder_parser(commands)
    interop.add_import_parser(commands)
    interop.add_export_parser(commands)
    env.add_serve_env_parser(commands)
    ladder.add_ladder_parser(commands)
    showdown.add_server_parser(commands)
    showdown.add_setup_parser(commands)
    policies.add_policies_parser(commands)
    app.add_app_parser(commands)
    return parser


COMMANDS = {"setup": showdown.cmd_setup, "app": app.cmd_app, "policies": policies.cmd_policies, "ladder": ladder.cmd_ladder,
            "server": showdown.cmd_server, "record": play.cmd_record, "validate": recordings.cmd_validate,
            "resim": recordings.cmd_resim, "schema": recordings.cmd_schema, "bench": tournament.cmd_bench,
            "branch": play.cmd_branch, "rescore": analysis.cmd_rescore, "analyse": analysis.cmd_analyse,
            "leaderboard": tournament.cmd_leaderboard, "import": interop.cmd_import, "export": interop.cmd_export,
            "serve-env": env.cmd_serve_env, "gauntlet": yardstick.cmd_gauntlet,
            "reference-ladder": yardstick.cmd_reference_ladder}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(COMMANDS[args.command], args)
