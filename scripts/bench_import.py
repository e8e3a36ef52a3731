"""Import speed: a folder of Showdown server battle logs (re-simulated from their input logs) and the same battles
as protocol logs (public log only), through the ``import`` command's own code (``wolfeclick.interop.folder``).

    .venv/bin/python scripts/bench_import.py [--n 1000] [--distinct 100] [--write-doc]

``--distinct`` battles (random vs random, gen9randombattle, seeds 1…) are played here on the embedded simulator and
written in a Showdown server's shape (``devkit/server_logs.py``: input log with ``>version`` lines and avatar/rating
options, the room's omniscient log with joins, timers, chat and rating lines, ratings); the folder holds ``--n``
files, battle ``i % distinct`` under its own room id, so every file is imported and saved as its own recording.
Nothing is timed but the import itself (reading, re-simulating, checking the log, saving).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout first: its devkit/, scripts/ and wolfeclick/

from devkit.server_logs import room_log, server_log  # noqa: E402
from scripts.benchdoc import machine_busy, other_work_note, write_section  # noqa: E402
from wolfeclick.battle.batch import BattleJob, run_jobs  # noqa: E402
from wolfeclick.battle.specs import make_policy  # noqa: E402
from wolfeclick.interop.folder import import_files  # noqa: E402
from wolfeclick.sim.process import SimProcess  # noqa: E402

HEADING = "## Import: a folder of Showdown server logs"


async def battles(distinct: int) -> list:
    jobs = [BattleJob(make_policy("random"), make_policy("random"), "gen9randombattle", seed, 300)
            for seed in range(1, distinct + 1)]
    recordings = [recording async for _, recording in run_jobs(jobs, concurrency=4)]
    return sorted(recordings, key=lambda r: r.seed)


async def shapes(recordings: list) -> list[dict]:
    process = SimProcess()
    await process.start()
    try:
        return [await server_log(r, battle_id=f"gen9randombattle-{2100000000 + r.seed}", process=process)
                for r in recordings]
    finally:
        await process.close()


def own_cpu() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed_import(folder: Path, out: Path) -> tuple[float, object, float, float, float]:
    """(wall seconds, summary, other work in cores, load at the start, CPU seconds of this process and its
    simulators)."""
    busy, cpu, load = machine_busy(), own_cpu(), os.getloadavg()[0]
    started = time.perf_counter()
    summary = import_files([folder], out)
    wall = time.perf_counter() - started
    spent = own_cpu() - cpu
    other = max(0.0, (machine_busy() - busy) - spent) / wall
    return wall, summary, other, load, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--distinct", type=int, default=100)
    parser.add_argument("--write-doc", action="store_true")
    args = parser.parse_args()
    recordings = asyncio.run(battles(args.distinct))
    logs = asyncio.run(shapes(recordings))
    decisions = sum(len(r.turns) for r in recordings) / len(recordings)
    with tempfile.TemporaryDirectory(prefix="wolfeclick-bench-import-") as tmp:
        servers, protocol = Path(tmp) / "server", Path(tmp) / "protocol"
        servers.mkdir()
        protocol.mkdir()
        for i in range(args.n):
            raw = dict(logs[i % len(logs)], id=f"bench-{i:05d}", roomid=f"battle-bench-{i:05d}")
            (servers / f"bench-{i:05d}.log.json").write_text(json.dumps(raw))
            # the same battle as a protocol log, told apart by one chat line (dropped on import)
            text = "\n".join([f"|c|☆bench|{i}", *room_log(recordings[i % len(logs)].log, {"p1": "Alice", "p2": "Bob"})])
            (protocol / f"bench-{i:05d}.log").write_text(text)
        size = sum(p.stat().st_size for p in servers.iterdir()) / 1e6
        wall, summary, other, load, cpu = timed_import(servers, Path(tmp) / "out-server")
        print(f"server logs: {args.n} in {wall:.1f} s = {args.n / wall:.1f}/s, {cpu / args.n * 1000:.0f} ms CPU "
              f"each ({summary.line()}); other work {other:.2f} cores")
        pwall, psummary, pother, _, pcpu = timed_import(protocol, Path(tmp) / "out-protocol")
        print(f"protocol logs: {args.n} in {pwall:.1f} s = {args.n / pwall:.1f}/s, {pcpu / args.n * 1000:.0f} ms CPU "
              f"each ({psummary.line()}); other work {pother:.2f} cores")
    if not args.write_doc:
        return
    end_load = os.getloadavg()[0]
    write_section(HEADING, f"""{HEADING}

`.venv/bin/python scripts/bench_import.py --n {args.n} --distinct {args.distinct} --write-doc` ({os.cpu_count()} cores).
{args.n} server-log files ({size:.1f} MB; {args.distinct} distinct random-vs-random gen9 battles played here, {decisions:.0f}
decision points each on average, written in a Showdown server's shape by `devkit/server_logs.py`), imported by
`import_files` (what `import DIR` runs): read, re-simulated through the runner from the input log (both players'
state text, legal actions, rewards, snapshots), the file's log checked against a second re-simulation, saved.
One simulator serves the whole folder.

| files | wall | battles/s | CPU per file (Python + simulators) | result |
| --- | --- | --- | --- | --- |
| {args.n} server logs (re-simulated) | {wall:.1f} s | {args.n / wall:.1f} | {cpu / args.n * 1000:.0f} ms | {summary.line()} |
| {args.n} protocol logs of the same battles (public log only) | {pwall:.1f} s | {args.n / pwall:.1f} | \
{pcpu / args.n * 1000:.0f} ms | {psummary.line()} |

{other_work_note((f"{load:.2f}", f"{end_load:.2f}"), max(other, pother))}.
""")


if __name__ == "__main__":
    main()
