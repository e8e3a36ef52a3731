"""An analysis' rollouts on Ray workers (a local Ray instance) give the numbers of a local analysis (issue 31)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from wolfeclick.analysis.core import analyse  # noqa: E402
from wolfeclick.analysis.schema import Analysis, analysis_path  # noqa: E402
from wolfeclick.arena.engines.ray_engine import local_instance_options  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.store import load_recording  # noqa: E402
from wolfeclick.cli import main  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen9randombattle-s1-heuristic-vs-maxdamage.json"
HEURISTIC = make_policy("heuristic")


@pytest.fixture(scope="module")
def ray_instance():
    ray.init(**local_instance_options(2))  # as the engines start one
    yield
    ray.shutdown()


def test_rollouts_on_ray_workers_give_the_local_numbers(ray_instance) -> None:
    sample = load_recording(SAMPLE)
    options = dict(k=3, seed=6, steps=[11, 12], options=("p1",), at=[12])

    async def local() -> Analysis:
        async with SimPool(1) as pool:
            return await analyse(sample, HEURISTIC, pool=pool, **options)

    seen: list[tuple[int, int]] = []
    on_ray = asyncio.run(analyse(sample, HEURISTIC, engine="ray", progress=lambda d, t: seen.append((d, t)),
                                 **options))
    assert on_ray.to_json() == asyncio.run(local()).to_json()
    assert on_ray.decisions[1].options["p1"].options and seen[-1][0] == seen[-1][1] == 3 * (2 + len(
        sample.turns[12].decisions["p1"].legal_actions))


def test_analyse_on_ray_from_the_command_line(ray_instance, tmp_path: Path, capsys) -> None:
    assert main(["analyse", str(SAMPLE), "--k", "1", "--engine", "ray", "--out", str(tmp_path)]) == 0
    sample = load_recording(SAMPLE)
    stored = Analysis.model_validate_json(analysis_path(tmp_path, sample.id, "heuristic", 1, 0).read_bytes())
    assert len(stored.decisions) == len(sample.turns) and sample.id in capsys.readouterr().out
    assert main(["analyse", str(SAMPLE), "--k", "1", "--address", "auto"]) == 2
    assert "--address is for --engine ray" in capsys.readouterr().err
