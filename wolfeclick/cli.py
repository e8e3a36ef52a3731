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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m wolfeclick", description=__doc__.split("\n")[0])
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

    serve_env = commands.add_parser("serve-env", help="serve the training env over OpenEnv (HTTP + WebSocket)",
                                    description="An OpenEnv server (openenv-core): POST /reset, POST /step, GET /state, "
                                                "GET /schema, GET /health, WS /ws; one battle per session. Every "
                                                "episode is saved as a recording (source: training).")
    serve_env.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve_env.add_argument("--port", type=int, default=8001, help="port (default 8001)")
    serve_env.add_argument("--opponent", default="random", help="default opponent spec (a reset may name another)")
    serve_env.add_argument("--format", default=DEFAULT_FORMAT, help=f"default format (default {DEFAULT_FORMAT})")
    serve_env.add_argument("--prompt", default="wolfeclick-v1", help="prompt profile of the observation text")
    serve_env.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help="truncate battles after this turn")
    serve_env.add_argument("--max-sessions", type=int, default=32, help="battles in flight at once")
    serve_env.add_argument("--out", type=Path, default=None,
                           help="directory for the recordings (default $WOLFECLICK_RECORDINGS or recordings)")
    serve_env.add_argument("--no-recordings", dest="recordings", action="store_false",
                           help="do not save episodes as recordings")
    return parser


def cmd_record(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from wolfeclick.battle.batch import BattleJob, run_jobs
    from wolfeclick.battle.specs import make_policy
    from wolfeclick.battle.store import save_recording

    if args.n < 1 or args.seed < 0:
        print("error: --n must be at least 1 and --seed non-negative", file=sys.stderr)
        return 2
    p1 = make_policy(args.p1, **_llm_options(args))
    p2 = p1 if args.p2 == args.p1 else make_policy(args.p2, **_llm_options(args))
    jobs = [BattleJob(p1, p2, args.format, args.seed + i, args.max_turns) for i in range(args.n)]
    failures = 0

    async def go() -> None:
        nonlocal failures
        with tqdm(total=len(jobs), unit="battle", file=sys.stderr, disable=len(jobs) < 2) as bar:
            async for _, recording in run_jobs(jobs, concurrency=args.concurrency):
                path = await asyncio.to_thread(save_recording, recording, args.out)  # fsync off the event loop
                print(path, flush=True)
                if recording.result.reason == "aborted":
                    failures += 1
                    print(f"warning: {recording.id} aborted: {recording.result.error}", file=sys.stderr)
                bar.update(1)

    asyncio.run(go())
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
    from wolfeclick.battle.store import load_recording

    recording = load_recording(args.file)
    result = asyncio.run(resimulate(recording))
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


def cmd_serve_env(args: argparse.Namespace) -> int:
    import os

    import uvicorn

    if "gradio" not in sys.modules and os.environ.get("ENABLE_WEB_INTERFACE", "").lower() not in ("1", "true", "yes"):
        # openenv-core imports gradio for an optional web UI this server never mounts; gradio's import is most of
        # the start-up time, and openenv-core treats a missing gradio as "no web UI"
        sys.modules["gradio"] = None  # type: ignore[assignment]

    from wolfeclick.battle.specs import make_policy
    from wolfeclick.env.server import create_server_app

    make_policy(args.opponent)  # an unknown spec fails now, in one line, not at the first reset
    recordings = False if not args.recordings else args.out
    app = create_server_app(opponent=args.opponent, format=args.format, prompt=args.prompt, max_turns=args.max_turns,
                            recordings=recordings, max_sessions=args.max_sessions)
    print(f"serving the WolfeClick env on http://{args.host}:{args.port} (WebSocket /ws)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


COMMANDS = {"record": cmd_record, "validate": cmd_validate, "resim": cmd_resim, "schema": cmd_schema,
            "bench": cmd_bench, "serve-env": cmd_serve_env}


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
