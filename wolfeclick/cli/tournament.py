"""``bench`` and ``leaderboard``: play tournaments, and rate every battle played here together."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.cli.options import CONCURRENCY, COUNT, SEED, TURNS, add_llm_options, add_team_options, llm_options, team_sources
from wolfeclick.paths import recordings_dir, results_dir


def add_bench_parser(commands: argparse._SubParsersAction) -> None:
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
    add_llm_options(bench)


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
    check_specs((*parse_specs(args.players), *parse_specs(args.vs)), **llm_options(args))
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
                                             keep_recordings=args.recordings, llm_options=llm_options(args),
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


def add_leaderboard_parser(commands: argparse._SubParsersAction) -> None:
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
