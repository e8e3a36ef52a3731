"""Benchmark: heuristic-vs-random battles per second, WolfeClick's embedded runner vs poke-env on a stock server.

Both sides play the same policies (poke-env's SimpleHeuristicsPlayer vs RandomPlayer) in the same format at the same
number of battles in flight. The WolfeClick side records every battle to JSON (state markdown, legal actions,
rewards, snapshots) as it goes; the stock side is poke-env's own players over websockets to a local
``pokemon-showdown start --no-security`` server bound to 127.0.0.1 (started and stopped by this script).

    .venv/bin/python scripts/bench_battles.py --battles 100 --concurrency 1 4 --out docs/benchmarks.md

Not a test: it prints a table and, with --out, rewrites the "Battle core" section of that file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wolfeclick.battle.batch import BattleJob, run_jobs  # noqa: E402
from wolfeclick.battle.specs import make_policy  # noqa: E402
from wolfeclick.battle.store import save_recording  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdoc import write_section  # noqa: E402

SHOWDOWN = ROOT / "node_modules" / "pokemon-showdown"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def bench_wolfeclick(pool: SimPool, n: int, concurrency: int, format_id: str) -> tuple[float, int]:
    heuristic, random_ = make_policy("heuristic"), make_policy("random")
    jobs = [BattleJob(heuristic, random_, format_id, 50_000 + i) for i in range(n)]
    turns = 0
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        async for _, recording in run_jobs(jobs, concurrency=concurrency, pool=pool):
            await asyncio.to_thread(save_recording, recording, Path(out))  # as the CLI does
            turns += recording.result.turns
        return time.perf_counter() - started, turns


async def bench_wolfeclick_cells(n: int, cells: list[int], format_id: str, warmup: int) -> list[tuple[float, int]]:
    """One long-lived pool for every cell, warmed up first, as a long-running server is."""
    async with SimPool() as pool:
        if warmup:
            await bench_wolfeclick(pool, warmup, max(cells), format_id)
        return [await bench_wolfeclick(pool, n, k, format_id) for k in cells]


class StockServer:
    """``pokemon-showdown start --no-security`` on 127.0.0.1 only (config written before start)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "StockServer":
        config = SHOWDOWN / "config" / "config.js"
        example = SHOWDOWN / "config" / "config-example.js"
        text = example.read_text()
        text += "\n// WolfeClick benchmark: never listen beyond loopback; no REPL sockets.\n"
        text += "exports.bindaddress = '127.0.0.1';\nexports.repl = false;\n"
        config.write_text(text)
        (SHOWDOWN / "logs" / "repl").mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            ["node", str(SHOWDOWN / "pokemon-showdown"), "start", "--no-security", "--skip-build", str(self.port)],
            cwd=SHOWDOWN, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    time.sleep(1.0)
                    return self
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("stock Showdown server did not start")

    def __exit__(self, *exc: object) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)


def stock_players(server: StockServer, concurrency: int, format_id: str):  # type: ignore[no-untyped-def]
    from poke_env import AccountConfiguration, ServerConfiguration
    from poke_env.player import RandomPlayer, SimpleHeuristicsPlayer

    config = ServerConfiguration(f"ws://127.0.0.1:{server.port}/showdown/websocket", None)
    tag = f"{concurrency}{int(time.time() * 1000) % 100000}"
    heuristic = SimpleHeuristicsPlayer(AccountConfiguration(f"bh{tag}", None), server_configuration=config,
                                       battle_format=format_id, max_concurrent_battles=concurrency, log_level=50)
    random_ = RandomPlayer(AccountConfiguration(f"br{tag}", None), server_configuration=config,
                           battle_format=format_id, max_concurrent_battles=concurrency, log_level=50)
    return heuristic, random_


def bench_stock(server: StockServer, n: int, concurrency: int, format_id: str) -> tuple[float, int]:
    from poke_env.concurrency import POKE_LOOP

    heuristic, random_ = stock_players(server, concurrency, format_id)
    started = time.perf_counter()
    asyncio.run_coroutine_threadsafe(heuristic.battle_against(random_, n_battles=n), POKE_LOOP).result()
    elapsed = time.perf_counter() - started
    turns = sum(b.turn for b in heuristic.battles.values())
    return elapsed, turns


def markdown(rows: list[dict], n: int, repeats: int, format_id: str, command: str) -> str:
    lines = [
        "## Battle core: embedded runner vs poke-env on a stock server",
        "",
        f"Heuristic vs random, {format_id}, {n} battles per run, median of {repeats} runs per cell, on this machine "
        f"({os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python {platform.python_version()}).",
        "WolfeClick records every battle to JSON; the stock path is poke-env's own players over websockets to "
        "`pokemon-showdown start --no-security` on 127.0.0.1. Both paths are warmed up first (a long-running server "
        "has its data loaded); WolfeClick runs one simulator process per core but one (`SimPool` default).",
        "",
        "| in flight | WolfeClick battles/s | WolfeClick turns/s | stock battles/s | stock turns/s | speed-up |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(f"| {row['k']} | {row['ours']:.1f} | {row['ours_t']:.0f} | {row['stock']:.1f} | "
                     f"{row['stock_t']:.0f} | {row['ours'] / row['stock']:.2f}× |")
    lines += ["", f"Reproduce: `{command}`", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=100)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--repeats", type=int, default=3, help="runs per cell; the median run is reported")
    parser.add_argument("--warmup", type=int, default=20, help="battles played on each path before timing")
    parser.add_argument("--out", type=Path, default=None, help="rewrite the Battle core section of this file")
    args = parser.parse_args()
    if shutil.which("node") is None:
        print("error: node not found", file=sys.stderr)
        return 2
    rows = []
    samples: dict[int, dict[str, list[tuple[float, int]]]] = {k: {"ours": [], "stock": []} for k in args.concurrency}
    with StockServer() as server:
        if args.warmup:
            bench_stock(server, args.warmup, max(args.concurrency), args.format)
        for _ in range(args.repeats):  # alternate the two paths so drifting machine load hits both alike
            ours = asyncio.run(bench_wolfeclick_cells(args.battles, args.concurrency, args.format, args.warmup))
            for k, result in zip(args.concurrency, ours):
                samples[k]["ours"].append(result)
                samples[k]["stock"].append(bench_stock(server, args.battles, k, args.format))
    for k in args.concurrency:
        ours_s, ours_turns = statistics.median_low(samples[k]["ours"])
        stock, stock_turns = statistics.median_low(samples[k]["stock"])
        row = {"k": k, "ours": args.battles / ours_s, "ours_t": ours_turns / ours_s,
               "stock": args.battles / stock, "stock_t": stock_turns / stock}
        rows.append(row)
        print(f"in flight {k}: wolfeclick {row['ours']:.1f} battles/s, stock {row['stock']:.1f} battles/s, "
              f"×{row['ours'] / row['stock']:.2f}", flush=True)
    command = "make setup && .venv/bin/python scripts/bench_battles.py --battles {} --repeats {} --concurrency {} " \
              "--out docs/benchmarks.md".format(args.battles, args.repeats, " ".join(map(str, args.concurrency)))
    body = markdown(rows, args.battles, args.repeats, args.format, command)
    print(body)
    if args.out:
        write_section("## Battle core: embedded runner vs poke-env on a stock server", body, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
