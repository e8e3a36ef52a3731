"""Benchmark: battles per second through a local Showdown server (``ladder``) vs the embedded runner.

Same policies (heuristic vs random, both Arena policies), same format, one battle at a time on both paths (the
ladder plays its battles one after another), runs alternating in one process so drifting machine load hits both
alike:

- **embedded**: ``battle.batch.run_jobs`` on the embedded simulator, every battle recorded and saved;
- **ladder**: two ``LadderSession`` logins on one local ``pokemon-showdown`` server (``wolfeclick.sim.server``,
  127.0.0.1, the package's default process layout unless ``--lean``): heuristic accepts, random challenges; each
  side records and saves its own view of every battle, as two ``ladder`` commands would.

    .venv/bin/python -m benchmarks.ladder [--battles 10] [--repeats 3] [--format gen9randombattle] [--lean]
"""

from __future__ import annotations

import asyncio
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import save_recording
from wolfeclick.ladder.play import LadderOptions, LadderSession
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.server import LocalServer

NAME = "ladder"
HEADING = "## Ladder: battles through a local Showdown server vs the embedded runner"
SEED0 = 60_000
PATHS = ("embedded", "ladder")


async def embedded(pool: SimPool, n: int, format_id: str, seed0: int) -> tuple[float, int]:
    """(seconds, turns) for ``n`` battles, one at a time on a started simulator, recorded and saved."""
    jobs = [BattleJob(make_policy("random"), make_policy("heuristic"), format_id, seed0 + i) for i in range(n)]
    turns = 0
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        async for _, recording in run_jobs(jobs, concurrency=1, pool=pool):
            await asyncio.to_thread(save_recording, recording, Path(out))
            turns += recording.result.turns
        return time.perf_counter() - started, turns


async def ladder(url: str, n: int, format_id: str, tag: str) -> tuple[float, int]:
    """(seconds, turns) for ``n`` battles through the server, both sides saving their recordings."""
    with tempfile.TemporaryDirectory() as out:
        def save(recording: Recording) -> None:
            save_recording(recording, Path(out))

        host = f"BenchH{tag}"
        accept = LadderSession(make_policy("heuristic"), LadderOptions(url, format_id, n=n, mode="accept",
                                                                        username=host, timeout=120, wait=120),
                               on_recording=save)
        challenge = LadderSession(make_policy("random"), LadderOptions(url, format_id, n=n, mode="challenge",
                                                                        opponent=host, username=f"BenchR{tag}",
                                                                        timeout=120, wait=120), on_recording=save)
        started = time.perf_counter()
        done, _ = await asyncio.gather(accept.run(), challenge.run())
        wall = time.perf_counter() - started
    if len(done.recordings) != n or any(r.result.reason == "aborted" for r in done.recordings):
        raise SystemExit(f"ladder run incomplete: {done.stopped}")
    return wall, sum(r.result.turns for r in done.recordings)


async def race(url: str, battles: int, repeats: int, format_id: str) -> dict[str, list[list[float]]]:
    """Each path's runs as [seconds, turns], the paths alternating after one warm-up each."""
    runs: dict[str, list[list[float]]] = {path: [] for path in PATHS}
    async with SimPool(1) as pool:  # both paths keep their simulator(s) running between runs
        await ladder(url, 2, format_id, "w")  # warm-up: the server loads its random-battle data
        await embedded(pool, 2, format_id, SEED0 - 10)
        for repeat in range(repeats):  # alternate the paths so drifting machine load hits both alike
            runs["embedded"].append(list(await embedded(pool, battles, format_id, SEED0 + repeat * battles)))
            runs["ladder"].append(list(await ladder(url, battles, format_id, str(repeat))))
            print(f"run {repeat + 1}: embedded {battles / runs['embedded'][-1][0]:.2f}, ladder "
                  f"{battles / runs['ladder'][-1][0]:.2f} battles/s", file=sys.stderr, flush=True)
    return runs


def measure(battles: int, repeats: int, format_id: str, lean: bool) -> dict[str, Any]:
    """The server's start (to its first client) in seconds, and every run of both paths."""
    started = time.perf_counter()
    with LocalServer(lean=lean) as server:
        start_s = time.perf_counter() - started
        runs = asyncio.run(race(server.url, battles, repeats, format_id))
    return {"server_start_s": round(start_s, 2), "runs": runs}


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    battles, runs = p["battles"], r["runs"]

    def median(path: str) -> list[float]:
        return sorted(runs[path])[(len(runs[path]) - 1) // 2]

    rows = []
    for path in PATHS:
        wall, turns = median(path)
        rates = [battles / w for w, _ in runs[path]]
        rows.append(f"| {path} | {battles / wall:.2f} | {turns / wall:.0f} | {min(rates):.2f}–{max(rates):.2f} "
                    f"| {statistics.fmean(t for _, t in runs[path]) / battles:.1f} |")
    ratio = median("ladder")[0] / median("embedded")[0]  # embedded battles/s over ladder battles/s
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}`: heuristic vs random (both Arena policies), {p['format']}, one battle at a time on both "
        f"paths, {battles} battles per run, median of {p['repeats']} runs per path, the paths' runs alternating in "
        "one process. *embedded* plays on the embedded simulator and saves one recording per battle; *ladder* is two "
        "`LadderSession` logins (heuristic accepting, random challenging) on one local `pokemon-showdown` server "
        "(`wolfeclick.sim.server.LocalServer`, 127.0.0.1, "
        f"{'no child processes (--lean)' if p['lean'] else 'the package default process layout'}), each side saving "
        "its own recording of every battle. The server picks its own seeds, so the two paths play different battles; "
        f"turns per battle are shown. The server took {r['server_start_s']:.1f} s to start and answer its first "
        "client (not counted).",
        "",
        harness.describe(result),
        "",
        "| path | battles/s | turns/s | battles/s range | turns per battle |",
        "| --- | --- | --- | --- | --- |",
        *rows,
        "",
        f"The embedded runner plays **{ratio:.1f}×** the battles per second of the server path here: the server adds "
        "the challenge/accept handshake per battle and a websocket round trip through the server's processes per "
        "decision, and both sides track and record the battle on their own.",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=10, help="battles per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per path; the median run is reported")
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--lean", action="store_true", help="a server without child processes (as the tests use)")
    args = parser.parse_args(argv)
    with harness.measure() as run:
        results = measure(args.battles, args.repeats, args.format, args.lean)
    harness.finish(NAME, argv, {"battles": args.battles, "repeats": args.repeats, "format": args.format,
                                "lean": args.lean}, results, run, args.results)
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still stops its server
    raise SystemExit(main())
