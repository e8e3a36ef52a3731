"""``import`` and ``export``: foreign battle logs in as recordings, recordings out as training rows."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wolfeclick.paths import recordings_dir


def add_import_parser(commands: argparse._SubParsersAction) -> None:
    importer = commands.add_parser("import", help="import foreign battle logs as recordings",
                                   description="Read each FILE (an OpenEnv-WolfeClick record_battle.py log or "
                                               "replay_battle.json, a Showdown server battle log (re-simulated from "
                                               "its input log), replay .json, saved replay page or protocol .log, or "
                                               "a recording) or every such file in a FOLDER; the format is "
                                               "recognised from the content. Write one recording per file to --out "
                                               "and print its path; one line per file that cannot be read, then the "
                                               "counts imported and refused by reason (exit 1 if any was refused).")
    importer.add_argument("files", nargs="+", type=Path, metavar="FILE_OR_FOLDER")
    importer.add_argument("--out", type=Path, default=recordings_dir(), help="directory for the recordings")
    importer.add_argument("--workers", type=int, default=None,
                          help="files imported at once, each in a worker process with its own simulator (default: "
                               "one per core); the files written are the same whatever the count")
    importer.add_argument("--engine", choices=["local", "ray"], default="local",
                          help="ray: import on Ray tasks (the files are read here and their bytes sent; the same "
                               "files written)")
    importer.add_argument("--address", default=None,
                          help="with --engine ray: the cluster to join (default: start a local Ray instance)")


def cmd_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from wolfeclick.errors import InputError
    from wolfeclick.interop.folder import expand, import_files

    if args.address and args.engine != "ray":
        raise InputError("--address is for --engine ray")
    if args.workers is not None and args.workers < 1:
        raise InputError("--workers must be at least 1")
    total = len(expand(args.files))
    # the bar is for a person watching a long import; a log file gets the per-file lines and the counts only
    with tqdm(total=total, unit="file", file=sys.stderr, disable=total < 2 or not sys.stderr.isatty()) as bar:
        summary = import_files(
            args.files, args.out, saved=lambda path: bar.write(str(path), file=sys.stdout),
            refused=lambda path, reason: bar.write(f"{path}: {reason}", file=sys.stderr),
            fell_back=lambda path, why: bar.write(f"{path}: {why}; imported from its public log only",
                                                  file=sys.stderr),
            progress=lambda: bar.update(1), workers=args.workers, engine=args.engine, address=args.address)
    if total > 1:
        print("\n".join(summary.lines()), file=sys.stderr)
    return 1 if summary.refused else 0


def add_export_parser(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser("export", help="turn recordings into training rows (sft, grpo, jsonl)",
                                 description="Write one JSON line per decision of the chosen side(s): sft = "
                                             "prompt/completion for TRL's SFTTrainer; grpo = prompt, completion, "
                                             "shaped reward, components, outcome, legal actions, battle id and turn; "
                                             "jsonl = grpo plus the whole decision. Loads with "
                                             "datasets.load_dataset('json', data_files=OUT).")
    export.add_argument("recordings", nargs="+", type=Path, help="recording files or folders of them")
    export.add_argument("--side", choices=["p1", "p2", "both"], default="both")
    export.add_argument("--as", dest="kind", choices=["grpo", "sft", "jsonl", "value"], default="grpo",
                        help="value: per decision the state and its Monte-Carlo win probability (and option values) "
                             "from `analyse` (docs/analysis.md)")
    export.add_argument("--out", type=Path, required=True, help="the .jsonl file to write")
    export.add_argument("--policy", default=None, help="only sides played by this policy spec")
    export.add_argument("--winner", choices=["p1", "p2", "none"], default=None,
                        help="only battles this side won (none: ties and unfinished battles)")
    export.add_argument("--format", default=None, help="only battles in this format")
    export.add_argument("--exact-only", action="store_true",
                        help="only decisions whose prompt involved no inference (public-log imports get their "
                             "player's view inferred from the format's set data: docs/interop.md)")
    export.add_argument("--profile", choices=["wolfeclick-v1", "arena-v1"], default="wolfeclick-v1",
                        help="the prompt an inferred row shows (default: what the published checkpoints read)")


def cmd_export(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from wolfeclick.battle.store import recording_files
    from wolfeclick.interop.export import ExportError, ExportFilter, export_files

    files = recording_files(args.recordings)
    flt = ExportFilter(policy=args.policy, winner=args.winner, format=args.format)
    with tqdm(total=len(files), unit="recording", file=sys.stderr, disable=len(files) < 2) as bar:
        if args.kind != "value":
            stats = export_files(files, args.out, side=args.side, kind=args.kind, flt=flt,
                                 progress=lambda _: bar.update(1), exact_only=args.exact_only, profile=args.profile)
        else:  # Monte-Carlo values from the analyses stored beside the recordings
            from wolfeclick.interop.value import export_value_files

            if not files:
                raise ExportError("no recordings to export (no .json files in the paths given)")
            stats = export_value_files(files, args.out, side=args.side, flt=flt, progress=lambda _: bar.update(1))
    print(f"{args.out}: {stats.summary()}")
    return 0
