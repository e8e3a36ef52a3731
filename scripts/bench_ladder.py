"""Benchmark: battles per second through a local Showdown server (``ladder``) vs the embedded runner.

Same policies (heuristic vs random, both Arena policies), same format, one battle at a time on both paths (the
ladder plays its battles one after another), runs alternating in one process so drifting machine load hits both
alike:

- **embedded**: ``battle.batch.run_jobs`` on the embedded simulator, every battle recorded and saved;
- **ladder**: two ``LadderSession`` logins on one local ``pokemon-showdown`` server (``wolfeclick.sim.server``,
  127.0.0.1, the package's default process layout unless ``--lean``): heuristic accepts, random challenges; each
  side records and saves its own view of every battle, as two ``ladder`` commands would.

    .venv/bin/python scripts/bench_ladder.py --battles 10 --repeats 3 --out docs/benchmarks.md

Not a test: it prints a table and, with --out, rewrites its own section of that file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout first: its devkit/, scripts/ and wolfeclick/

from scripts.benchdoc import write_section  # noqa: E402
from wolfeclick.battle.batch import BattleJob, run_jobs  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.store import save_recording  # noqa: E402
from wolfeclick.ladder.play import LadderOptions, LadderSession  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402
from wolfeclick.sim.server import LocalServer  # noqa: E402

HEADING = "## Ladder: battles through a local Showdown server vs the embedded runner"
SEED0 = 60_000


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
        def save(recording) -> None:  # type: ignore[no-untyped-def]
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


async def race(url: str, args: argparse.Namespace, runs: dict[str, list[tuple[float, int]]]) -> None:
    async with SimPool(1) as pool:  # both paths keep their simulator(s) running between runs
        await ladder(url, 2, args.format, "w")  # warm-up: the server loads its random-battle data
        await embedded(pool, 2, args.format, SEED0 - 10)
        for repeat in range(args.repeats):  # alternate the paths so drifting machine load hits both alike
            runs["embedded"].append(await embedded(pool, args.battles, args.format, SEED0 + repeat * args.battles))
            runs["ladder"].append(await ladder(url, args.battles, args.format, str(repeat)))
            print(f"run {repeat + 1}: embedded {args.battles / runs['embedded'][-1][0]:.2f}, ladder "
                  f"{args.battles / runs['ladder'][-1][0]:.2f} battles/s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=10, help="battles per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per path; the median run is reported")
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--lean", action="store_true", help="a server without child processes (as the tests use)")
    parser.add_argument("--out", type=Path, default=None, help="rewrite this script's section of this file")
    args = parser.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still stops its server
    load0 = open("/proc/loadavg").read().split()[0]
    runs: dict[str, list[tuple[float, int]]] = {"embedded": [], "ladder": []}
    started = time.perf_counter()
    with LocalServer(lean=args.lean) as server:
        start_s = time.perf_counter() - started
        asyncio.run(race(server.url, args, runs))
    load1 = open("/proc/loadavg").read().split()[0]
    load1 = open("/proc/loadavg").read().split()[0]

    def median(path: str) -> tuple[float, int]:
        return sorted(runs[path])[(len(runs[path]) - 1) // 2]

    rows = []
    for path in ("embedded", "ladder"):
        wall, turns = median(path)
        rates = [args.battles / w for w, _ in runs[path]]
        rows.append(f"| {path} | {args.battles / wall:.2f} | {turns / wall:.0f} | "
                    f"{min(rates):.2f}–{max(rates):.2f} | {statistics.fmean(t for _, t in runs[path]) / args.battles:.1f} |")
    ratio = median("ladder")[0] / median("embedded")[0]  # embedded battles/s over ladder battles/s
    command = (f".venv/bin/python scripts/bench_ladder.py --battles {args.battles} --repeats {args.repeats}"
               + (" --lean" if args.lean else "") + " --out docs/benchmarks.md")
    body = "\n".join([
        HEADING,
        "",
        f"Heuristic vs random (both Arena policies), {args.format}, one battle at a time on both paths, "
        f"{args.battles} battles per run, median of {args.repeats} runs per path, the paths' runs alternating in one "
        f"process; {os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}. Load average {load0} at the start and {load1} at the end: **the machine was "
        "loaded** by other engineers' test runs, so rates move by tens of percent between runs. *embedded* plays on "
        "the embedded simulator and saves one recording per battle; *ladder* is two `LadderSession` logins (heuristic "
        "accepting, random challenging) on one local `pokemon-showdown` server (`wolfeclick.sim.server.LocalServer`, "
        f"127.0.0.1, {'no child processes (--lean)' if args.lean else 'the package default process layout'}), each "
        "side saving its own recording of every battle. The server picks its own seeds, so the two paths play "
        "different battles; turns per battle are shown. The server took "
        f"{start_s:.1f} s to start and answer its first client (not counted).",
        "",
        "| path | battles/s | turns/s | battles/s range | turns per battle |",
        "| --- | --- | --- | --- | --- |",
        *rows,
        "",
        f"The embedded runner plays **{ratio:.1f}×** the battles per second of the server path here: the server adds "
        "the challenge/accept handshake per battle and a websocket round trip through the server's processes per "
        "decision, and both sides track and record the battle on their own.",
        "",
        f"Reproduce: `{command}`",
        "",
    ])
    print(body)
    if args.out:
        write_section(HEADING, body, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
