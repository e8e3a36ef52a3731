"""The Ray engine (issue 15): the same tournament files as the local engine, through a killed worker, a resume
across engines and a restarted model server; checkpoint decisions from several workers batched on one server.

One local Ray instance serves the whole module (2 logical CPUs, no dashboard, workers' logs kept off the driver).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import ray

from wolfeclick.arena.engines import LocalEngine, SpecJob, make_engine
from wolfeclick.arena.engines.ray_actors import SimWorker
from wolfeclick.arena.engines.ray_engine import RayEngine, local_instance_options
from wolfeclick.arena.results import battle_facts
from wolfeclick.arena.schedule import TournamentConfig, build_schedule
from wolfeclick.arena.tournament import PROGRESS_FILE, RESULTS_FILE, SUMMARY_FILE, run_tournament, tournament_dir
from wolfeclick.battle.batch import BattleJob, run_jobs
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.schema import SourceInfo
from wolfeclick.battle.store import EncodedRecording, load_recording, save_recording
from wolfeclick.cli import main
from wolfeclick.errors import InputError

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

CONFIG = TournamentConfig(players=("random", "maxdamage", "heuristic"), pairs=2, format="gen9randombattle", seed=11)
"""A 3-policy round robin: 3 pairings × 2 pairs × 2 seats = 12 battles."""


def _files(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in (RESULTS_FILE, SUMMARY_FILE, "tournament.json")}


@pytest.fixture(scope="module")
def ray_instance():
    ray.init(**local_instance_options(2))  # as the engine starts one
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def local_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """CONFIG played by the local engine (today's code path)."""
    out = tmp_path_factory.mktemp("local")
    summary = asyncio.run(run_tournament(CONFIG, out, concurrency=2, keep_recordings=False, engine=LocalEngine()))
    assert summary.complete and summary.battles == 12
    return _files(tournament_dir(out, CONFIG))


def test_bench_on_ray_is_byte_identical_to_local(ray_instance, local_files, tmp_path: Path) -> None:
    # `bench --engine ray` joins the running instance: one simulator worker (2 CPUs: one per core but one)
    assert main(["bench", "--players", ",".join(CONFIG.players), "--pairs", "2", "--format", CONFIG.format,
                 "--seed", "11", "--out", str(tmp_path), "--concurrency", "4", "--engine", "ray"]) == 0
    directory = tournament_dir(tmp_path, CONFIG)
    assert _files(directory) == local_files
    rows = [json.loads(line) for line in (directory / RESULTS_FILE).read_text().splitlines()]
    assert {p.stem for p in (directory / "recordings").iterdir()} == {r["recording"] for r in rows}


def _unmeasured(data: bytes) -> bytes:
    """A recording's bytes less what no two runs share: the write time and the measured latencies."""
    return re.sub(rb'"latency_ms": [0-9.e+-]+', b"", re.sub(rb'"created": "[^"]*"', b"", data))


def test_recordings_kept_on_ray_are_the_local_ones_byte_for_byte(ray_instance, tmp_path: Path) -> None:
    # A shared library: one battle's id is held by a different battle (it goes to a free id), another's by that
    # very battle from an earlier run (refreshed in place). Ray workers send bytes; the driver writes the same files.
    first, second = build_schedule(CONFIG)[:2]
    squatter = asyncio.run(_one_recording(first.p1, first.p2, 99, max_turns=2)).model_copy(update={"id": first.battle_id})
    local, remote = tmp_path / "local", tmp_path / "ray"
    save_recording(squatter, local / "library")
    asyncio.run(run_tournament(CONFIG, local, concurrency=2, recordings_dir=local / "library"))
    save_recording(squatter, remote / "library")
    shutil.copy(local / "library" / f"{second.battle_id}.json", remote / "library")
    asyncio.run(run_tournament(CONFIG, remote, concurrency=4, recordings_dir=remote / "library",
                               engine=RayEngine(workers=2)))
    assert _files(tournament_dir(remote, CONFIG)) == _files(tournament_dir(local, CONFIG))
    rows = [json.loads(line) for line in (tournament_dir(remote, CONFIG) / RESULTS_FILE).read_text().splitlines()]
    assert rows[first.index]["recording"] == f"{first.battle_id}-2" and rows[second.index]["recording"] == second.battle_id
    files = {p.name: _unmeasured(p.read_bytes()) for p in (local / "library").iterdir()}
    assert {p.name: _unmeasured(p.read_bytes()) for p in (remote / "library").iterdir()} == files
    assert len(files) == 13 and load_recording(remote / "library" / f"{first.battle_id}.json") == squatter
    assert load_recording(remote / "library" / f"{second.battle_id}.json").source == SourceInfo(
        kind="tournament", detail=CONFIG.id)


async def _one_recording(p1: str, p2: str, seed: int, max_turns: int = 1000):  # type: ignore[no-untyped-def]
    jobs = [BattleJob(make_policy(p1), make_policy(p2), CONFIG.format, seed, max_turns)]
    async for _, recording in run_jobs(jobs):
        return recording


def test_a_worker_sends_the_row_facts_and_a_recording_only_when_kept() -> None:
    # The worker class itself, without Ray: what crosses to the driver per battle.
    job = SpecJob("heuristic", "random", CONFIG.format, 5, max_turns=20, battle_id="b5")
    keep = SourceInfo(kind="tournament", detail="t")

    async def play(worker_keep: SourceInfo | None):  # type: ignore[no-untyped-def]
        worker = SimWorker(["heuristic", "random"], {}, {}, keep=worker_keep)
        await worker.ready()
        try:
            return await worker.play(job)
        finally:
            await worker.close()

    bare, kept = asyncio.run(play(None)), asyncio.run(play(keep))
    assert bare.recording is None and isinstance(kept.recording, EncodedRecording)
    recording = kept.recording.decode()
    assert recording.id == kept.recording.id == "b5" and recording.source == keep
    assert bare.facts == kept.facts == battle_facts(recording) and sum(bare.facts.decisions.values()) > 0


def test_stopping_a_ray_run_keeps_what_finished_and_ends_its_actors(ray_instance, tmp_path: Path) -> None:
    engine = RayEngine(workers=2)
    stop = asyncio.Event()
    pids: list[int] = []

    def on_result(row: dict, done: int, total: int) -> None:
        if done == 2:  # what Ctrl-C does in `bench` (and Stop in the Compare tab)
            pids.extend(ray.get([worker.pid.remote() for worker in engine.workers]))
            stop.set()

    summary = asyncio.run(run_tournament(CONFIG, tmp_path, concurrency=4, keep_recordings=False, engine=engine,
                                         on_result=on_result, stop=stop))
    directory = tournament_dir(tmp_path, CONFIG)
    assert not summary.complete and not (directory / RESULTS_FILE).exists()
    assert 2 <= len((directory / PROGRESS_FILE).read_text().splitlines()) < 12
    assert engine.workers == [] and len(pids) == 2
    deadline = time.monotonic() + 300  # a hang guard: a stopped worker exits, however busy the machine
    while any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids):
        assert time.monotonic() < deadline, "a worker actor outlived the stopped run"
        time.sleep(0.2)


def test_resume_on_ray_after_local_start_survives_a_killed_worker(ray_instance, local_files, tmp_path: Path) -> None:
    async def start_locally() -> None:  # stopped after 3 battles, as a Ctrl-C would
        stop = asyncio.Event()
        summary = await run_tournament(CONFIG, tmp_path, concurrency=2, keep_recordings=False, stop=stop,
                                       on_result=lambda row, done, total: stop.set() if done >= 3 else None)
        assert not summary.complete

    asyncio.run(start_locally())
    progress = tournament_dir(tmp_path, CONFIG) / PROGRESS_FILE
    before = len(progress.read_text().splitlines())
    assert 3 <= before < 12

    engine = RayEngine(workers=2)
    killed: list[int] = []

    def kill_one(row: dict, done: int, total: int) -> None:
        if not killed:  # both workers have battles in flight now (two each, one just finished)
            killed.append(ray.get(engine.workers[0].pid.remote()))
            ray.kill(engine.workers[0])

    summary = asyncio.run(run_tournament(CONFIG, tmp_path, concurrency=4, resume=True, keep_recordings=False,
                                         engine=engine, on_result=kill_one))
    assert killed and engine.replaced == 1  # the dead worker was replaced once, and its battles dealt again
    assert summary.complete and _files(progress.parent) == local_files
    indices = [json.loads(line)["index"] for line in progress.read_text().splitlines()]
    assert sorted(indices) == list(range(12))  # no battle recorded twice, none lost


def test_checkpoint_on_ray_batches_decisions_from_several_workers(ray_instance, tiny_checkpoint,
                                                                 tmp_path: Path) -> None:
    spec = f"llm:{tiny_checkpoint}"
    config = TournamentConfig(players=(spec,), vs=("random",), pairs=3, format="gen9randombattle", seed=5,
                              max_turns=10)
    # Two battles (two checkpoint sides) in flight per worker; a batch waits up to 25 ms for the other sides.
    engine = RayEngine(workers=2, worker_cpus=0.5, batch_window_ms=25)
    killed: list[int] = []

    def kill_server_after_the_first_battle(row, done, total) -> None:  # Ray restarts it; unanswered decisions retry
        if not killed:  # 6 battles, 4 in flight: at least two start after this, on the restarted server
            killed.append(ray.get(engine.servers[0].stats.remote())["pid"])
            ray.kill(engine.servers[0], no_restart=False)

    summary = asyncio.run(run_tournament(config, tmp_path, concurrency=4, engine=engine,
                                         on_result=kill_server_after_the_first_battle))
    assert summary.complete and summary.aborted == 0 and summary.battles == 6
    directory = tournament_dir(tmp_path, config)
    sizes = []
    for path in sorted((directory / "recordings").iterdir()):
        recording = json.loads(path.read_text())
        side = "p1" if recording["players"]["p1"]["policy"] == spec else "p2"
        assert recording["players"][side]["metadata"]["device"] == "cpu"
        sizes += [t["decisions"][side]["policy_info"]["batch_size"] for t in recording["turns"]
                  if side in t["decisions"] and "batch_size" in t["decisions"][side].get("policy_info", {})]
    mean = sum(sizes) / len(sizes)
    print(f"\ncheckpoint on Ray: {len(sizes)} decisions, mean batch size {mean:.2f}, largest {max(sizes)}; "
          f"restarted server: {engine.server_stats}")
    assert max(sizes) >= 2 and mean > 1.0
    # The server was killed mid-battle, restarted, and answered the rest (the retried decisions among them) ...
    (stats,) = engine.server_stats
    assert killed and stats["pid"] != killed[0] and stats["requests"] >= 1
    # ... and the restarted one alone already ran forward passes mixing both workers' decisions.
    assert stats["mixed_batches"] >= 1


def test_the_local_instance_runs_its_workers_at_the_drivers_priority(ray_instance) -> None:
    """Ray starts workers at nice 15 by default: on a busy machine (both cores held by other work at nice 0) the
    actors got ~4% of a core, and the checkpoint-on-Ray test spent 12 minutes importing torch in its model server."""
    import os

    @ray.remote(num_cpus=0)
    def niceness() -> int:
        return os.nice(0)

    assert ray.get(niceness.remote(), timeout=300) == os.nice(0)


def test_engine_choice_is_checked_and_ray_stays_optional() -> None:
    with pytest.raises(InputError, match="unknown engine"):
        make_engine("spark")
    with pytest.raises(InputError, match="needs --engine ray"):
        make_engine("local", address="auto")
    # The CLI, the tournament runner, the Compare tab's runner and the local engine never import Ray.
    code = ("import sys, wolfeclick.cli.main_parser, wolfeclick.arena.tournament, wolfeclick.ui.tournament_runs; "
            "from wolfeclick.arena.engines import make_engine; make_engine('local'); "
            "assert 'ray' not in sys.modules, 'ray was imported'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_ray_refuses_a_server_seat_by_its_registered_kind() -> None:
    """The registry says which kinds play on a Showdown server (challenged from the driver, never on a worker)."""
    from wolfeclick.policies.registry import default_registry

    assert [kind.name for kind in default_registry().kinds() if kind.server] == ["showdown"]
    with pytest.raises(InputError, match="plays on a Showdown server"):
        RayEngine().prepare(["heuristic", "showdown:bob"], {}, {})
