"""Battle core: heuristic-vs-random battles per second — WolfeClick's embedded runner, the bare simulator, and poke-env
on a stock server — plus a CPU profile of one decision point.

Every path plays the same format and seeds (so the same teams) at the same number in flight:

- **WolfeClick**: the real runner (``battle.batch.run_jobs``) with poke-env's SimpleHeuristicsPlayer vs RandomPlayer,
  recording every battle to JSON (state markdown, legal actions, rewards, snapshots) and saving it, as the CLI does.
- **replayed**: exactly WolfeClick's battles again, their recorded choices fed straight back to the same simulator
  processes (no trackers, no policies, no recording): the simulator's own cost of those battles, the practical limit.
- **bare simulator**: the same seeds on the same simulator processes driven by the simplest loop there is (random
  choices straight from the requests; no trackers, no state, no recording).
- **stock**: poke-env's own players over websockets to a local ``pokemon-showdown start --no-security`` server bound
  to 127.0.0.1 (started and stopped here).

Runs alternate between the paths so drifting machine load hits all alike; besides wall-clock rates, each path's CPU
time per decision point (Python process + simulator or server processes, from /proc) is reported, which a busy
machine disturbs far less.

    .venv/bin/python -m benchmarks.battles --battles 100 --concurrency 1 4 16
    .venv/bin/python -m benchmarks.battles --alternate 5 --battles 100 --concurrency 4 16 --warmup 5
    .venv/bin/python -m benchmarks.battles --profile 30 --baseline 02a6ff5
    .venv/bin/python -m benchmarks.battles --python 5 --baseline df479d4 --python-instructions

``--python`` measures the Python side alone: the recorded path (heuristic against heuristic, maxdamage and random,
gen9 and gen4) with the simulator's replies captured once and replayed without Node, so this process's CPU time per
turn is all Python's; ``--baseline`` replays the same capture through an older checkout, alternating, and
``--python-instructions`` adds each checkout's instruction count per turn (valgrind), which other load cannot move.

Four kinds of run, four results and sections: ``battles`` (the race), ``battles_alternate`` (``--alternate``),
``battles_profile`` (``--profile``) and ``battles_python`` (``--python``); ``python -m benchmarks`` renders them.
An older checkout (``--baseline``) runs in a fresh interpreter whose ``wolfeclick`` is that checkout's
(``PYTHONPATH``, with ``-P`` so that the checkout's own comes second; its ``benchmarks/`` is left out of the copy).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import orjson

from benchmarks import harness
from benchmarks.cpu_sampler import CpuSampler
from wolfeclick.battle.batch import BattleJob, relaxed_gc, run_jobs
from wolfeclick.battle.lean import play_winner
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.store import save_recording
from wolfeclick.game.actions import legal_actions
from wolfeclick.sim.process import SHOWDOWN_DIR, SimPool, SimProcess
from wolfeclick.sim.process import cpu_seconds as proc_cpu
from wolfeclick.sim.protocol import check_input_lines, start_lines

ROOT = harness.ROOT
NAME = "battles"
SHOWDOWN = SHOWDOWN_DIR
HEADING = "## Battle core: embedded runner vs poke-env on a stock server"
PROFILE_HEADING = "## Battle core: where the CPU goes per decision point"
SEED0 = 50_000
SIZING_WARMUP = 300
"""Battles of warm-up before --alternate's rounds: the pool rule (``battle.batch.PoolSizer``) waits for 3 s of a
fresh simulator's CPU, then reads 2 s more (about 180 gen9 battles at 16 in flight)."""
ALTERNATE_HEADING = "## Battle core: WolfeClick and stock alternating"


@dataclass
class Sample:
    """One timed run of one path."""

    wall: float
    turns: int
    points: int
    """Decision points: one per request answered (both sides at once count once)."""
    cpu: float
    """CPU seconds: this Python process plus the simulator (or server) processes."""
    python: float = 0.0
    """Of ``cpu``, this Python process's seconds (the rest is the simulator or server processes')."""
    load: float = 0.0
    """The 1-minute load average when the run ended."""

    @property
    def others(self) -> float:
        return self.cpu - self.python


def session_pids(session: int) -> list[int]:
    """Every process in a session (the stock server and the simulator workers it forks)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3]) == session:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def pool_pids(pool: SimPool) -> list[int]:
    return [p.pid for p in pool.processes if p.pid is not None]


# --- WolfeClick ------------------------------------------------------------------------------------------------
async def bench_wolfeclick(pool: SimPool, n: int, concurrency: int, format_id: str, seed0: int = SEED0,
                           choices: dict[int, list[str]] | None = None, size_pool: bool = False) -> Sample:
    """``choices``, when given, is filled with each battle's choices by seed (for ``bench_replayed``); with
    ``size_pool`` the batch sizes the pool as the CLI's own pool is sized (``run_jobs``)."""
    heuristic, random_ = make_policy("heuristic"), make_policy("random")
    jobs = [BattleJob(heuristic, random_, format_id, seed0 + i) for i in range(n)]
    turns = points = 0
    with tempfile.TemporaryDirectory() as out:
        cpu0, sim0, started = time.process_time(), proc_cpu(pool_pids(pool)), time.perf_counter()
        async for _, recording in run_jobs(jobs, concurrency=concurrency, pool=pool, size_pool=size_pool):
            await asyncio.to_thread(save_recording, recording, Path(out))  # as the CLI does
            turns += recording.result.turns
            points += len(recording.turns)
            if choices is not None and recording.seed is not None:  # every job here has its seed
                choices[recording.seed] = [line for line in recording.inputlog if line.startswith((">p1 ", ">p2 "))]
        wall = time.perf_counter() - started
        python = time.process_time() - cpu0
        cpu = python + proc_cpu(pool_pids(pool)) - sim0
    return Sample(wall, turns, points, cpu, python, os.getloadavg()[0])


# --- the bare simulator and the replayed battles ----------------------------------------------------------------
async def start_plain(process: SimProcess, key: str, format_id: str, seed: int) -> dict:
    """Start a battle of ``seed`` for a driver without trackers (the same teams as WolfeClick's battle)."""
    return await process.call("start", battle=key, format=format_id,
                              lines=start_lines(format_id, seed, {"p1": "bare p1", "p2": "bare p2"}))


def read_reply(reply: dict) -> tuple[int, dict[str, str], list[str]]:
    """What a driver without trackers needs of a reply: turns begun, each side's request JSON, refused sides."""
    turns, requests, refused = 0, {}, []
    for raw in reply["out"]:
        head, _, body = raw.partition("\n")
        if head == "sideupdate":
            side, _, line = body.partition("\n")
            if line.startswith("|request|"):
                requests[side] = line[9:]
            elif line.startswith("|error|"):
                refused.append(side)
        elif head == "update":
            turns += body.count("|turn|")
    return turns, requests, refused


async def bare_battle(process: SimProcess, key: str, format_id: str, seed: int, max_turns: int = 300) -> tuple[int, int]:
    """The simplest driver: answer every request with a random legal choice. Returns (turns, decision points)."""
    rng = random.Random(seed)
    reply = await start_plain(process, key, format_id, seed)
    requests: dict[str, dict] = {}
    turns = points = 0
    while True:
        begun, texts, refused = read_reply(reply)
        turns += begun
        requests.update({side: orjson.loads(text) for side, text in texts.items()})
        if reply.get("ended"):
            return turns, points
        if turns > max_turns:
            await process.call("close", battle=key)
            return turns, points
        lines = []
        for side in ("p1", "p2"):
            request = requests.pop(side, None)
            if side in refused:
                lines.append(f">{side} default")
            elif request is not None and not request.get("wait"):
                legal = legal_actions(request)
                lines.append(f">{side} {rng.choice(legal).command() if legal else 'default'}")
        points += 1
        reply = await process.call("write", battle=key, lines=lines)


async def replayed_battle(process: SimProcess, key: str, format_id: str, seed: int, choices: list[str]) -> tuple[int, int]:
    """The same battle WolfeClick played, its recorded choices fed straight back: the simulator's own cost of exactly
    those battles, with the simplest possible driver (no trackers, no recording). Returns (turns, decision points)."""
    queued = {side: [line[4:] for line in choices if line.startswith(f">{side} ")][::-1] for side in ("p1", "p2")}
    reply = await start_plain(process, key, format_id, seed)
    asked: dict[str, bool] = {}
    turns = points = 0
    while True:
        begun, texts, _ = read_reply(reply)
        turns += begun
        asked.update({side: '"wait":true' not in text for side, text in texts.items()})
        if reply.get("ended"):
            return turns, points
        lines = [f">{side} {queued[side].pop()}" for side in ("p1", "p2") if asked.pop(side, False) and queued[side]]
        if not lines:  # the recorded battle stopped here (a turn limit): so does its replay
            await process.call("close", battle=key)
            return turns, points
        points += 1
        reply = await process.call("write", battle=key, lines=lines)


async def timed_battles(pool: SimPool, battles: list, concurrency: int) -> Sample:
    """Play ``battles`` (each a function of a simulator process returning (turns, decision points)), at most
    ``concurrency`` at once, timed, with this process's and the simulators' CPU."""
    slots = asyncio.Semaphore(concurrency)

    async def one(battle) -> tuple[int, int]:  # type: ignore[no-untyped-def]
        async with slots:
            return await battle(pool.pick())

    cpu0, sim0, started = time.process_time(), proc_cpu(pool_pids(pool)), time.perf_counter()
    results = await asyncio.gather(*(one(battle) for battle in battles))
    wall = time.perf_counter() - started
    python = time.process_time() - cpu0
    cpu = python + proc_cpu(pool_pids(pool)) - sim0
    return Sample(wall, sum(t for t, _ in results), sum(p for _, p in results), cpu, python, os.getloadavg()[0])


async def bench_bare(pool: SimPool, n: int, concurrency: int, format_id: str, seed0: int = SEED0) -> Sample:
    def battle(seed: int):  # type: ignore[no-untyped-def]
        return lambda process: bare_battle(process, f"bare-{seed}-{time.monotonic_ns()}", format_id, seed)

    return await timed_battles(pool, [battle(seed0 + i) for i in range(n)], concurrency)


async def bench_replayed(pool: SimPool, choices: dict[int, list[str]], concurrency: int, format_id: str) -> Sample:
    def battle(seed: int):  # type: ignore[no-untyped-def]
        return lambda process: replayed_battle(process, f"replay-{seed}-{time.monotonic_ns()}", format_id, seed,
                                               choices[seed])

    return await timed_battles(pool, [battle(seed) for seed in sorted(choices)], concurrency)


# --- the stock server ------------------------------------------------------------------------------------------
def stock_server():  # type: ignore[no-untyped-def]
    """``pokemon-showdown start --no-security`` on 127.0.0.1 only, in the package's default process layout
    (``wolfeclick.sim.server``: a private config folder, so it never touches the shared package's config).
    Imported here, not at the top: ``--baseline`` profiles import older checkouts that have no such module."""
    from wolfeclick.sim.server import LocalServer

    class StockServer(LocalServer):
        def cpu(self) -> float:
            return proc_cpu(session_pids(self.proc.pid)) if self.proc else 0.0

    return StockServer()


def stock_players(server, concurrency: int, format_id: str):  # type: ignore[no-untyped-def]
    from poke_env import AccountConfiguration, ServerConfiguration
    from poke_env.player import RandomPlayer, SimpleHeuristicsPlayer

    config = ServerConfiguration(f"ws://127.0.0.1:{server.port}/showdown/websocket", None)  # type: ignore[arg-type]
    tag = f"{concurrency}{int(time.time() * 1000) % 100000}"
    heuristic = SimpleHeuristicsPlayer(AccountConfiguration(f"bh{tag}", None), server_configuration=config,
                                       battle_format=format_id, max_concurrent_battles=concurrency, log_level=50)
    random_ = RandomPlayer(AccountConfiguration(f"br{tag}", None), server_configuration=config,
                           battle_format=format_id, max_concurrent_battles=concurrency, log_level=50)
    return heuristic, random_


def bench_stock(server, n: int, concurrency: int, format_id: str) -> Sample:
    """poke-env's players cannot seed a server battle: same format and policies, teams of the server's choosing."""
    from poke_env.concurrency import POKE_LOOP

    heuristic, random_ = stock_players(server, concurrency, format_id)
    cpu0, server0, started = time.process_time(), server.cpu(), time.perf_counter()
    asyncio.run_coroutine_threadsafe(heuristic.battle_against(random_, n_battles=n), POKE_LOOP).result()
    wall = time.perf_counter() - started
    python = time.process_time() - cpu0
    cpu = python + server.cpu() - server0
    turns = sum(b.turn for b in heuristic.battles.values())
    return Sample(wall, turns, turns, cpu, python, os.getloadavg()[0])  # decision points are not observable here


# --- the Python side alone ---------------------------------------------------------------------------------------
PYTHON_HEADING = "## Battle core: the Python side alone, per turn"
PYTHON_PAIRS = (("heuristic", "heuristic"), ("heuristic", "maxdamage"), ("heuristic", "random"))
PYTHON_FORMATS = ("gen9randombattle", "gen4randombattle")
PYTHON_SEED0 = 60_000

Exchange = tuple[str, list[str], str]
"""One call a battle made of its simulator: the op, the lines it sent, the reply's JSON as the bridge wrote it."""


def python_jobs(n: int) -> list[BattleJob]:
    """``n`` battles of every pair in every format: the recorded path as ``wolfeclick record`` plays it."""
    policies = {spec: make_policy(spec) for spec in {spec for pair in PYTHON_PAIRS for spec in pair}}
    return [BattleJob(policies[p1], policies[p2], format_id, PYTHON_SEED0 + i)
            for format_id in PYTHON_FORMATS for p1, p2 in PYTHON_PAIRS for i in range(n)]


class CapturingProcess:
    """A real simulator process that also keeps every exchange, by battle (keyed by its start lines, which name the
    format, the seed and the players but not the run's own battle key)."""

    alive = True

    def __init__(self, process: SimProcess) -> None:
        self.process, self.info = process, process.info
        self.battles: dict[str, list[Exchange]] = {}
        self._keys: dict[str, str] = {}

    async def call(self, op: str, **fields):  # type: ignore[no-untyped-def]
        reply = await self.process.call(op, **fields)
        lines = list(fields.get("lines", []))
        if op == "start":
            self._keys[fields["battle"]] = key = "\n".join(lines)
            self.battles[key] = []
        self.battles[self._keys[fields["battle"]]].append((op, lines, orjson.dumps(reply).decode()))
        return reply


class ReplayProcess:
    """Answers the runner exactly as the captured simulator did, with no Node: what is left is the Python side.
    It does what ``SimProcess.call`` does in this process (the door's check, the request's JSON, the reply's parse)
    and refuses a battle that sends anything the capture did not (the replay would no longer be the same battle)."""

    alive = True

    def __init__(self, battles: dict[str, list[tuple[str, list[str], bytes]]], info: dict) -> None:
        self.battles, self.info = battles, info
        self._playing: dict[str, list[tuple[str, list[str], bytes]]] = {}

    async def call(self, op: str, **fields):  # type: ignore[no-untyped-def]
        lines = list(fields.get("lines", []))
        if lines:
            check_input_lines(lines)
        orjson.dumps({"id": 0, "op": op, **fields})  # the request line, as SimProcess writes it
        if op == "start":
            self._playing[fields["battle"]] = list(reversed(self.battles["\n".join(lines)]))
        want_op, want_lines, raw = self._playing[fields["battle"]].pop()
        if (op, lines) != (want_op, want_lines):
            raise SystemExit(f"the replay diverged from its capture at {op} {lines}: the code changed a battle")
        await asyncio.sleep(0)  # a reply is never there at once: the other battles in flight run meanwhile
        return orjson.loads(raw)


class OneProcessPool:
    """What ``run_jobs`` asks of a pool, for one stand-in process."""

    def __init__(self, process) -> None:  # type: ignore[no-untyped-def]
        self.process = process
        self.processes: list[SimProcess] = []

    async def live(self):  # type: ignore[no-untyped-def]
        return self.process


async def play_jobs(pool, jobs: list[BattleJob], concurrency: int, out: Path) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Play and save ``jobs`` as the CLI does (saving on this thread, so a profiler sees it); (turns, points)."""
    turns = points = 0
    async for _, recording in run_jobs(jobs, concurrency=concurrency, pool=pool, size_pool=False):
        save_recording(recording, out)
        turns += recording.result.turns
        points += len(recording.turns)
    return turns, points


def capture(n: int, concurrency: int, warmup: int, path: Path) -> dict:
    """Play the battles on a real simulator (after ``warmup`` battles of each kind), keep every exchange in ``path``;
    the CPU per turn of this process and of the simulator on the way, the split with Node in the loop."""
    async def go() -> dict:
        async with SimPool(1) as pool:
            process = CapturingProcess(pool.processes[0])
            with tempfile.TemporaryDirectory() as out:
                if warmup:
                    await play_jobs(OneProcessPool(pool.processes[0]), python_jobs(warmup), concurrency, Path(out))
                cpu0, sim0 = time.process_time(), proc_cpu(pool_pids(pool))
                turns, points = await play_jobs(OneProcessPool(process), python_jobs(n), concurrency, Path(out))
                python, simulator = time.process_time() - cpu0, proc_cpu(pool_pids(pool)) - sim0
        path.write_bytes(orjson.dumps({"info": process.info, "battles": process.battles}))
        return {"turns": turns, "points": points, "python_ms": python * 1000 / turns,
                "simulator_ms": simulator * 1000 / turns}

    return asyncio.run(go())


def replay_run(path: Path, n: int, concurrency: int, repeats: int, profile: int, only: str = "") -> dict:
    """Replay the captured battles ``repeats`` times (the first one unmeasured: a warm-up), each timed by this
    process's CPU, the recorded path and the lean floor alternating; with ``profile``, one more replay under the
    CPU sampler (shares) and cProfile (the top ``profile`` functions by own time). ``only`` (``recorded`` or
    ``lean``) plays that path alone, for an instruction count (``instructions``)."""
    captured = orjson.loads(path.read_bytes())
    battles = {key: [(op, lines, raw.encode()) for op, lines, raw in exchanges]
               for key, exchanges in captured["battles"].items()}

    def once() -> tuple[float, int, int]:
        """One replay into an empty folder (a folder that already held these ids would make every save read and
        compare the file there first)."""
        process = ReplayProcess(battles, captured["info"])
        with tempfile.TemporaryDirectory() as out:
            cpu0 = time.process_time()
            turns, points = asyncio.run(play_jobs(OneProcessPool(process), python_jobs(n), concurrency, Path(out)))
            return time.process_time() - cpu0, turns, points

    def lean() -> float:
        """The same battles played for their winner only (``battle.lean``: trackers and policies, nothing
        recorded): the floor under the recorded path, in CPU seconds."""
        process, slots = ReplayProcess(battles, captured["info"]), asyncio.Semaphore(concurrency)

        async def one(job: BattleJob) -> None:
            async with slots:
                await play_winner(job.p1, job.p2, process=process, format_id=job.format_id, seed=job.seed,  # type: ignore[arg-type]
                                  max_turns=job.max_turns)

        async def every() -> None:
            with relaxed_gc():  # as run_jobs plays
                await asyncio.gather(*(one(job) for job in python_jobs(n)))

        cpu0 = time.process_time()
        asyncio.run(every())
        return time.process_time() - cpu0

    if only:  # one path alone, for an instruction count: nothing timed here
        for _ in range(repeats):
            if only == "recorded":
                once()
            else:
                lean()
        return {}
    result: dict = {"ms_per_turn": [], "lean_ms_per_turn": []}
    once()
    lean()
    for _ in range(repeats):  # the two paths alternate
        seconds, turns, points = once()
        result["ms_per_turn"].append(seconds * 1000 / turns)
        result["lean_ms_per_turn"].append(lean() * 1000 / turns)
    result.update(turns=turns, points=points)
    if profile:
        with CpuSampler() as sampler:
            seconds, _, _ = once()
        result["categories"] = {cat: share * seconds * 1000 / turns for cat, share in sampler.shares().items()}
        profiler = cProfile.Profile()
        profiler.enable()
        once()
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(profile)
        result["cprofile"] = text.getvalue()
    return result



# --- another checkout in a fresh interpreter ----------------------------------------------------------------------
def in_checkout(code: Path, argv: list[str], prefix: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run this module with ``argv`` in a fresh interpreter whose ``wolfeclick`` is ``code``'s: ``code`` first on
    ``PYTHONPATH`` and ``-P`` (the working folder not put first), then this checkout for ``benchmarks`` (``checkout``
    leaves an older one's out). ``prefix`` runs it under another program (valgrind)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(code), str(ROOT)]), WOLFECLICK_SHOWDOWN=str(SHOWDOWN))
    return subprocess.run([*prefix, sys.executable, "-P", "-m", "benchmarks.battles", *argv], env=env, cwd=ROOT,
                          check=True, capture_output=True, text=True)


def python_in(code: Path, capture_path: Path, args: argparse.Namespace) -> dict:
    """``replay_run`` with ``code``'s ``wolfeclick`` in a fresh interpreter (as ``profile_in``)."""
    out = in_checkout(code, ["--python-json", str(capture_path), "--python", str(args.python), "--python-repeats",
                             str(args.python_repeats), "--python-profile", str(args.python_profile),
                             "--profile-concurrency", str(args.profile_concurrency)]).stdout
    return json.loads(out.strip().splitlines()[-1])


def instructions(code: Path, capture_path: Path, path: str, turns: int, args: argparse.Namespace) -> float:
    """User-space instructions per turn of ``path`` (``recorded`` or ``lean``) with ``code``'s ``wolfeclick``,
    counted by valgrind (cachegrind, no cache simulation): three replays less one, so start-up, imports and the
    warm-up cancel out. Unlike CPU time, the count does not move with the machine's other load."""
    counts = []
    for repeats in (1, 3):
        err = in_checkout(code, ["--python-json", str(capture_path), "--python", str(args.python), "--python-repeats",
                                 str(repeats), "--python-only", path, "--profile-concurrency",
                                 str(args.profile_concurrency)],
                          prefix=["valgrind", "--tool=cachegrind", "--cache-sim=no",
                                  "--cachegrind-out-file=/dev/null"]).stderr
        found = re.search(r"I\s+refs:\s+([0-9,]+)", err)
        if found is None:
            raise SystemExit(f"no instruction count in valgrind's output: {err[-300:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) / (2 * turns)


def checkout(rev: str) -> Path:
    """``rev``'s tracked files in a temporary folder (git archive; no worktree, nothing in .git changes), less its
    ``benchmarks/`` (the run imports this checkout's, whatever ``rev`` holds)."""
    target = Path(tempfile.mkdtemp(prefix="wolfeclick-base-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    shutil.rmtree(target / "benchmarks", ignore_errors=True)
    return target


def codes(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """The checkouts compared: ``--baseline``'s first (as "before (REV)"), then this one ("after")."""
    found = [("after", ROOT)]
    if args.baseline:
        found.insert(0, (f"before ({args.baseline})", checkout(args.baseline)))
    return found


# --- the Python side alone: measuring and the section ---------------------------------------------------------------
def python_side(args: argparse.Namespace) -> dict[str, Any]:
    """Capture the battles once on a real simulator, then replay them without Node through this checkout (and
    ``--baseline``'s), alternating, in fresh interpreters; the figures of each checkout's column."""
    compared = codes(args)
    with tempfile.TemporaryDirectory() as folder:
        capture_path = Path(folder) / "capture.json"
        live = capture(args.python, args.profile_concurrency, args.warmup, capture_path)
        print(f"with the simulator: Python {live['python_ms']:.3f} ms/turn, simulator {live['simulator_ms']:.3f} "
              f"ms/turn over {live['turns']} turns", flush=True)
        runs: dict[str, list[dict]] = {name: [] for name, _ in compared}
        for _ in range(args.python_rounds):  # alternate the checkouts so drifting load hits both alike
            for name, code in compared:
                runs[name].append(python_in(code, capture_path, args))
                print(f"{name}: {', '.join(f'{ms:.3f}' for ms in runs[name][-1]['ms_per_turn'])} ms/turn (floor "
                      f"{', '.join(f'{ms:.3f}' for ms in runs[name][-1]['lean_ms_per_turn'])})", flush=True)
        if args.python_instructions:
            for name, code in compared:
                turns = runs[name][0]["turns"]
                runs[name][0]["instructions"] = {path: instructions(code, capture_path, path, turns, args)
                                                 for path in ("recorded", "lean")}
                print(f"{name}: {runs[name][0]['instructions']} instructions/turn", flush=True)
    for name, results in runs.items():
        for result in results:
            if result.get("cprofile"):
                print(f"--- cProfile, {name} ---\n{result['cprofile']}")
    columns = []
    for name, results in runs.items():
        every = [ms for run in results for ms in run["ms_per_turn"]]
        lean = [ms for run in results for ms in run["lean_ms_per_turn"]]
        columns.append({"name": name, "median": statistics.median(every), "fastest": min(every),
                        "slowest": max(every), "floor": statistics.median(lean),
                        "adds": statistics.median(every) - statistics.median(lean),
                        "instructions": results[0].get("instructions"), "categories": results[0].get("categories")})
    first = next(iter(runs.values()))[0]
    counted = [c["instructions"] for c in columns]
    two = len(columns) == 2
    return {"turns": first["turns"], "points": first["points"],
            "live": {"python_ms": live["python_ms"], "simulator_ms": live["simulator_ms"]}, "columns": columns,
            "ratio_cpu": columns[1]["median"] / columns[0]["median"] if two else None,
            "ratio_instructions": counted[1]["recorded"] / counted[0]["recorded"] if two and all(counted) else None}


def render_python(result: harness.Result) -> str:
    """The Python side alone's section (``battles_python``)."""
    p, r = result.params, result.results
    columns = r["columns"]
    names = [c["name"] for c in columns]
    pairs = ", ".join(f"{p1} vs {p2}" for p1, p2 in PYTHON_PAIRS)

    def row(label: str, key: str) -> str:
        return f"| {label} | " + " | ".join(f"{c[key]:.3f}" for c in columns) + " |"

    lines = [
        PYTHON_HEADING,
        "",
        f"The recorded path (`run_jobs` as `wolfeclick record` plays it: both trackers, legal actions, the state "
        f"text, the policies, snapshots, rewards, validated turn records, the recording's JSON saved to disk) over "
        f"{r['turns']} turns ({r['points']} decision points): {p['python']} battles of each of {pairs} in "
        f"{' and '.join(PYTHON_FORMATS)} (seeds {PYTHON_SEED0}…), {p['profile_concurrency']} in flight. The "
        "simulator's replies are captured once from a real simulator and then replayed with no Node process "
        "(`ReplayProcess`: the door's check, the request's JSON and the reply's parse are still done), so this "
        "process's CPU time (`time.process_time`, user + system) is the Python side alone and no other process "
        "competes for its figure. CPU time, not wall time: other work on the machine moves wall time far more. Each "
        f"checkout replays in a fresh interpreter, {p['python_rounds']} rounds alternating, {p['python_repeats']} "
        "measured replays per round after one unmeasured.",
        "",
        harness.describe(result),
        "",
        f"With the simulator in the loop (the capture, after {p['warmup']} warm-up battles of each kind, this "
        f"checkout): Python {r['live']['python_ms']:.2f} ms a turn, the simulator {r['live']['simulator_ms']:.2f} ms a "
        "turn.",
        "",
        "| Python CPU ms per turn | " + " | ".join(names) + " |",
        "| --- |" + " --- |" * len(names),
        row("median", "median"),
        row("fastest", "fastest"),
        row("slowest", "slowest"),
        row("floor: the same battles for their winner only (`battle.lean`: trackers and policies), median", "floor"),
        row("what recording adds (median less floor)", "adds"),
    ]
    counted = [c["instructions"] for c in columns]
    if all(counted):
        lines += [
            "| instructions per turn (valgrind), recorded path | "
            + " | ".join(f"{c['recorded'] / 1e6:.2f} M" for c in counted) + " |",
            "| instructions per turn (valgrind), floor | "
            + " | ".join(f"{c['lean'] / 1e6:.2f} M" for c in counted) + " |",
        ]
    if r.get("ratio_cpu") is not None:
        ratio = f"{r['ratio_cpu']:.2f}× (CPU medians)"
        if r.get("ratio_instructions") is not None:
            ratio += f", {r['ratio_instructions']:.2f}× (instructions)"
        lines.append(f"| after / before, recorded path | | {ratio} |")
    with_shares = [(c["name"], c["categories"]) for c in columns if c.get("categories")]
    if with_shares:
        seen = dict.fromkeys(c for _, shares in reversed(with_shares) for c in shares)  # ties keep this order
        cats = sorted(seen, key=lambda c: -with_shares[-1][1].get(c, 0))
        lines += ["", "Where it goes (`benchmarks/cpu_sampler.py` over one more replay per checkout, ms per turn; one "
                  "replay is a few hundred samples, so a small row moves by ±20% between runs):", "",
                  "| step | " + " | ".join(name for name, _ in with_shares) + " |",
                  "| --- |" + " --- |" * len(with_shares)]
        lines += [f"| {cat} | " + " | ".join(f"{shares.get(cat, 0.0):.3f}" for _, shares in with_shares) + " |"
                  for cat in cats]
    lines += ["", f"Reproduce: `{result.command}`"]
    return "\n".join(lines)


# --- the profile -------------------------------------------------------------------------------------------------
async def profile_run(n: int, concurrency: int, format_id: str, warmup: int) -> dict:
    """Play ``n`` battles under the CPU sampler; every Python step runs on the main thread (saving included)."""
    heuristic, random_ = make_policy("heuristic"), make_policy("random")
    async with SimPool() as pool:
        warm = [BattleJob(heuristic, random_, format_id, SEED0 - 1 - i) for i in range(warmup)]
        async for _ in run_jobs(warm, concurrency=concurrency, pool=pool):
            pass
        jobs = [BattleJob(heuristic, random_, format_id, SEED0 + i) for i in range(n)]
        points = 0
        with tempfile.TemporaryDirectory() as out:
            cpu0, sim0 = time.process_time(), proc_cpu(pool_pids(pool))
            with CpuSampler() as sampler:
                async for _, recording in run_jobs(jobs, concurrency=concurrency, pool=pool):
                    save_recording(recording, Path(out))
                    points += len(recording.turns)
            python = time.process_time() - cpu0
            simulator = proc_cpu(pool_pids(pool)) - sim0
    per_point = {cat: share * python * 1000 / points for cat, share in sampler.shares().items()}
    return {"points": points, "python_ms": python * 1000 / points, "simulator_ms": simulator * 1000 / points,
            "categories": per_point, "samples": sampler.samples}


def profile_in(code: Path, args: argparse.Namespace) -> dict:
    """Run the profile with another checkout's ``wolfeclick`` in a fresh interpreter."""
    out = in_checkout(code, ["--profile-json", str(args.profile), "--format", args.format, "--profile-concurrency",
                             str(args.profile_concurrency), "--warmup", str(args.warmup)]).stdout
    return json.loads(out.strip().splitlines()[-1])


def mean_profile(runs: list[dict]) -> dict:
    """The mean of several profile runs, category by category."""
    cats = {cat for run in runs for cat in run["categories"]}
    return {
        "points": sum(run["points"] for run in runs),
        "samples": sum(run["samples"] for run in runs),
        "python_ms": statistics.fmean(run["python_ms"] for run in runs),
        "simulator_ms": statistics.fmean(run["simulator_ms"] for run in runs),
        "categories": {cat: statistics.fmean(run["categories"].get(cat, 0.0) for run in runs) for cat in cats},
    }


def profile(args: argparse.Namespace) -> dict[str, Any]:
    """Each checkout's profile, ``--profile-rounds`` runs alternating, averaged: the section's columns."""
    compared = codes(args)
    runs: dict[str, list[dict]] = {name: [] for name, _ in compared}
    for _ in range(args.profile_rounds):  # alternate the checkouts so drifting load hits both alike
        for name, code in compared:
            runs[name].append(profile_in(code, args))
    return {"columns": [{"name": name, **mean_profile(runs[name])} for name, _ in compared]}


CATEGORY_ORDER = ("trackers", "state text", "policy", "legal actions", "reward", "snapshot", "schema validation",
                  "recording + JSON", "protocol split", "bridge transfer", "runner", "event loop + other")


def render_profile(result: harness.Result) -> str:
    """Where the CPU goes per decision point's section (``battles_profile``)."""
    p, columns = result.params, result.results["columns"]
    names = [c["name"] for c in columns]
    lines = [
        PROFILE_HEADING,
        "",
        f"{p['profile']} heuristic-vs-random battles ({p['format']}, seeds {SEED0}…, {p['profile_concurrency']} in "
        f"flight, after a warm-up), CPU milliseconds per decision point, mean of {p['profile_rounds']} runs per "
        "column, the columns' runs alternating. The simulator row is the Node processes' "
        "CPU (/proc); the Python rows split this process's CPU by a sampling profiler (`benchmarks/cpu_sampler.py`: "
        "SIGPROF every 1 ms of CPU — the kernel delivers it at its own tick, so a few hundred samples a run and "
        "about ±20% sampling error on a row under 5% — each sample charged to the innermost matching frame, so "
        "poke-env work done for a tracker counts as *trackers*, for a policy as *policy*). Saving runs on the main "
        "thread here so that it is sampled. CPU time is far steadier than wall time on a shared machine, but not "
        "immune to other work (below).",
        "",
        harness.describe(result),
        "",
        "| step | " + " | ".join(f"{name} (ms)" for name in names) + " |",
        "| --- |" + " --- |" * len(names),
    ]
    cats = list(CATEGORY_ORDER) + sorted({c for r in columns for c in r["categories"]} - set(CATEGORY_ORDER))
    lines.append("| simulator (Node) | " + " | ".join(f"{r['simulator_ms']:.3f}" for r in columns) + " |")
    for cat in cats:
        lines.append(f"| {cat} | " + " | ".join(f"{r['categories'].get(cat, 0.0):.3f}" for r in columns) + " |")
    lines.append("| **Python total** | " + " | ".join(f"**{r['python_ms']:.3f}**" for r in columns) + " |")
    lines.append("| **all CPU** | " + " | ".join(f"**{r['python_ms'] + r['simulator_ms']:.3f}**" for r in columns)
                 + " |")
    lines += ["", f"Decision points (all runs): {', '.join(str(r['points']) for r in columns)}; samples: "
              f"{', '.join(str(r['samples']) for r in columns)}.", "", f"Reproduce: `{result.command}`"]
    return "\n".join(lines)


# --- the race ----------------------------------------------------------------------------------------------------
RACE_NOTE = ("*Issue 17's race: not a paired ours-and-stock run. The comparison this file quotes is \"WolfeClick "
             "and stock alternating\" above; this table is kept for the replayed and bare columns.*")


def render(result: harness.Result) -> str:
    """The race's section (``battles``)."""
    p, rows = result.params, result.results["rows"]
    lines = [
        HEADING,
        "",
        RACE_NOTE,
        "",
        f"Heuristic vs random, {p['format']}, {p['battles']} battles per run, median of {p['repeats']} runs per "
        f"cell, runs alternating between the four paths; {p['processes'] or 'default'} simulator process(es). The CPU "
        "columns (this process plus the simulator or server processes, per turn) are the steadier comparison.",
        "",
        harness.describe(result),
        "",
        "The paths: **WolfeClick** records every battle to JSON and saves it. **Replayed** is exactly WolfeClick's "
        "battles again (same seeds, the choices WolfeClick made, fed straight back on the same simulator process "
        "with no trackers, no policies, no recording): what the simulator itself costs for those battles, the "
        "practical limit. **Bare** is the same seeds (so the same teams) driven by random choices straight from "
        "the requests, no trackers, no recording; random-vs-random battles are longer and cheaper per turn, so "
        "it is compared in turns per second. **Stock** is poke-env's own players over websockets to "
        "`pokemon-showdown start --no-security` on 127.0.0.1 (which cannot be seeded: same format and policies, "
        "its own teams). The stock path's battles are not ours, so their lengths differ by chance: with few "
        "battles a run's mean length moves the battles/s ratio (seeds 50000–50019 average 26.6 turns, the first "
        "200 seeds 22.8), so that ratio is given per turn too; about 100 battles a run make the two agree.",
        "",
        "| in flight | WolfeClick battles/s | turns/s | CPU ms/turn | replayed turns/s | replayed CPU ms/turn | "
        "bare turns/s | bare CPU ms/turn | stock battles/s | stock turns/s | stock CPU ms/turn | "
        "vs stock (battles/s) | vs stock (turns/s) | vs bare (turns/s) | vs replayed (turns/s) |",
        "| --- |" + " --- |" * 14,
    ]
    for row in rows:
        cells = [str(row["k"]), f"{row['battles_s']:.1f}", f"{row['turns_s']:.0f}", f"{row['cpu_ms']:.2f}",
                 f"{row['replayed_turns_s']:.0f}", f"{row['replayed_cpu_ms']:.2f}", f"{row['bare_turns_s']:.0f}",
                 f"{row['bare_cpu_ms']:.2f}", f"{row['stock_battles_s']:.1f}", f"{row['stock_turns_s']:.0f}",
                 f"{row['stock_cpu_ms']:.2f}", f"{row['vs_stock_battles']:.2f}×", f"{row['vs_stock_turns']:.2f}×",
                 f"{row['vs_bare']:.0%}", f"{row['vs_replayed']:.0%}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Reproduce: `{result.command}`"]
    return "\n".join(lines)


def rate(sample: Sample) -> float:
    return sample.turns / sample.wall


def per_turn(seconds: float, sample: Sample) -> float:
    """CPU milliseconds a turn."""
    return seconds * 1000 / max(1, sample.turns)


async def our_cells(args: argparse.Namespace, pool: SimPool) -> list[tuple[Sample, Sample, Sample]]:
    cells = []
    for k in args.concurrency:
        choices: dict[int, list[str]] = {}
        ours = await bench_wolfeclick(pool, args.battles, k, args.format, choices=choices)
        replayed = await bench_replayed(pool, choices, k, args.format)
        bare = await bench_bare(pool, args.battles, k, args.format)
        cells.append((ours, replayed, bare))
    return cells


async def warm(args: argparse.Namespace, pool: SimPool) -> None:
    if args.warmup:
        await bench_wolfeclick(pool, args.warmup, max(args.concurrency), args.format, seed0=SEED0 - 1000)
        await bench_bare(pool, args.warmup, max(args.concurrency), args.format, seed0=SEED0 - 1000)


def race(args: argparse.Namespace) -> dict[str, Any]:
    samples: dict[int, dict[str, list[Sample]]] = {k: {"ours": [], "replayed": [], "bare": [], "stock": []}
                                                   for k in args.concurrency}
    loop = asyncio.new_event_loop()
    pool = SimPool(args.processes)
    loop.run_until_complete(pool.start())
    try:
        with stock_server() as server:
            loop.run_until_complete(warm(args, pool))
            if args.warmup:
                bench_stock(server, args.warmup, max(args.concurrency), args.format)
            for _ in range(args.repeats):  # alternate the paths so drifting machine load hits all alike
                cells = loop.run_until_complete(our_cells(args, pool))
                for k, (ours, replayed, bare) in zip(args.concurrency, cells):
                    samples[k]["ours"].append(ours)
                    samples[k]["replayed"].append(replayed)
                    samples[k]["bare"].append(bare)
                    samples[k]["stock"].append(bench_stock(server, args.battles, k, args.format))
                    print(f"in flight {k}: wolfeclick {args.battles / ours.wall:.1f}, bare "
                          f"{args.battles / bare.wall:.1f}, stock {args.battles / samples[k]['stock'][-1].wall:.1f} "
                          "battles/s", flush=True)
    finally:
        loop.run_until_complete(pool.close())
        loop.close()
    rows = []
    for k in args.concurrency:
        median = {path: sorted(runs, key=lambda s: s.wall)[(len(runs) - 1) // 2] for path, runs in samples[k].items()}
        ours, replayed, bare, stock = median["ours"], median["replayed"], median["bare"], median["stock"]
        rows.append({"k": k, "battles_s": args.battles / ours.wall, "turns_s": rate(ours),
                     "cpu_ms": per_turn(ours.cpu, ours), "replayed_turns_s": rate(replayed),
                     "replayed_cpu_ms": per_turn(replayed.cpu, replayed), "bare_turns_s": rate(bare),
                     "bare_cpu_ms": per_turn(bare.cpu, bare), "stock_battles_s": args.battles / stock.wall,
                     "stock_turns_s": rate(stock), "stock_cpu_ms": per_turn(stock.cpu, stock),
                     "vs_stock_battles": stock.wall / ours.wall, "vs_stock_turns": rate(ours) / rate(stock),
                     "vs_bare": rate(ours) / rate(bare), "vs_replayed": rate(ours) / rate(replayed),
                     "samples": {path: [asdict(s) for s in runs] for path, runs in samples[k].items()}})
    return {"rows": rows}


# --- ours and stock alternating ---------------------------------------------------------------------------------
def alternate(args: argparse.Namespace) -> dict[str, Any]:
    """``args.alternate`` rounds; in each, at every concurrency, WolfeClick, its battles replayed, then stock, one
    after the other, so the load of the moment hits the three alike. Each ratio is the median of the rounds' own
    ratios (paired within a round), each rate the median run. Without ``--processes`` the pool is sized as the CLI's
    is: one simulator, grown by ``run_jobs`` from the warm-up's CPU (``processes_for``)."""
    rounds: dict[int, list[dict[str, Sample]]] = {k: [] for k in args.concurrency}
    loop = asyncio.new_event_loop()
    pool = SimPool(args.processes or 1)
    loop.run_until_complete(pool.start())
    try:
        with stock_server() as server:
            warmup = max(args.warmup, args.sizing_warmup)  # long enough for the pool rule's window to open and close
            loop.run_until_complete(bench_wolfeclick(pool, warmup, max(args.concurrency), args.format,
                                                     seed0=SEED0 - 1000, size_pool=not args.processes))
            bench_stock(server, max(args.warmup, 1), max(args.concurrency), args.format)
            for _ in range(args.alternate):
                for k in args.concurrency:
                    choices: dict[int, list[str]] = {}
                    ours = loop.run_until_complete(bench_wolfeclick(pool, args.battles, k, args.format,
                                                                    choices=choices))
                    replayed = loop.run_until_complete(bench_replayed(pool, choices, k, args.format))
                    stock = bench_stock(server, args.battles, k, args.format)
                    rounds[k].append({"ours": ours, "replayed": replayed, "stock": stock})
                    print(f"in flight {k}: wolfeclick {args.battles / ours.wall:.1f}, stock "
                          f"{args.battles / stock.wall:.1f} battles/s ({stock.wall / ours.wall:.2f}x), CPU ms/turn "
                          f"{per_turn(ours.python, ours):.2f} + {per_turn(ours.others, ours):.2f} vs "
                          f"{per_turn(stock.python, stock):.2f} + {per_turn(stock.others, stock):.2f}, "
                          f"load {stock.load:.2f}", flush=True)
    finally:
        simulators = len(pool.processes)
        loop.run_until_complete(pool.close())
        loop.close()
    rows = []
    for k, runs in rounds.items():
        mid = {path: sorted((r[path] for r in runs), key=lambda s: s.wall)[(len(runs) - 1) // 2]
               for path in ("ours", "replayed", "stock")}
        ours, replayed, stock = mid["ours"], mid["replayed"], mid["stock"]
        loads = [r["stock"].load for r in runs]
        rows.append({
            "k": k, "battles_s": args.battles / ours.wall, "turns_s": rate(ours),
            "python_ms": per_turn(ours.python, ours), "simulator_ms": per_turn(ours.others, ours),
            "replayed_turns_s": rate(replayed), "stock_battles_s": args.battles / stock.wall,
            "stock_turns_s": rate(stock), "stock_python_ms": per_turn(stock.python, stock),
            "stock_server_ms": per_turn(stock.others, stock),
            "vs_stock_battles": statistics.median([r["stock"].wall / r["ours"].wall for r in runs]),
            "vs_stock_turns": statistics.median([rate(r["ours"]) / rate(r["stock"]) for r in runs]),
            "cpu_vs_stock": statistics.median([(r["ours"].cpu / r["ours"].turns) / (r["stock"].cpu / r["stock"].turns)
                                               for r in runs]),
            "vs_replayed": statistics.median([rate(r["ours"]) / rate(r["replayed"]) for r in runs]),
            "load_min": min(loads), "load_max": max(loads),
            "rounds": [{path: asdict(s) for path, s in r.items()} for r in runs]})
    return {"simulators": simulators, "rows": rows}


def render_alternate(result: harness.Result) -> str:
    """WolfeClick and stock alternating's section (``battles_alternate``)."""
    p, r = result.params, result.results
    lines = [
        ALTERNATE_HEADING,
        "",
        f"Heuristic vs random, {p['format']}, {p['battles']} battles per run; {p['alternate']} rounds, each playing "
        "WolfeClick (recorded and saved), exactly its battles replayed on the same simulators, then poke-env on a "
        f"stock server, at each concurrency in turn; {r['simulators']} simulator process(es)"
        f"{' (sized by the pool rule from the warm-up)' if not p['processes'] else ''}. Rates are the "
        "median run, ratios the median of each round's own ratio. CPU is per turn, split into this Python process "
        "and the simulator (or stock server) processes. Load is the 1-minute load average after each round's stock "
        "run (min-max). The ratio moves with the machine: the stock path spreads its work over more processes, so it "
        "gains more from idle cores and loses more to other work than ours.",
        "",
        harness.describe(result),
        "",
        "| in flight | WolfeClick battles/s | turns/s | Python CPU ms/turn | simulator CPU ms/turn | replayed turns/s | "
        "stock battles/s | stock turns/s | stock Python CPU ms/turn | stock server CPU ms/turn | "
        "vs stock (battles/s) | vs stock (turns/s) | CPU per turn vs stock | vs replayed (turns/s) | load |",
        "| --- |" + " --- |" * 14,
    ]
    for row in r["rows"]:
        cells = [
            str(row["k"]), f"{row['battles_s']:.1f}", f"{row['turns_s']:.0f}", f"{row['python_ms']:.2f}",
            f"{row['simulator_ms']:.2f}", f"{row['replayed_turns_s']:.0f}", f"{row['stock_battles_s']:.1f}",
            f"{row['stock_turns_s']:.0f}", f"{row['stock_python_ms']:.2f}", f"{row['stock_server_ms']:.2f}",
            f"{row['vs_stock_battles']:.2f}×", f"{row['vs_stock_turns']:.2f}×", f"{row['cpu_vs_stock']:.2f}×",
            f"{row['vs_replayed']:.0%}", f"{row['load_min']:.2f}–{row['load_max']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Reproduce: `{result.command}`"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=100)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--repeats", type=int, default=3, help="runs per cell; the median run is reported")
    parser.add_argument("--warmup", type=int, default=20, help="battles played on each path before timing")
    parser.add_argument("--processes", type=int, default=None, help="simulator processes (SimPool default; with "
                        "--alternate, sized by the pool rule)")
    parser.add_argument("--alternate", type=int, default=0, help="N rounds of WolfeClick, replayed and stock "
                        "alternating (no bare path), medians of N: the comparison docs/benchmarks.md quotes")
    parser.add_argument("--sizing-warmup", type=int, default=SIZING_WARMUP, help="with --alternate: battles played "
                        "before its rounds at the least (the pool rule's window; the smoke test plays fewer)")
    parser.add_argument("--profile", type=int, default=0, help="profile this many battles instead of racing")
    parser.add_argument("--profile-concurrency", type=int, default=4)
    parser.add_argument("--profile-rounds", type=int, default=2, help="alternating profile runs per checkout")
    parser.add_argument("--baseline", default=None, help="with --profile: also profile this git revision")
    parser.add_argument("--profile-json", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--python", type=int, default=0, help="the Python side alone: this many battles of each "
                        "pair and format, captured once and replayed without Node (with --baseline, both checkouts)")
    parser.add_argument("--python-rounds", type=int, default=2, help="with --python: rounds alternating checkouts")
    parser.add_argument("--python-repeats", type=int, default=5, help="with --python: measured replays per round")
    parser.add_argument("--python-profile", type=int, default=0, help="with --python: one more replay per "
                        "checkout under the CPU sampler, and cProfile's top N functions printed")
    parser.add_argument("--python-instructions", action="store_true", help="with --python: also count each "
                        "checkout's instructions per turn under valgrind (load-independent; minutes)")
    parser.add_argument("--python-json", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--python-only", choices=("recorded", "lean"), default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if shutil.which("node") is None:
        print("error: node not found", file=sys.stderr)
        return 2
    if args.profile_json:  # a child of --profile (in_checkout): one run, its figures on stdout
        print(json.dumps(asyncio.run(profile_run(args.profile_json, args.profile_concurrency, args.format,
                                                 args.warmup))))
        return 0
    if args.python_json:  # a child of --python
        print(json.dumps(replay_run(args.python_json, args.python, args.profile_concurrency, args.python_repeats,
                                    args.python_profile, args.python_only)))
        return 0
    with harness.measure() as run:
        if args.python:
            name = "battles_python"
            params: dict[str, Any] = {"python": args.python, "python_rounds": args.python_rounds,
                                      "python_repeats": args.python_repeats, "python_profile": args.python_profile,
                                      "python_instructions": args.python_instructions,
                                      "profile_concurrency": args.profile_concurrency, "warmup": args.warmup,
                                      "baseline": args.baseline}
            results = python_side(args)
        elif args.profile:
            name = "battles_profile"
            params = {"profile": args.profile, "profile_concurrency": args.profile_concurrency,
                      "profile_rounds": args.profile_rounds, "baseline": args.baseline, "warmup": args.warmup,
                      "format": args.format}
            results = profile(args)
        elif args.alternate:
            name = "battles_alternate"
            params = {"alternate": args.alternate, "battles": args.battles, "concurrency": args.concurrency,
                      "warmup": args.warmup, "processes": args.processes, "format": args.format}
            results = alternate(args)
        else:
            name = NAME
            params = {"battles": args.battles, "repeats": args.repeats, "concurrency": args.concurrency,
                      "warmup": args.warmup, "processes": args.processes, "format": args.format}
            results = race(args)
    harness.finish(name, argv, params, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
