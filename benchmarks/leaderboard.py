"""Rebuilding the history index and the leaderboard from 10,000 result rows.

The rows reuse the outcomes of one real tournament (played here first, 3 baselines × 20 pairs = 120 battles, no
recordings): each copy is a tournament of its own (another seed, so another id and schedule) whose rows keep the
played winners, turns and counts but take that schedule's seeds and ids, so ``load_results`` checks them like
any other. Timed, fastest of ``--repeats``: the scan of every ``results.jsonl`` plus the SQLite write
(``history.rebuild_index``), reading it back (``read_index``), and the leaderboard itself (``leaderboard``:
pooled Bradley–Terry with the 1000-round pair bootstrap and profile-likelihood intervals, Glicko-2 per
tournament). The leaderboard is also checked to be byte-identical on every repeat.

    .venv/bin/python -m benchmarks.leaderboard [--rows 10000] [--repeats 3] [--pairs 20]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.arena.history import read_index, rebuild_index
from wolfeclick.arena.leaderboard import leaderboard
from wolfeclick.arena.results import ResultRow, row_line
from wolfeclick.arena.schedule import TournamentConfig, build_schedule
from wolfeclick.arena.tournament import CONFIG_FILE, RESULTS_FILE, load_results, run_tournament

NAME = "leaderboard"
HEADING = "## Leaderboard: history index and table from 10,000 rows"
PLAYERS = ("random", "maxdamage", "heuristic")


def _write_copies(rows: list[ResultRow], base: TournamentConfig, copies: int, out: Path) -> int:
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
            copy = row.copy()
            copy["tournament"], copy["seed"], copy["recording"] = config.id, battle.seed, battle.battle_id
            lines.append(row_line(copy))
        (directory / RESULTS_FILE).write_text("".join(lines))
        total += len(lines)
    return total


def measure(rows_wanted: int, repeats: int, pairs: int) -> dict[str, Any]:
    """The fastest of ``repeats`` timings of each step, in seconds, with the row and tournament counts."""
    with tempfile.TemporaryDirectory() as tmp:
        played = Path(tmp) / "played"
        base = TournamentConfig(players=PLAYERS, pairs=pairs, format="gen9randombattle", seed=1)
        asyncio.run(run_tournament(base, played, concurrency=2, keep_recordings=False))
        _, rows = load_results(played / base.id)
        results = Path(tmp) / "results"
        copies = -(-rows_wanted // len(rows))
        total = _write_copies(rows, base, copies, results)

        timings: dict[str, list[float]] = {"rebuild": [], "read": [], "table": []}
        outputs = set()
        for _ in range(repeats):
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
    return {"rows": total, "tournaments": copies, "played": len(rows), "identical": True,
            "seconds": {k: min(v) for k, v in timings.items()}}


def render(result: harness.Result) -> str:
    r, p = result.results, result.params
    best = r["seconds"]
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}`: {r['rows']} result rows in {r['tournaments']} tournaments (the outcomes of one real "
        f"{r['played']}-battle round robin of {', '.join(PLAYERS)}, re-dealt under other seeds), no recordings. "
        f"Fastest of {p['repeats']} runs; the leaderboard was byte-identical on every run.",
        "",
        harness.describe(result),
        "",
        "| step | seconds |",
        "|---|---:|",
        f"| scan every `results.jsonl` + write `history.sqlite` (`rebuild_index`) | {best['rebuild']:.2f} |",
        f"| read the index back (`read_index`) | {best['read']:.2f} |",
        f"| leaderboard: pooled Bradley–Terry, 1000-round pair bootstrap, profile likelihood, Glicko-2 "
        f"({r['tournaments']} periods) | {best['table']:.2f} |",
        f"| **total** | **{sum(best.values()):.2f}** |",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=20, help="pairs per pairing of the tournament played first")
    args = parser.parse_args(argv)
    with harness.measure() as run:
        results = measure(args.rows, args.repeats, args.pairs)
    harness.finish(NAME, argv, {"rows": args.rows, "repeats": args.repeats, "pairs": args.pairs}, results, run,
                   args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
