"""The Ray engine (issue 15): the same tournament files as the local engine, through a killed worker, a resume
across engines and a restarted model server; checkpoint decisions from several workers batched on one server.

One local Ray instance serves the whole module (2 logical CPUs, no dashboard, workers' logs kept off the driver).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path

import pytest
import ray

from tests.llm_fixtures import tiny_checkpoint  # noqa: F401 - a pytest fixture
from wolfeclick.arena.engines import LocalEngine, make_engine
from wolfeclick.arena.engines.ray_engine import RayEngine
from wolfeclick.arena.schedule import TournamentConfig
from wolfeclick.arena.tournament import PROGRESS_FILE, RESULTS_FILE, SUMMARY_FILE, run_tournament, tournament_dir
from wolfeclick.errors import InputError

pytestmark = pytest.mark.slow

CONFIG = TournamentConfig(players=("random", "maxdamage", "heuristic"), pairs=2, format="gen9randombattle", seed=11)
"""A 3-policy round robin: 3 pairings × 2 pairs × 2 seats = 12 battles."""


def _files(directory: Path) -> dict[str, bytes]:
    return {name: (directory / name).read_bytes() for name in (RESULTS_FILE, SUMMARY_FILE, "tournament.json")}


@pytest.fixture(scope="module")
def ray_instance():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             logging_level=logging.WARNING)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def local_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """CONFIG played by the local engine (today's code path)."""
    out = tmp_path_factory.mktemp("local")
    summary = asyncio.run(run_tournament(CONFIG, out, concurrency=2, keep_recordings=False, engine=LocalEngine()))
    assert summary.complete and summary.battles == 12
    return _files(tournament_dir(out, CONFIG))


def test_ray_round_robin_is_byte_identical_to_local(ray_instance, local_files, tmp_path: Path) -> None:
    engine = RayEngine(workers=2)
    summary = asyncio.run(run_tournament(CONFIG, tmp_path, concurrency=4, engine=engine))
    directory = tournament_dir(tmp_path, CONFIG)
    assert summary.complete and _files(directory) == local_files
    rows = [json.loads(line) for line in (directory / RESULTS_FILE).read_text().splitlines()]
    assert {p.stem for p in (directory / "recordings").iterdir()} == {r["recording"] for r in rows}
    assert engine.workers == [] and engine.replaced == 0  # every actor ended with the tournament


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


def test_checkpoint_on_ray_batches_decisions_from_several_workers(ray_instance, tiny_checkpoint,  # noqa: F811
                                                                 tmp_path: Path) -> None:
    spec = f"llm:{tiny_checkpoint}"
    config = TournamentConfig(players=(spec,), vs=("random",), pairs=2, format="gen9randombattle", seed=5,
                              max_turns=12)
    # One battle (one checkpoint side) in flight per worker; the server's batch waits up to 25 ms for the other.
    engine = RayEngine(workers=2, worker_cpus=0.5, batch_window_ms=25)
    restarted: list[int] = []

    def kill_server(row: dict, done: int, total: int) -> None:
        if not restarted:  # Ray restarts it; the decisions it had not answered are retried on the new one
            restarted.append(ray.get(engine.servers[0].stats.remote())["pid"])
            ray.kill(engine.servers[0], no_restart=False)

    summary = asyncio.run(run_tournament(config, tmp_path, concurrency=2, engine=engine, on_result=kill_server))
    assert summary.complete and summary.aborted == 0 and summary.battles == 4
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
          f"server after restart: {engine.server_stats}")
    # Each worker has one checkpoint decision pending at a time, so a batch of 2 holds decisions of both workers.
    assert max(sizes) >= 2 and mean > 1.0
    assert engine.server_stats and engine.server_stats[0]["pid"] != restarted[0]  # a restarted server answered


def test_engine_choice_is_checked_in_one_line() -> None:
    with pytest.raises(InputError, match="unknown engine"):
        make_engine("spark")
    with pytest.raises(InputError, match="needs --engine ray"):
        make_engine("local", address="auto")
