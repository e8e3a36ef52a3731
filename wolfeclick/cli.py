"""``python -m wolfeclick``: record battles, validate and re-simulate recordings, run tournaments.

Thin: parse arguments, call the library, print paths and one-line errors. Every command has ``--help``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import traceback
from pathlib import Path
from typing import Sequence

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.errors import WolfeClickError


def _add_llm_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("checkpoint options (llm:/preset: specs only)")
    group.add_argument("--mode", choices=["score", "generate"], default="score",
                       help="score every legal action (default) or sample like the reference")
    group.add_argument("--quant", choices=["none", "nf4", "int8"], default=None,
                       help="weights on CUDA (default nf4; without CUDA: none)")
    group.add_argument("--profile", default=None, help="prompt profile (default: the checkpoint's own)")
    group.add_argument("--temperature", type=float, default=0.0, help="0 = take the best-scored action")


def _llm_options(args: argparse.Namespace) -> dict:
    return {"mode": args.mode, "quant": args.quant, "profile": args.profile, "temperature": args.temperature}


EXIT_STATUSES = """exit statuses:
  0    everything asked for was done
  1    some battles ended aborted, recordings are invalid or differ on resim, a file could not be saved, or the
       simulator failed
  2    usage error: a bad argument, spec, format or file name (nothing was played)
  3    a bug in WolfeClick Arena (a traceback is printed; please report it)
  130  interrupted (Ctrl-C): record saves its battles in flight as aborted; bench --resume finishes the rest"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m wolfeclick", description=__doc__.split("\n")[0],
                                     epilog=EXIT_STATUSES, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    record = commands.add_parser("record", help="play seeded battles and write one recording per battle",
                                 description="Play battles on the embedded simulator; print each recording's path.")
    record.add_argument("--p1", required=True, help="policy spec for side p1 (random, maxdamage, heuristic, llm:…)")
    record.add_argument("--p2", required=True, help="policy spec for side p2")
    record.add_argument("--format", default=DEFAULT_FORMAT, help=f"Showdown format (default {DEFAULT_FORMAT})")
    record.add_argument("--seed", type=int, default=0, help="battle seed; battle i uses seed+i")
    record.add_argument("--n", type=int, default=1, help="number of battles")
    record.add_argument("--concurrency", type=int, default=1, help="battles in flight at once")
    record.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help="stop a battle after this turn")
    record.add_argument("--out", type=Path, default=Path("recordings"), help="directory for the recordings")
    _add_llm_options(record)

    validate = commands.add_parser("validate", help="check recording files against the schema",
                                   description="Exit 0 if every file is a valid recording; else one line per bad file.")
    validate.add_argument("files", nargs="+", type=Path)

    resim = commands.add_parser("resim", help="re-simulate a recording and compare the protocol log",
                                description="Feed the recording's input log to the simulator; exit 1 at the first "
                                            "differing line.")
    resim.add_argument("file", type=Path)
    resim.add_argument("--timeout", type=float, default=60.0,
                       help="seconds the simulator may take before it is stopped (default 60; exit 1)")

    schema = commands.add_parser("schema", help="print the recording JSON Schema")
    schema.add_argument("--out", type=Path, default=None)

    bench = commands.add_parser("bench", help="run a tournament: seat-swapped battle pairs, results and ratings",
                                description="Play a round robin over --players (or every player against every --vs "
                                            "policy); each pair is one seed played twice with seats swapped. Writes "
                                            "OUT/<tournament id>/ (tournament.json, progress.jsonl, results.jsonl, "
                                            "summary.json, recordings/) and prints the table.")
    bench.add_argument("--players", required=True, help="comma-separated policy specs, e.g. random,maxdamage,heuristic")
    bench.add_argument("--vs", default=None, help="comma-separated opponents: play each player against each of these "
                                                  "instead of a round robin")
    bench.add_argument("--pairs", type=int, required=True, help="battle pairs per pairing (2 battles each)")
    bench.add_argument("--format", default=DEFAULT_FORMAT, help=f"Showdown format (default {DEFAULT_FORMAT})")
    bench.add_argument("--seed", type=int, default=0, help="tournament seed; every battle seed derives from it")
    bench.add_argument("--out", type=Path, default=Path("results"), help="results directory (default results)")
    bench.add_argument("--concurrency", type=int, default=1, help="battles in flight at once")
    bench.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help="stop a battle after this turn (a tie)")
    bench.add_argument("--resume", action="store_true", help="finish an interrupted run of the same command")
    bench.add_argument("--sprt", default=None, metavar="ELO0,ELO1",
                       help="stop early once an SPRT decides whether the first policy is at least ELO1 (vs at most "
                            "ELO0) Elo stronger than the second; needs exactly two policies")
    bench.add_argument("--no-recordings", dest="recordings", action="store_false",
                       help="do not keep a recording of each battle")
    _add_llm_options(bench)
    return parser


class CtrlC:
    """While active (``with``, inside the event loop), the first Ctrl-C sets ``stop`` instead of raising, so the
    battles in flight can end cleanly and be saved; a second Ctrl-C falls back to asyncio's own handling (cancel
    everything, exit 130 at once). Outside the main thread it does nothing."""

    def __init__(self, stop: asyncio.Event) -> None:
        self.stop = stop
        self.pressed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: object = None

    def __enter__(self) -> "CtrlC":
        import signal

        self._previous = signal.getsignal(signal.SIGINT)
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self._press)
            self._loop = loop
        except (ValueError, RuntimeError):  # not the main thread
            pass
        return self

    def _press(self) -> None:
        self.pressed = True
        self.stop.set()
        self._release()

    def _release(self) -> None:
        import signal

        if self._loop is not None:
            self._loop.remove_signal_handler(signal.SIGINT)
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._loop = None

    def __exit__(self, *exc: object) -> None:
        self._release()


def cmd_record(args: argparse.Namespace) -> int:
    import contextlib

    from tqdm import tqdm

    from wolfeclick.battle.batch import BattleJob, run_jobs
    from wolfeclick.battle.specs import make_policy
    from wolfeclick.battle.store import save_recording
    from wolfeclick.errors import StorageError

    if args.n < 1 or args.seed < 0:
        print("error: --n must be at least 1 and --seed non-negative", file=sys.stderr)
        return 2
    p1 = make_policy(args.p1, **_llm_options(args))
    p2 = p1 if args.p2 == args.p1 else make_policy(args.p2, **_llm_options(args))
    jobs = [BattleJob(p1, p2, args.format, args.seed + i, args.max_turns) for i in range(args.n)]
    failures = saved = stopped_in_flight = unsaved = 0
    storage: StorageError | None = None
    interrupted = False

    async def go() -> None:
        # Ctrl-C or a failed save sets `stop`: the battles in flight end at their next decision point and are saved
        # `aborted` with their turns (where the disk still takes them); battles not started are skipped.
        nonlocal failures, saved, stopped_in_flight, unsaved, storage, interrupted
        stop = asyncio.Event()
        with CtrlC(stop) as ctrl_c, tqdm(total=len(jobs), unit="battle", file=sys.stderr,
                                         disable=len(jobs) < 2 or not sys.stderr.isatty()) as bar:
            stream = run_jobs(jobs, concurrency=args.concurrency, stop=stop)
            async with contextlib.aclosing(stream):  # cleanup runs here, while the simulators still answer
                async for _, recording in stream:
                    was_stopped = stop.is_set()
                    try:
                        path = await asyncio.to_thread(save_recording, recording, args.out)  # fsync off the loop
                    except StorageError as exc:
                        storage, unsaved = storage or exc, unsaved + 1
                        stop.set()
                        continue
                    saved += 1
                    print(path, flush=True)
                    if recording.result.reason == "aborted":
                        failures += 1
                        if was_stopped:
                            stopped_in_flight += 1
                        else:
                            tqdm.write(f"warning: {recording.id} aborted: {recording.result.error}", file=sys.stderr)
                    bar.update(1)
            interrupted = ctrl_c.pressed

    asyncio.run(go())
    if storage is not None:  # one line, exit 1 (StorageError.exit_code)
        raise StorageError(f"{storage} ({unsaved} battles not saved, {len(jobs) - saved - unsaved} not played)")
    if interrupted:
        print(f"interrupted: {saved} battles saved ({stopped_in_flight} of them stopped in flight, kept as aborted), "
              f"{len(jobs) - saved} not played", file=sys.stderr)
        return 130
    return 1 if failures else 0


def cmd_validate(args: argparse.Namespace) -> int:
    from wolfeclick.battle.store import RecordingError, load_recording

    bad = 0
    for path in args.files:
        try:
            recording = load_recording(path)
        except RecordingError as exc:
            bad += 1
            print(f"{path}: {exc}")
        else:
            print(f"{path}: ok ({recording.result.reason}, {len(recording.turns)} decision points)")
    return 1 if bad else 0


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


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from wolfeclick.battle.schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from wolfeclick.arena.schedule import TournamentConfig, parse_specs
    from wolfeclick.arena.tournament import format_table, run_tournament, tournament_dir

    sprt = None
    if args.sprt is not None:
        try:
            elo0, elo1 = (float(part) for part in args.sprt.split(","))
        except ValueError:
            print("error: --sprt takes two numbers, ELO0,ELO1 (e.g. 0,50)", file=sys.stderr)
            return 2
        sprt = (elo0, elo1)
    config = TournamentConfig(players=parse_specs(args.players), vs=parse_specs(args.vs), pairs=args.pairs,
                              format=args.format, seed=args.seed, max_turns=args.max_turns, sprt=sprt)
    bars: list[tqdm] = []

    def started(done: int, total: int) -> None:
        bars.append(tqdm(total=total, initial=done, unit="battle", file=sys.stderr))

    def finished(row: dict, done: int, total: int) -> None:
        bars[0].update(1)
        if row["reason"] == "aborted":
            tqdm.write(f"warning: {row['recording']} aborted: {row['error']}", file=sys.stderr)

    try:
        summary = asyncio.run(run_tournament(config, args.out, concurrency=args.concurrency, resume=args.resume,
                                             keep_recordings=args.recordings, llm_options=_llm_options(args),
                                             on_start=started, on_result=finished))
    except KeyboardInterrupt:
        for bar in bars:
            bar.close()
        print("interrupted: finished battles are kept; run the same command with --resume to finish",
              file=sys.stderr)
        return 130
    finally:
        for bar in bars:
            bar.close()
    directory = tournament_dir(args.out, config)
    print(format_table(summary))
    if summary.sprt_message:
        print(summary.sprt_message)
    if summary.aborted:
        print(f"warning: {summary.aborted} aborted battles are left out of the statistics", file=sys.stderr)
    print(directory / "results.jsonl" if summary.complete else f"{directory} (incomplete)")
    return 1 if summary.aborted or not summary.complete else 0


COMMANDS = {"record": cmd_record, "validate": cmd_validate, "resim": cmd_resim, "schema": cmd_schema,
            "bench": cmd_bench}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except WolfeClickError as exc:  # what the user asked for could not be done: one clear line
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception:  # anything else is ours to fix: show where it broke
        traceback.print_exc()
        print("error: this is a bug in WolfeClick Arena, please report it with the traceback above", file=sys.stderr)
        return 3
