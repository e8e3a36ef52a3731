"""``validate``, ``resim`` and ``schema``: check recordings against the schema and by re-simulating them."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


def add_validate_parser(commands: argparse._SubParsersAction) -> None:
    validate = commands.add_parser("validate", help="check recording files against the schema",
                                   description="Exit 0 if every file is a valid recording; else one line per bad file.")
    validate.add_argument("files", nargs="*", type=Path,
                          help="recording files, or folders of them (default: the recordings folder, "
                               "$WOLFECLICK_RECORDINGS or ./recordings)")


def cmd_validate(args: argparse.Namespace) -> int:
    from wolfeclick.battle.store import RecordingError, load_recording, recording_files

    bad = 0
    if not args.files:
        from wolfeclick.paths import recordings_dir

        args.files = [recordings_dir()]
        print(f"checking {args.files[0]}", file=sys.stderr)
    for path in recording_files(args.files):
        try:
            recording = load_recording(path)
        except RecordingError as exc:
            bad += 1
            print(f"{path}: {exc}")
        else:
            print(f"{path}: ok ({recording.result.reason}, {len(recording.turns)} decision points)")
    return 1 if bad else 0


def add_resim_parser(commands: argparse._SubParsersAction) -> None:
    resim = commands.add_parser("resim", help="re-simulate a recording and compare the protocol log",
                                description="Feed the recording's input log to the simulator; exit 1 at the first "
                                            "differing line.")
    resim.add_argument("file", type=Path)
    resim.add_argument("--timeout", type=float, default=60.0,
                       help="seconds the simulator may take before it is stopped (default 60; exit 1)")


def cmd_resim(args: argparse.Namespace) -> int:
    from wolfeclick.battle.resim import resimulate
    from wolfeclick.battle.store import RecordingError, load_recording

    if not args.timeout > 0:
        print("error: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    try:
        recording = load_recording(args.file)  # an input log with `>eval` & co. is refused here, in one line
    except RecordingError as exc:
        print(f"{args.file}: {exc}")
        return 1
    result = asyncio.run(resimulate(recording, timeout=args.timeout))
    print(f"{args.file}: {result.message}")
    return 0 if result.ok else 1


def add_schema_parser(commands: argparse._SubParsersAction) -> None:
    schema = commands.add_parser("schema", help="print the recording JSON Schema")
    schema.add_argument("--out", type=Path, default=None)


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from wolfeclick.battle.schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0
