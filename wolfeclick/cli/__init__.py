"""``wolfeclick`` (or ``python -m wolfeclick``): record battles, validate and re-simulate recordings, run tournaments, import, export.

Thin: parse arguments, call the library, print paths and one-line errors. Every command has ``--help``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Sequence

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.battle.schema import MAX_SEED, MAX_TURNS
from wolfeclick.cli.options import (
    SERVE_DESCRIPTION,
    add_serve_arguments,
    add_team_options,
    bounded_int,
    run_command,
    skip_openenv_web_ui,
    team_sources,
)
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.paths import recordings_dir, results_dir
from wolfeclick.sides import SIDES


def _add_llm_options(parser: argparse.ArgumentParser) -> None:
    """The checkpoint kinds' options from the policy registry, as flags (each also written ``llm:…?mode=…``)."""
    from wolfeclick.policies.registry import default_registry

    options = {o.name: o for o in default_registry().checkpoint_options()}
    group = parser.add_argument_group("checkpoint options (llm:/preset: specs only)")
    for name, default in (("mode", "score"), ("quant", None), ("profile", None), ("temperature", 0.0),
                          ("parser", None)):
        option = options[name]
        group.add_argument(f"--{name}", type=option.type, choices=option.choices, default=default, help=option.help)


def _llm_options(args: argparse.Namespace) -> dict:
    return {"mode": args.mode, "quant": args.quant, "profile": args.profile, "temperature": args.temperature,
            "parser": args.parser}


MAX_BATTLES = 1_000_000
"""At most this many battles (or pairs) per command."""


SEED = bounded_int(0, MAX_SEED - MAX_BATTLES)
COUNT = bounded_int(1, MAX_BATTLES)
CONCURRENCY = bounded_int(1, 256)
TURNS = bounded_int(1, MAX_TURNS)
EXIT_STATUSES = """exit statuses:
  0    everything asked for was done
  1    some battles ended aborted, recordings are invalid or differ on resim, a file could not be saved, or the
       simulator failed
  2    usage error: a bad argument, spec, format or file name (nothing was played)
  3    a bug in WolfeClick Arena (a traceback is printed; please report it)
  130  interrupted (Ctrl-C): record saves its battles in flight as aborted; bench --resume finishes the rest"""


def build_parser() -> argparse.ArgumentParser:
    from wolfeclick.battle.specs import spec_help

    specs = (f"policy specs (--p1, --players, --policy…):\n  {spec_help(installed=False)}\n  or an installed "
             "agent's name; `wolfeclick policies` lists every kind with its options\n\n")
    parser = argparse.ArgumentParser(prog="wolfeclick", description=__doc__.split("\n")[0],
                                     epilog=specs + EXIT_STATUSES, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    record = commands.add_parser("record", help="play seeded battles and write one recording per battle",
                                 description="Play battles on the embedded simulator; print each recording's path.")
    record.add_argument("--p1", required=True, help="policy spec for side p1 (`wolfeclick policies` lists them)")
    record.add_argument("--p2", required=True, help="policy spec for side p2")
    record.add_argument("--format", default=DEFAULT_FORMAT, help=f"Showdown format (default {DEFAULT_FORMAT})")
    record.add_argument("--seed", type=SEED, default=0, help="battle seed; battle i uses seed+i")
    record.add_argument("--n", type=COUNT, default=1, help="number of battles")
    record.add_argument("--concurrency", type=CONCURRENCY, default=1, help="battles in flight at once")
    record.add_argument("--max-turns", type=TURNS, default=DEFAULT_MAX_TURNS, help="stop a battle after this turn")
    record.add_argument("--out", type=Path, default=recordings_dir(), help="directory for the recordings")
    add_team_options(record)
    _add_llm_options(record)

    validate = commands.add_parser("validate", help="check recording files against the schema",
                                   description="Exit 0 if every file is a valid recording; else one line per bad file.")
    validate.add_argument("files", nargs="*", type=Path,
                          help="recording files, or folders of them (default: the recordings folder, "
                               "$WOLFECLICK_RECORDINGS or ./recordings)")

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
    bench.add_argument("--pairs", type=COUNT, required=True, help="battle pairs per pairing (2 battles each)")
    bench.add_argument("--format", default=DEFAULT_FORMAT, help=f"Showdown format (default {DEFAULT_FORMAT})")
    bench.add_argument("--seed", type=SEED, default=0, help="tournament seed; every battle seed derives from it")
    bench.add_argument("--out", type=Path, default=results_dir(), help="results directory (default results)")
    bench.add_argument("--concurrency", type=CONCURRENCY, default=1, help="battles in flight at once")
    bench.add_argument("--max-turns", type=TURNS, default=DEFAULT_MAX_TURNS, help="stop a battle after this turn (a tie)")
    bench.add_argument("--resume", action="store_true", help="finish an interrupted run of the same command")
    bench.add_argument("--sprt", default=None, metavar="ELO0,ELO1",
                       help="stop early once an SPRT decides whether the first policy is at least ELO1 (vs at most "
                            "ELO0) Elo stronger than the second; needs exactly two policies")
    bench.add_argument("--no-recordings", dest="recordings", action="store_false",
                       help="do not keep a recording of each battle")
    bench.add_argument("--engine", choices=["local", "ray"], default="local",
                       help="who plays the battles: this process (default) or Ray actors (same results; docs/scale.md)")
    bench.add_argument("--address", default=None, metavar="auto|HOST:PORT",
                       help="with --engine ray: the cluster to join (default: start a local Ray instance)")
    add_team_options(bench, seats=False)
    _add_llm_options(bench)

    branch = commands.add_parser("branch", help="replay a recording up to a decision point, then let policies play on",
                                 description="Replay RECORDING's own choices up to decision point --at (the simulator "
                                             "in exactly the state it was in), then let --p1/--p2 (default: the "
                                             "recorded policies) play on. Prints the new recording's path.")
    branch.add_argument("recording", type=Path)
    branch.add_argument("--at", type=bounded_int(0, MAX_TURNS), required=True, metavar="STEP",
                        help="decision index to take over at (0 = the first decision)")
    branch.add_argument("--p1", default=None, help="policy for p1 from STEP on (default: the recorded one)")
    branch.add_argument("--p2", default=None, help="policy for p2 from STEP on (default: the recorded one)")
    branch.add_argument("--out", type=Path, default=recordings_dir(), help="directory for the new recording")
    _add_llm_options(branch)

    rescore = commands.add_parser("rescore", help="ask a policy what it would have done at every recorded decision",
                                  description="Replay each recording from its own choices and ask --policy at every "
                                              "decision of --side; writes <out>/rescores/<id>/<policy>-<side>.json and "
                                              "prints agreement with the recorded choices.")
    rescore.add_argument("recordings", nargs="+", type=Path, help="recording files, or folders of them")
    rescore.add_argument("--policy", required=True, help="the policy spec to ask (e.g. preset:run3, llm:/path)")
    rescore.add_argument("--side", choices=list(SIDES), required=True)
    rescore.add_argument("--out", type=Path, default=None, help="recordings folder to store rescores in "
                                                                "(default: each recording's own folder)")
    rescore.add_argument("--concurrency", type=CONCURRENCY, default=8, help="recordings replayed at once")
    _add_llm_options(rescore)
    _add_analyse_parser(commands)
    board = commands.add_parser("leaderboard", help="one table of every battle played here, rated together",
                                description="Rebuild the history index (RESULTS/history.sqlite) from the result rows "
                                            "and recordings on disk, then rate every policy over all of it.")
    board.add_argument("--results", type=Path, default=results_dir(), help="results directory (default results)")
    board.add_argument("--recordings", type=Path, action="append", default=None,
                       help="a recordings directory to include (repeatable; default recordings)")
    board.add_argument("--format", default=None, help="only battles of this format")
    board.add_argument("--since", default=None, metavar="DATE", help="only battles recorded on or after this ISO date")
    board.add_argument("--source", default=None, help="only these sources, comma-separated "
                                                      "(tournament, played, training, branch, imported, ladder)")
    board.add_argument("--min-battles", type=int, default=10, help="fewer battles are listed apart (default 10)")
    board.add_argument("--period", choices=["tournament", "day"], default="tournament",
                       help="Glicko-2 rating period (default: one per tournament)")
    board.add_argument("--json", type=Path, default=None, help="also write the table and matrix as JSON here")
    board.add_argument("--csv", type=Path, default=None, help="also write the table as CSV here")
    board.add_argument("--matrix-csv", type=Path, default=None, help="also write the per-pair matrix as CSV here")
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
    serve_env = commands.add_parser("serve-env", help="serve the training env over OpenEnv (HTTP + WebSocket)",
                                    description=SERVE_DESCRIPTION)
    add_serve_arguments(serve_env)
    _add_ladder_parser(commands)
    commands.add_parser("setup", help="install the pinned Pokémon Showdown simulator (npm ci, once; battles do it "
                                      "on first use otherwise)",
                        description="Installs the simulator's Node packages from the lock shipped in the package into "
                                    "$WOLFECLICK_CACHE (default ~/.cache/wolfeclick) and prints where. Needs Node.js "
                                    ">= 20 and npm; does nothing when it is already installed.")
    listing = commands.add_parser("policies", help="list every policy kind a spec can name, with its options",
                                  description="Every registered kind (built-ins, installed agents from the "
                                              "wolfeclick.policies entry points, py: factories): how its specs are "
                                              "written, whether it needs a GPU, its options with types and defaults.")
    listing.add_argument("--json", action="store_true", help="one JSON object per kind instead of text")
    app = commands.add_parser("app", help="serve the Gradio app (as python app.py does)",
                              description="Serves Live, Replays, Compare and Leaderboard on GRADIO_SERVER_NAME:"
                                          "GRADIO_SERVER_PORT (default 127.0.0.1:7860).")
    app.add_argument("--port", type=bounded_int(1, 65535), default=None,
                     help="the port to listen on (default: $GRADIO_SERVER_PORT, else 7860)")
    app.add_argument("--host", default=None,
                     help="the address to listen on (default: $GRADIO_SERVER_NAME, else 127.0.0.1; 0.0.0.0 serves "
                          "every interface: see docs/app.md, Trust, before you open it to others)")
    return parser


def _add_ladder_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
    _add_llm_options(ladder)
    server = commands.add_parser(
        "server", help="run a local no-security Showdown server on 127.0.0.1 (for ladder)",
        description="Start pokemon-showdown from node_modules with --no-security, bound to 127.0.0.1 only (never "
                    "beyond this machine), from a private config folder; print its websocket URL; stop on Ctrl-C.")
    server.add_argument("--port", type=bounded_int(1024, 65535), default=None, help="port (default: a free one)")
    server.add_argument("--lean", action="store_true", help="no child processes: quicker to start, less memory")


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
    from wolfeclick.battle.teams import prepare_deal

    p1 = make_policy(args.p1, **_llm_options(args))
    p2 = p1 if args.p2 == args.p1 else make_policy(args.p2, **_llm_options(args))
    deal = asyncio.run(prepare_deal(team_sources(args), args.format))  # an illegal team: one line, nothing played
    jobs = [BattleJob(p1, p2, args.format, args.seed + i, args.max_turns,
                      teams=deal.infos(args.seed + i) if deal else None) for i in range(args.n)]
    failures = saved = stopped_in_flight = 0
    storage: StorageError | None = None
    interrupted = False
    lost: list = []  # recordings a failed save left in memory: tried again at the end, finished battles first

    async def go() -> None:
        # Ctrl-C or a failed save sets `stop`: the battles in flight end at their next decision point and are saved
        # `aborted` with their turns (where the disk still takes them); battles not started are skipped.
        nonlocal failures, saved, stopped_in_flight, storage, interrupted
        stop = asyncio.Event()
        with CtrlC(stop) as ctrl_c, tqdm(total=len(jobs), unit="battle", file=sys.stderr,
                                         disable=len(jobs) < 2 or not sys.stderr.isatty()) as bar:
            stream = run_jobs(jobs, concurrency=args.concurrency, stop=stop)
            async with contextlib.aclosing(stream):  # cleanup runs here, while the simulators still answer
                async for _, recording in stream:
                    was_stopped = stop.is_set()
                    if storage is not None:
                        lost.append((recording, was_stopped))  # the disk already refused one: finished ones first
                        continue
                    try:
                        path = await asyncio.to_thread(save_recording, recording, args.out)  # fsync off the loop
                    except StorageError as exc:
                        storage = exc
                        lost.append((recording, was_stopped))
                        stop.set()
                        continue
                    saved += 1
                    report(path, recording, was_stopped)
                    bar.update(1)
            interrupted = ctrl_c.pressed

    def report(path: Path, recording, was_stopped: bool) -> None:  # type: ignore[no-untyped-def]
        nonlocal failures, stopped_in_flight
        print(path, flush=True)
        if recording.result.reason == "aborted":
            failures += 1
            if was_stopped:
                stopped_in_flight += 1
            else:
                tqdm.write(f"warning: {recording.id} aborted: {recording.result.error}", file=sys.stderr)

    asyncio.run(go())
    if storage is not None:  # the finished battles are tried again first, then the stopped ones; one line, exit 1
        lost.sort(key=lambda item: (item[0].result.reason == "aborted", -len(item[0].turns)))
        unsaved = []
        for recording, was_stopped in lost:
            try:
                report(save_recording(recording, args.out), recording, was_stopped)
                saved += 1
            except StorageError:
                unsaved.append(recording)
        if unsaved:
            finished = [r.id for r in unsaved if r.result.reason != "aborted"]
            names = f": finished {', '.join(finished[:5])}{' …' if len(finished) > 5 else ''}" if finished else ""
            raise StorageError(f"{storage} ({len(unsaved)} battles not saved{names}; "
                               f"{len(jobs) - saved - len(unsaved)} not played)")
    if interrupted:
        print(f"interrupted: {saved} battles saved ({stopped_in_flight} of them stopped in flight, kept as aborted), "
              f"{len(jobs) - saved} not played", file=sys.stderr)
        return 130
    return 1 if failures else 0


def expand_paths(paths: Sequence[Path]) -> list[Path]:
    """Files as given; a directory stands for the ``*.json`` files directly inside it (symbolic links skipped)."""
    expanded: list[Path] = []
    for path in paths:
        if path.is_dir():
            expanded.extend(p for p in sorted(path.glob("*.json")) if not p.is_symlink())
        else:
            expanded.append(path)
    return expanded


def cmd_validate(args: argparse.Namespace) -> int:
    from wolfeclick.battle.store import RecordingError, load_recording

    bad = 0
    if not args.files:
        from wolfeclick.paths import recordings_dir

        args.files = [recordings_dir()]
        print(f"checking {args.files[0]}", file=sys.stderr)
    for path in expand_paths(args.files):
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

    from wolfeclick.arena.engines import make_engine
    from wolfeclick.arena.schedule import TournamentConfig, check_specs, parse_specs
    from wolfeclick.arena.tournament import ResultRow, format_table, run_tournament, tournament_dir

    sprt = None
    if args.sprt is not None:
        try:
            elo0, elo1 = (float(part) for part in args.sprt.split(","))
        except ValueError:
            print("error: --sprt takes two numbers, ELO0,ELO1 (e.g. 0,50)", file=sys.stderr)
            return 2
        sprt = (elo0, elo1)
    # every spec, before a simulator starts (the teams' check) or a model loads: one line for the first bad one
    check_specs((*parse_specs(args.players), *parse_specs(args.vs)), **_llm_options(args))
    from wolfeclick.battle.teams import prepare_deal

    engine = make_engine(args.engine, address=args.address)  # --address without --engine ray: one line, exit 2
    deal = asyncio.run(prepare_deal(team_sources(args), args.format))  # an illegal team: one line, nothing played
    config = TournamentConfig(players=parse_specs(args.players), vs=parse_specs(args.vs), pairs=args.pairs,
                              format=args.format, seed=args.seed, max_turns=args.max_turns, sprt=sprt,
                              teams=deal.p1 if deal else ())
    bars: list[tqdm] = []

    def started(done: int, total: int) -> None:
        bars.append(tqdm(total=total, initial=done, unit="battle", file=sys.stderr))

    def finished(row: ResultRow, done: int, total: int) -> None:
        bars[0].update(1)
        if row["reason"] == "aborted":
            tqdm.write(f"warning: {row['recording']} aborted: {row['error']}", file=sys.stderr)

    try:
        summary = asyncio.run(run_tournament(config, args.out, concurrency=args.concurrency, resume=args.resume,
                                             keep_recordings=args.recordings, llm_options=_llm_options(args),
                                             on_start=started, on_result=finished, engine=engine))
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


def cmd_branch(args: argparse.Namespace) -> int:
    from wolfeclick.battle.branch import branch
    from wolfeclick.battle.specs import make_policy
    from wolfeclick.battle.store import RecordingSaver, load_recording

    parent = load_recording(args.recording)
    policies = {side: make_policy(spec, **_llm_options(args)) if spec else None
                for side, spec in (("p1", args.p1), ("p2", args.p2))}
    recording = asyncio.run(branch(parent, args.at, policies))
    print(RecordingSaver(args.out).save(recording))
    return 1 if recording.result.reason == "aborted" else 0


def cmd_rescore(args: argparse.Namespace) -> int:
    from wolfeclick.battle.rescore import Rescore, agreement_by_turn, rescore_many, save_rescore
    from wolfeclick.battle.specs import make_policy
    from wolfeclick.battle.store import load_recording

    paths = expand_paths(args.recordings)
    recordings = [load_recording(path) for path in paths]
    folders = {recording.id: (args.out or path.parent) for recording, path in zip(recordings, paths)}
    policy = make_policy(args.policy, **_llm_options(args))
    results = asyncio.run(rescore_many(recordings, policy, args.side, concurrency=args.concurrency))
    done: list[Rescore] = []
    for recording, result in zip(recordings, results):
        if not isinstance(result, Rescore):
            print(f"error: {result}", file=sys.stderr)
            continue
        done.append(result)
        path = save_rescore(result, folders[recording.id])
        agreement = f"{result.agreement:.1%}" if result.agreement is not None else "n/a"
        print(f"{path}: {len(result.decisions)} decisions, agreement {agreement}")
    decisions = [d for r in done for d in r.decisions]
    if decisions:
        overall = sum(d.agree for d in decisions) / len(decisions)
        print(f"overall: {policy.spec} agrees with the recorded {args.side} choices at {overall:.1%} of "
              f"{len(decisions)} decisions in {len(done)} recordings")
        by_turn = agreement_by_turn(done)
        print("by turn: " + ", ".join(f"{turn}:{share:.0%}" for turn, share in by_turn.items()))
    return 0 if len(done) == len(recordings) else 1


DEFAULT_SAMPLING = "uniform"
"""How ``analyse`` spends its rollouts unless told (issue 48: racing becomes the default once measured to agree)."""


def _add_analyse_parser(commands: argparse._SubParsersAction) -> None:
    analyse = commands.add_parser(
        "analyse", help="win probability at every decision of recorded battles, option values, turning points",
        description="From the true simulator state at each decision of each recording (it sees both teams), play K "
                    "continuations with --policy on both sides, each with fresh luck from --seed; with --options, "
                    "also value every legal action of that side's decisions. Writes "
                    "<out>/analyses/<id>/<policy>-k<K>-s<seed>.json and prints one line per battle (docs/analysis.md).")
    analyse.add_argument("recordings", nargs="+", type=Path, help="recording files, or folders of them")
    analyse.add_argument("--k", type=bounded_int(1, 100_000), default=64, help="rollouts per estimate (default 64)")
    analyse.add_argument("--policy", default="heuristic",
                         help="the rollout policy spec, for both sides (default: %(default)s); sim:random, "
                              "sim:maxdamage or sim:heuristic decide inside the simulator (docs/analysis.md)")
    analyse.add_argument("--options", choices=["p1", "p2", "both"], default=None,
                         help="value every legal action at each decision of this side (or both)")
    analyse.add_argument("--at", type=bounded_int(0, MAX_TURNS), action="append", default=None, metavar="STEP",
                         help="with --options: only at these decision indices (repeatable)")
    analyse.add_argument("--seed", type=bounded_int(0, MAX_SEED), default=0, help="the analysis seed (default 0)")
    analyse.add_argument("--margin", type=float, default=0.15,
                         help="the least loss in win probability that makes a mistake (default 0.15)")
    analyse.add_argument("--out", type=Path, default=None, help="recordings folder to store analyses in "
                                                                "(default: each recording's own folder)")
    analyse.add_argument("--concurrency", type=CONCURRENCY, default=16, help="rollouts in flight at once")
    analyse.add_argument("--processes", type=bounded_int(1, 64), default=None,
                         help="simulator processes (default: one per core, as for record)")
    analyse.add_argument("--replay-prefix", action="store_true",
                         help="replay each rollout's prefix instead of copying the decision (slower; same numbers)")
    analyse.add_argument("--engine", choices=["local", "ray"], default="local",
                         help="where rollouts run: this machine's simulators, or Ray workers (same numbers)")
    analyse.add_argument("--address", default=None,
                         help="with --engine ray: the cluster to join (default: start a local Ray instance)")
    analyse.add_argument("--sampling", choices=["racing", "uniform"], default=None,
                         help="racing: rounds of --batch rollouts, options clearly below the best stop early and win "
                              "probabilities stop at the precision of uniform K; uniform: K rollouts for every "
                              f"estimate (default {DEFAULT_SAMPLING}; uniform with --engine ray; docs/analysis.md)")
    analyse.add_argument("--batch", type=bounded_int(1, 1000), default=8,
                         help="with --sampling racing: rollouts per live estimate per round (default 8)")
    _add_llm_options(analyse)


def cmd_analyse(args: argparse.Namespace) -> int:
    import contextlib

    from tqdm import tqdm

    from wolfeclick.analysis.core import analyse, summary_line
    from wolfeclick.analysis.schema import save_analysis
    from wolfeclick.battle.specs import make_policy
    from wolfeclick.battle.store import load_recording
    from wolfeclick.sim.process import SimPool

    if not 0.0 <= args.margin <= 1.0:
        raise InputError(f"--margin must lie between 0 and 1, got {args.margin}")
    if args.at and not args.options:
        raise InputError("--at says where to value options; give --options p1|p2|both too")
    paths = expand_paths(args.recordings)
    recordings = [load_recording(path) for path in paths]
    from wolfeclick.analysis.sim_rollout import SimPolicy, is_sim_spec

    if is_sim_spec(args.policy) and args.engine == "ray":
        raise InputError(f"{args.policy.strip()[:40]} plays inside this machine's simulators only: use --engine local")
    if args.engine == "ray":  # before building it: a refused checkpoint is not loaded here first
        from wolfeclick.analysis.ray_rollouts import check_ray_rollouts

        check_ray_rollouts(args.policy)
    policy = SimPolicy(args.policy) if is_sim_spec(args.policy) else make_policy(args.policy, **_llm_options(args))
    sides = {"p1": ("p1",), "p2": ("p2",), "both": SIDES, None: ()}[args.options]

    if args.address and args.engine != "ray":
        raise InputError("--address is for --engine ray")
    sampling = args.sampling or ("uniform" if args.engine == "ray" else DEFAULT_SAMPLING)

    async def run() -> int:
        failed = 0
        async with (SimPool(args.processes) if args.engine == "local" else contextlib.nullcontext()) as pool:
            for recording, path in zip(recordings, paths):
                bar = tqdm(unit="rollout", file=sys.stderr, desc=recording.id[:40], leave=False,
                           disable=not sys.stderr.isatty())

                def progress(done: int, total: int, bar: tqdm = bar) -> None:
                    bar.total = total
                    bar.update(done - bar.n)

                try:
                    analysis = await analyse(recording, policy, pool=pool, k=args.k, seed=args.seed, options=sides,
                                             at=args.at, margin=args.margin, concurrency=args.concurrency,
                                             fork=not args.replay_prefix, progress=progress,
                                             engine=args.engine, address=args.address, sampling=sampling,
                                             batch=args.batch)
                except WolfeClickError as exc:
                    bar.close()
                    print(f"error: {path}: {exc}", file=sys.stderr)
                    failed += 1
                    continue
                bar.close()
                saved = save_analysis(analysis, args.out or path.parent)
                print(f"{summary_line(analysis, recording)} ({saved})", flush=True)
        return 1 if failed else 0

    if args.engine == "ray":  # one Ray instance (or connection) for every battle's rollouts
        from wolfeclick.extras import require

        require("ray", "analyse --engine ray")
        import ray

        from wolfeclick.arena.engines.ray_engine import RayEngine

        own = RayEngine(args.address)._connect()
        try:
            return asyncio.run(run())
        finally:
            if own:
                ray.shutdown()
    return asyncio.run(run())


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from wolfeclick.arena.history import read_index, rebuild_index
    from wolfeclick.arena.leaderboard import format_leaderboard, leaderboard, parse_query
    from wolfeclick.arena.verify import Verifications
    from wolfeclick.battle.store import write_atomic

    query = parse_query(args.format, args.since, args.source, args.min_battles, args.period)
    recordings = args.recordings if args.recordings is not None else [recordings_dir()]
    index, scan = rebuild_index(args.results, recordings, verify=Verifications(args.results))
    for line in (scan.refused_line(), scan.left_out_line()):
        if line:
            print(f"note: {line}", file=sys.stderr)
    entries = read_index(index, format_id=query.format, since=query.since,
                         sources=list(query.sources) if query.sources else None)
    board = leaderboard(entries, min_battles=query.min_battles, period=query.period)
    print(format_leaderboard(board))
    for path, text in ((args.json, board.to_json), (args.csv, board.table_csv), (args.matrix_csv, board.matrix_csv)):
        if path is not None:
            write_atomic(path, text())
    print(index)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from wolfeclick.interop.folder import expand, import_files

    total = len(expand(args.files))
    # the bar is for a person watching a long import; a log file gets the per-file lines and the counts only
    with tqdm(total=total, unit="file", file=sys.stderr, disable=total < 2 or not sys.stderr.isatty()) as bar:
        summary = import_files(
            args.files, args.out, saved=lambda path: bar.write(str(path), file=sys.stdout),
            refused=lambda path, reason: bar.write(f"{path}: {reason}", file=sys.stderr),
            fell_back=lambda path, why: bar.write(f"{path}: {why}; imported from its public log only",
                                                  file=sys.stderr),
            progress=lambda: bar.update(1))
    if total > 1:
        print("\n".join(summary.lines()), file=sys.stderr)
    return 1 if summary.refused else 0


def cmd_export(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from wolfeclick.interop.export import ExportError, ExportFilter, expand, export_files

    files = expand(args.recordings)
    flt = ExportFilter(policy=args.policy, winner=args.winner, format=args.format)
    with tqdm(total=len(files), unit="recording", file=sys.stderr, disable=len(files) < 2) as bar:
        if args.kind != "value":
            stats = export_files(args.recordings, args.out, side=args.side, kind=args.kind, flt=flt,
                                 progress=lambda _: bar.update(1))
        else:  # Monte-Carlo values from the analyses stored beside the recordings
            from wolfeclick.interop.value import export_value_files

            if not files:
                raise ExportError("no recordings to export (no .json files in the paths given)")
            stats = export_value_files(files, args.out, side=args.side, flt=flt, progress=lambda _: bar.update(1))
    print(f"{args.out}: {stats.summary()}")
    return 0


def cmd_serve_env(args: argparse.Namespace) -> int:
    from wolfeclick.extras import require

    require("train", "serve-env")
    skip_openenv_web_ui()
    from wolfeclick.env.server import serve_from_args

    return serve_from_args(args)


def cmd_ladder(args: argparse.Namespace) -> int:
    from wolfeclick.battle.specs import make_policy
    from wolfeclick.battle.store import save_recording
    from wolfeclick.ladder.client import DEFAULT_LOGIN_SERVER
    from wolfeclick.ladder.credentials import read_password
    from wolfeclick.ladder.play import LadderOptions, LadderSession

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
    mode = "accept" if args.accept_challenges else "challenge" if args.challenge else "search"
    options = LadderOptions(server=args.server, format=args.format, n=args.n, mode=mode,
                            opponent=args.challenge or args.from_user, username=args.user, password=password,
                            login_server=args.login_server or DEFAULT_LOGIN_SERVER, team=team, timeout=args.timeout,
                            wait=args.wait, max_turns=args.max_turns)
    policy = make_policy(args.policy, **_llm_options(args))
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


def cmd_server(args: argparse.Namespace) -> int:
    import time

    from wolfeclick.sim.server import LocalServer

    with LocalServer(port=args.port, lean=args.lean) as server:
        print(server.url, flush=True)
        try:
            while server.alive:
                time.sleep(0.5)
        except KeyboardInterrupt:
            return 130
    print("error: the local Showdown server exited", file=sys.stderr)
    return 1


def cmd_setup(args: argparse.Namespace) -> int:
    from wolfeclick.sim.install import ensure_showdown

    print(ensure_showdown())
    return 0


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


def cmd_app(args: argparse.Namespace) -> int:
    from wolfeclick.ui.serve import serve

    # Gradio reads these when launch() is not told: the options are the variables, said on the command line
    if args.port is not None:
        os.environ["GRADIO_SERVER_PORT"] = str(args.port)
    if args.host is not None:
        os.environ["GRADIO_SERVER_NAME"] = args.host
    serve()
    return 0


COMMANDS = {"setup": cmd_setup, "app": cmd_app, "policies": cmd_policies, "ladder": cmd_ladder, "server": cmd_server,
            "record": cmd_record, "validate": cmd_validate, "resim": cmd_resim, "schema": cmd_schema,
            "bench": cmd_bench, "branch": cmd_branch, "rescore": cmd_rescore, "analyse": cmd_analyse, "leaderboard": cmd_leaderboard,
            "import": cmd_import, "export": cmd_export, "serve-env": cmd_serve_env}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(COMMANDS[args.command], args)
