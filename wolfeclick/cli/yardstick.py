"""``gauntlet`` and ``reference-ladder``: rate a policy on the shipped reference ladder's fixed scale, and rebuild
that ladder (a group of its own: the ``ladder`` command plays on Showdown servers, these play the yardstick)."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from pathlib import Path

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.cli.options import CONCURRENCY, COUNT, SEED, TURNS, add_llm_options, bounded_int, llm_options
from wolfeclick.paths import results_dir


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{value:g} is out of range; expected a positive number of rating points")
    return value


def add_gauntlet_parser(commands: argparse._SubParsersAction) -> None:
    from wolfeclick.arena.yardstick_plan import DEFAULT_MAX_BATTLES, DEFAULT_WIDTH, STEP_PAIRS

    gauntlet = commands.add_parser(
        "gauntlet", help="rate a policy on the reference ladder's fixed scale (random = 1000)",
        description="Play SPEC against the rungs of the shipped reference ladder (docs/yardstick.md) nearest its "
                    f"strength, {STEP_PAIRS} seat-swapped pairs at a time, starting at the middle rung and moving "
                    "to the rung nearest its current rating; stop once its 95% interval is narrower than --width "
                    "or at --max-battles. Prints its rating on the ladder's scale, the interval and the battles it "
                    "took. Every step is a tournament under --results, so the battles join the history; the same "
                    "command again reads them back (same seed, same battles, same rating).")
    gauntlet.add_argument("spec", help="the policy to rate (random, heuristic, llm:…, py:…, an installed agent)")
    gauntlet.add_argument("--format", default=DEFAULT_FORMAT,
                          help=f"a format the ladder rates (default {DEFAULT_FORMAT})")
    gauntlet.add_argument("--width", type=_positive, default=DEFAULT_WIDTH,
                          help=f"stop once the 95%% interval is narrower than this (default {DEFAULT_WIDTH:g} points)")
    gauntlet.add_argument("--max-battles", type=bounded_int(2, 100_000), default=DEFAULT_MAX_BATTLES,
                          help=f"the battle cap (default {DEFAULT_MAX_BATTLES})")
    gauntlet.add_argument("--seed", type=SEED, default=0, help="every step's battle seeds derive from it (default 0)")
    gauntlet.add_argument("--concurrency", type=CONCURRENCY, default=1, help="battles in flight at once")
    gauntlet.add_argument("--max-turns", type=TURNS, default=DEFAULT_MAX_TURNS, help="stop a battle after this turn")
    gauntlet.add_argument("--results", type=Path, default=results_dir(), help="results directory (default results)")
    gauntlet.add_argument("--no-recordings", dest="recordings", action="store_false",
                          help="do not keep a recording of each battle")
    gauntlet.add_argument("--ladder", type=Path, default=None, metavar="FILE",
                          help="another reference ladder table (default: the one shipped with the package)")
    gauntlet.add_argument("--json", type=Path, default=None, help="also write the result as JSON here")
    add_llm_options(gauntlet)


def cmd_gauntlet(args: argparse.Namespace) -> int:
    from wolfeclick.arena.gauntlet import Step, gauntlet_text, run_gauntlet
    from wolfeclick.arena.yardstick import load_ladder
    from wolfeclick.battle.store import write_atomic

    ladder = load_ladder(args.ladder)
    table = ladder.table(args.format)  # an unrated format: one line before anything plays

    def stepped(step: Step) -> None:
        print(f"vs {step.rung}: {step.battles} battles → {step.estimate.text()} after {step.estimate.battles}",
              file=sys.stderr)

    result = asyncio.run(run_gauntlet(args.spec, ladder, args.format, args.results, width=args.width,
                                      max_battles=args.max_battles, seed=args.seed, concurrency=args.concurrency,
                                      max_turns=args.max_turns, keep_recordings=args.recordings,
                                      llm_options=llm_options(args), on_step=stepped))
    print(gauntlet_text(result, table))
    if args.json is not None:
        write_atomic(args.json, json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n")
    return 0


def add_reference_ladder_parser(commands: argparse._SubParsersAction) -> None:
    from wolfeclick.arena.yardstick_plan import LADDER_EXTRA_PAIRS, LADDER_FORMATS, LADDER_PAIRS, LADDER_SEED

    ladder = commands.add_parser(
        "reference-ladder", help="print the shipped reference ladder, or rebuild it (--rebuild)",
        description="Without --rebuild: print the reference ladder the package ships (wolfeclick/arena/"
                    "reference_ladder.json). With --rebuild: play the rungs' round robin of seat-swapped pairs on "
                    "fixed seeds in each --formats format (tournaments under --results: resumable, and read back "
                    "if already played; the three baselines with --pairs pairs per pairing, every slower rung "
                    "against every rung with --extra-pairs), rate the rungs together (Bradley–Terry, random = 1000, 95% intervals) and "
                    "write the table to --out, keeping the formats it already holds and not rebuilt.")
    ladder.add_argument("--rebuild", action="store_true", help="play the ladder and write the table")
    ladder.add_argument("--formats", default=",".join(LADDER_FORMATS),
                        help=f"comma-separated formats (default {','.join(LADDER_FORMATS)})")
    ladder.add_argument("--rungs", default=None,
                        help="comma-separated rung specs (default: random,maxdamage,heuristic and, when the "
                             "search kind is registered, search?level=1..3)")
    ladder.add_argument("--add", default=None, metavar="SPECS", help="comma-separated extra rungs (an operator's own)")
    ladder.add_argument("--pairs", type=COUNT, default=LADDER_PAIRS,
                        help=f"pairs per pairing among random, maxdamage and heuristic (default {LADDER_PAIRS})")
    ladder.add_argument("--extra-pairs", type=COUNT, default=LADDER_EXTRA_PAIRS,
                        help="pairs per pairing of every other rung (search levels, --add) against every rung "
                             f"(default {LADDER_EXTRA_PAIRS}: a search battle costs a hundred baseline battles)")
    ladder.add_argument("--seed", type=SEED, default=LADDER_SEED, help=f"tournament seed (default {LADDER_SEED})")
    ladder.add_argument("--concurrency", type=CONCURRENCY, default=1, help="battles in flight at once")
    ladder.add_argument("--results", type=Path, default=results_dir(), help="results directory (default results)")
    ladder.add_argument("--recordings", action="store_true", help="keep every battle's recording (large)")
    ladder.add_argument("--out", type=Path, default=None,
                        help="where the table goes (default: the package's reference_ladder.json); without "
                             "--rebuild, the table to print")


def _package_table() -> Path:
    from wolfeclick.arena import yardstick

    return Path(yardstick.__file__).with_name(yardstick.LADDER_FILE)


def cmd_reference_ladder(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from wolfeclick.arena.gauntlet import build_format, ladder_versions
    from wolfeclick.arena.schedule import check_specs, parse_specs
    from wolfeclick.arena.yardstick import (
        ANCHOR,
        ANCHOR_RATING,
        LEVEL,
        ReferenceLadder,
        ladder_rungs,
        ladder_text,
        load_ladder,
    )
    from wolfeclick.battle.store import write_atomic
    from wolfeclick.errors import InputError
    from wolfeclick.policies.registry import default_registry

    if not args.rebuild:
        print(ladder_text(load_ladder(args.out)))
        return 0
    formats = parse_specs(args.formats)
    if not formats:
        raise InputError("--formats names no format")
    rungs = parse_specs(args.rungs) if args.rungs else ladder_rungs(default_registry().names(), parse_specs(args.add))
    if args.rungs and args.add:
        rungs = tuple(dict.fromkeys([*rungs, *parse_specs(args.add)]))
    if ANCHOR not in rungs:
        raise InputError(f"the rungs must include the anchor {ANCHOR!r}")
    check_specs(rungs)
    out = args.out if args.out is not None else _package_table()
    kept = {}
    if out.exists():
        old = load_ladder(out)
        if old.anchor == ANCHOR and old.anchor_rating == ANCHOR_RATING:
            kept = {name: table for name, table in old.formats.items() if name not in formats}
    tables = dict(kept)
    bars: list[tqdm] = []
    playing = [""]

    def started(done: int, total: int) -> None:
        for bar in bars:
            bar.close()
        bars.append(tqdm(total=total, initial=done, unit="battle", desc=playing[0], file=sys.stderr))

    def finished(row: object, done: int, total: int) -> None:
        bars[-1].update(1)

    try:
        for format_id in formats:
            playing[0] = format_id
            tables[format_id] = asyncio.run(build_format(rungs, format_id, args.results, pairs=args.pairs,
                                                         extra_pairs=args.extra_pairs, seed=args.seed, concurrency=args.concurrency,
                                                         keep_recordings=args.recordings, on_start=started,
                                                         on_result=finished))
    finally:
        for bar in bars:
            bar.close()
    simulator, poke_env = asyncio.run(ladder_versions())
    extra = f" --extra-pairs {args.extra_pairs}" if any(t.extra_pairs for t in tables.values()) else ""
    command = (f"wolfeclick reference-ladder --rebuild --formats {','.join(sorted(tables))} --rungs "
               f"{shlex.quote(','.join(rungs))} --pairs {args.pairs}{extra} --seed {args.seed}")
    ladder = ReferenceLadder(anchor=ANCHOR, anchor_rating=ANCHOR_RATING, level=LEVEL,
                             formats={name: tables[name] for name in sorted(tables)}, simulator=simulator,
                             poke_env=poke_env, command=command)
    write_atomic(out, ladder.to_json())
    print(ladder_text(ladder))
    print(out)
    return 0
