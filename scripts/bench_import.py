"""Import speed: a folder of Showdown protocol logs (public log only) and the same battles as Showdown server battle
logs (re-simulated from their input logs), through the ``import`` command's own code (``wolfeclick.interop.folder``),
serially and in worker processes (and with ``--ray`` as Ray tasks on a local instance); every run's files are
compared byte for byte with the serial run's.

    .venv/bin/python scripts/bench_import.py [--n 1000] [--server-n 300] [--distinct 100] [--ray] [--write-doc]

``--distinct`` battles (random vs random, gen9randombattle, seeds 1…) are played here on the embedded simulator and
written in a Showdown server's shape (``devkit/server_logs.py``: input log with ``>version`` lines and avatar/rating
options, the room's omniscient log with joins, timers, chat and rating lines, ratings); the folders hold ``--n``
protocol logs and ``--server-n`` server logs, battle ``i % distinct`` under its own room id (a protocol log told apart
by a chat line, dropped on import), so every file is imported and saved as its own recording. Nothing is timed but
the import itself (reading, importing, saving). CPU seconds (this process, its worker processes and their simulators,
all reaped by the end) do not depend on the machine's other work; the floor is what only reading the files and
splitting them into protocol lines costs, and for a server log one simulation of its battle by the simulator.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout first: its devkit/, scripts/ and wolfeclick/

from devkit.server_logs import room_log, server_log  # noqa: E402
from scripts.benchdoc import machine_busy, other_work_note, write_section  # noqa: E402
from wolfeclick.battle.batch import BattleJob, run_jobs  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.interop.folder import import_files, read_bounded  # noqa: E402
from wolfeclick.interop.public import clean_log  # noqa: E402
from wolfeclick.interop.serverlog import input_log_of, read_input_log  # noqa: E402
from wolfeclick.sim.process import SimProcess, cpu_seconds  # noqa: E402

HEADING = "## Import: a folder of Showdown logs"
CREATED = "2026-01-01T00:00:00+00:00"
"""Every run's stamp, so that runs can be compared byte for byte."""


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


def files_of(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


def timed_import(folder: Path, out: Path, **options: Any) -> dict:
    """Wall seconds, the summary, other work in cores, the load at the start, CPU seconds of this process and its
    workers and simulators, and the files written."""
    busy, cpu, load = machine_busy(), own_cpu(), os.getloadavg()[0]
    started = time.perf_counter()
    summary = import_files([folder], out, created=CREATED, **options)
    wall = time.perf_counter() - started
    spent = own_cpu() - cpu
    other = max(0.0, (machine_busy() - busy) - spent) / wall
    return {"wall": wall, "summary": summary, "other": other, "load": load, "cpu": spent, "files": files_of(out)}


def floor_read(folder: Path) -> float:
    """CPU seconds to read every file and split it into protocol lines (the JSON parsed for a server log)."""
    started = time.process_time()
    for path in sorted(folder.iterdir()):
        data = read_bounded(path).decode("utf-8")
        if data.startswith("{"):
            log = json.loads(data)["log"]
            clean_log(log if isinstance(log, list) else log.split("\n"))
        else:
            clean_log(data.split("\n"))
    return time.process_time() - started


async def floor_simulate(folder: Path, count: int) -> float:
    """Seconds of simulator CPU to play each of the first ``count`` server logs' battles once from its input
    log (the simulator's ``resim``: nothing but the battle)."""
    process = SimProcess()
    await process.start()
    try:
        scripts = []
        for path in sorted(folder.iterdir())[:count]:
            script = read_input_log(input_log_of(json.loads(path.read_bytes())))
            lines = [line for line in json.loads(path.read_bytes())["inputLog"] if line[:4] in (">p1 ", ">p2 ")]
            scripts.append([*script.opening, *lines])
        await process.call("resim", lines=scripts[0])  # warm
        pid = [process.pid] if process.pid else []
        before = cpu_seconds(pid)
        for lines in scripts:
            await process.call("resim", lines=lines)
        after = cpu_seconds(pid)
        return (after - before) / len(scripts)
    finally:
        await process.close()


def row(label: str, n: int, run: dict, same: str) -> str:
    cpu = f"{run['cpu'] / n * 1000:.0f} ms" + (" (this process only: Ray's workers are not its children)"
                                               if "Ray" in label else "")
    return (f"| {label} | {n} | {run['wall']:.1f} s | {n / run['wall']:.1f} | {cpu} | "
            f"{run['load']:.1f} | {run['other']:.2f} | {same} | {run['summary'].line()} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="protocol logs")
    parser.add_argument("--server-n", type=int, default=300, help="server logs")
    parser.add_argument("--distinct", type=int, default=100)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ray", action="store_true", help="also import on a local Ray instance")
    parser.add_argument("--write-doc", action="store_true")
    args = parser.parse_args()
    recordings = asyncio.run(battles(args.distinct))
    logs = asyncio.run(shapes(recordings))
    decisions = sum(len(r.turns) for r in recordings) / len(recordings)
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="wolfeclick-bench-import-") as tmp:
        servers, protocol = Path(tmp) / "server", Path(tmp) / "protocol"
        servers.mkdir()
        protocol.mkdir()
        for i in range(args.server_n):
            raw = dict(logs[i % len(logs)], id=f"bench-{i:05d}", roomid=f"battle-bench-{i:05d}")
            (servers / f"bench-{i:05d}.log.json").write_text(json.dumps(raw))
        for i in range(args.n):
            # the same battle as a protocol log, told apart by one chat line (dropped on import)
            text = "\n".join([f"|c|☆bench|{i}", *room_log(recordings[i % len(logs)].log, {"p1": "Alice", "p2": "Bob"})])
            (protocol / f"bench-{i:05d}.log").write_text(text)
        size = sum(p.stat().st_size for p in servers.iterdir()) / max(1, args.server_n) / 1e3
        psize = sum(p.stat().st_size for p in protocol.iterdir()) / max(1, args.n) / 1e3
        floors = {"protocol": floor_read(protocol) / args.n, "server": floor_read(servers) / args.server_n}
        simulate = asyncio.run(floor_simulate(servers, min(20, args.server_n)))
        for kind, folder, n in (("protocol logs", protocol, args.n), ("server logs", servers, args.server_n)):
            runs: dict[str, dict] = {}
            for label, options in (("serial (1 worker)", {"workers": 1}),
                                   (f"{args.workers} worker processes", {"workers": args.workers}),
                                   *([(f"Ray, {args.workers} tasks at once (local instance)",
                                       {"workers": args.workers, "engine": "ray"})] if args.ray else [])):
                out = Path(tmp) / f"out-{kind.split()[0]}-{len(runs)}"
                runs[label] = run = timed_import(folder, out, **options)
                shutil.rmtree(out)
                first = next(iter(runs.values()))
                same = "–" if run is first else ("same bytes" if run["files"] == first["files"] else "**differ**")
                rows.append(row(f"{kind}, {label}", n, run, same))
                print(rows[-1], flush=True)
                run["files"] = first["files"] if same == "same bytes" else run["files"]
    print(f"floor: read + split into lines {floors['protocol'] * 1000:.1f} ms a protocol log, "
          f"{floors['server'] * 1000:.1f} ms a server log; one simulation of a server log's battle "
          f"{simulate * 1000:.0f} ms of simulator CPU")
    if not args.write_doc:
        return
    end_load = os.getloadavg()[0]
    other = max(float(line.split(" | ")[6]) for line in rows)
    command = (f"nice -n 10 .venv/bin/python scripts/bench_import.py --n {args.n} --server-n {args.server_n} "
               f"--distinct {args.distinct}{' --ray' if args.ray else ''} --write-doc")
    write_section(HEADING, f"""{HEADING}

`{command}` ({os.cpu_count()} cores, {args.workers} workers).
{args.distinct} distinct random-vs-random gen9 battles played here ({decisions:.0f} decision points each on average),
written as Showdown protocol logs ({psize:.0f} kB each) and in a Showdown server's shape by `devkit/server_logs.py`
({size:.0f} kB each), imported by `import_files` (what `import DIR` runs). A protocol log: read, its public log
replayed into both sides' trackers (snapshots, shaped rewards), the recording built, validated and saved. A server
log: read, re-simulated through the runner from its input log (both players' state text, legal actions, rewards,
snapshots), the file's log checked against that simulation's own output, saved. Workers are processes, each with a
simulator of its own; the files are saved as a serial save in input order would, their writes side by side. Every
run is compared byte for byte with the serial one (all stamped with one `created`).

| files | n | wall | battles/s | CPU per file (Python + workers + simulators) | load at start | other work (cores) | output | result |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Floor, per file, whatever the machine's load: reading it and splitting it into protocol lines {floors['protocol'] * 1000:.1f} ms
(protocol log) and {floors['server'] * 1000:.1f} ms (server log, its JSON parsed); one simulation of a server log's battle
by the simulator alone (`resim`, nothing recorded) {simulate * 1000:.0f} ms of simulator CPU.

{other_work_note((f"{rows and float(rows[0].split(' | ')[5]):.2f}", f"{end_load:.2f}"), other)}.
""")


if __name__ == "__main__":
    main()
