"""Rebuilding the history index and the leaderboard from 10,000 result rows, written to docs/benchmarks.md.

The rows reuse the outcomes of one real tournament (played here first, 3 baselines × 20 pairs = 120 battles, no
recordings): each copy is a tournament of its own (another seed, so another id and schedule) whose rows keep the
played winners, turns and counts but take that schedule's seeds and ids, so ``load_results`` checks them like
any other. Timed, fastest of ``--repeats``: the scan of every ``results.jsonl`` plus the SQLite write
(``history.rebuild_index``), reading it back (``read_index``), and the leaderboard itself (``leaderboard``:
pooled Bradley–Terry with the 1000-round pair bootstrap and profile-likelihood intervals, Glicko-2 per
tournament). The leaderboard is also checked to be byte-identical on every repeat.

    .venv/bin/python scripts/bench_leaderboard.py [--rows 10000] [--repeats 3] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout first: its devkit/, scripts/ and wolfeclick/
from scripts.benchdoc import write_section  # noqa: E402
from wolfeclick.arena.history import read_index, rebuild_index  # noqa: E402
from wolfeclick.arena.leaderboard import leaderboard  # noqa: E402
from wolfeclick.arena.results import row_line  # noqa: E402
from wolfeclick.arena.schedule import TournamentConfig, build_schedule  # noqa: E402
from wolfeclick.arena.tournament import CONFIG_FILE, RESULTS_FILE, load_results, run_tournament  # noqa: E402

HEADING = "## Leaderboard: history index and table from 10,000 rows"
PLAYERS = ("random", "maxdamage", "heuristic")


def _write_copies(rows: list[dict], base: TournamentConfig, copies: int, out: Path) -> int:
    """``copies`` tournaments under ``out`` whose rows reuse ``rows``' outcomes; returns the row count."""
    total = 0
    for c in range(copies):
        config = TournamentConfig(players=base.players, pairs=base.pairs, format=base.format, seed=10_000 + c)
        schedule = build_schedule(config)
        directory = out / config.id
        directory.mkdir(parents=True)
        (directory / CONFIG_FILE).write_text(json.dumps({"id": config.id, **config.to_dict()}, indent=2,
                                                        sort_keys=True) + "\n")
        lines = []
        for row in rows:
            battle = schedule[row["index"]]
            lines.append(row_line({**row, "tournament": config.id, "seed": battle.seed,
                                   "recording": battle.battle_id}))
        (directory / RESULTS_FILE).write_text("".join(lines))
        total += len(lines)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print the section, leave docs/benchmarks.md")
    args = parser.parse_args()

    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        played = Path(tmp) / "played"
        base = TournamentConfig(players=PLAYERS, pairs=20, format="gen9randombattle", seed=1)
        asyncio.run(run_tournament(base, played, concurrency=2, keep_recordings=False))
        _, rows = load_results(played / base.id)
        results = Path(tmp) / "results"
        copies = -(-args.rows // len(rows))
        total = _write_copies(rows, base, copies, results)

        timings: dict[str, list[float]] = {"rebuild": [], "read": [], "table": []}
        outputs = set()
        for _ in range(args.repeats):
            (results / "history.sqlite").unlink(missing_ok=True)
            t0 = time.perf_counter()
            index, scan = rebuild_index(results)
            t1 = time.perf_counter()
            entries = read_index(index)
            t2 = time.perf_counter()
            board = leaderboard(entries)
            t3 = time.perf_counter()
            timings["rebuild"].append(t1 - t0)
            timings["read"].append(t2 - t1)
            timings["table"].append(t3 - t2)
            outputs.add(board.to_json())
            assert len(scan.entries) == total
        assert len(outputs) == 1, "the leaderboard changed between identical rebuilds"
    load_end = os.getloadavg()[0]

    best = {k: min(v) for k, v in timings.items()}
    command = f".venv/bin/python scripts/bench_leaderboard.py --rows {args.rows} --repeats {args.repeats}"
    text = "\n".join([
        HEADING,
        "",
        f"`{command}`: {total} result rows in {copies} tournaments (the outcomes of one real 120-battle round robin "
        "of random, maxdamage, heuristic, re-dealt under other seeds), no recordings. Fastest of "
        f"{args.repeats} runs; the leaderboard was byte-identical on every run.",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.system()}; measured {datetime.date.today().isoformat()}, load average {load_start:.1f} at the "
        f"start and {load_end:.1f} at the end (other engineers' tests ran meanwhile).",
        "",
        "| step | seconds |",
        "|---|---:|",
        f"| scan every `results.jsonl` + write `history.sqlite` (`rebuild_index`) | {best['rebuild']:.2f} |",
        f"| read the index back (`read_index`) | {best['read']:.2f} |",
        f"| leaderboard: pooled Bradley–Terry, 1000-round pair bootstrap, profile likelihood, Glicko-2 "
        f"({copies} periods) | {best['table']:.2f} |",
        f"| **total** | **{sum(best.values()):.2f}** |",
    ])
    print(text)
    if not args.no_write:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
