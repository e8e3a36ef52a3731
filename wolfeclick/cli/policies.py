"""``policies``: list every policy kind a spec can name, with its options."""

from __future__ import annotations

import argparse
import sys


def add_policies_parser(commands: argparse._SubParsersAction) -> None:
    listing = commands.add_parser("policies", help="list every policy kind a spec can name, with its options",
                                  description="Every registered kind (built-ins, installed agents from the "
                                              "wolfeclick.policies entry points, py: factories): how its specs are "
                                              "written, whether it needs a GPU, its options with types and defaults.")
    listing.add_argument("--json", action="store_true", help="one JSON object per kind instead of text")


def cmd_policies(args: argparse.Namespace) -> int:
    import json

    from wolfeclick.policies.registry import default_registry, describe_kinds

    registry = default_registry()
    kinds = registry.kinds()
    if args.json:
        for kind in kinds:
            print(json.dumps({"name": kind.name, "form": kind.spec_form(), "description": kind.description,
                              "gpu": kind.gpu, "source": kind.source, "buildable": kind.buildable,
                              "options": [{"name": o.name, "type": o.type_name(), "default": o.default,
                                           "choices": list(o.choices) if o.choices else None, "help": o.help}
                                          for o in kind.option_list()]}, default=str))
    else:
        print(describe_kinds(kinds))
    for problem in registry.problems:
        print(f"warning: {problem}", file=sys.stderr)
    return 0
