"""Rollouts decided inside the simulator (``sim:`` policies), on the real simulator (issue 48, item 2)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from wolfeclick.analysis.core import analyse
from wolfeclick.analysis.rollout import RESET_LINE, Forks, prefix_lines  # noqa: F401
from wolfeclick.analysis.sim_rollout import SIM_POLICIES, SimPolicy, sim_rollout
from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import load_recording
from wolfeclick.cli import main
from wolfeclick.errors import InputError
from wolfeclick.sim.process import SimPool, SimulatorError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen9randombattle-s1-heuristic-vs-maxdamage.json"
STEP = 10


@pytest.fixture(scope="module")
def sample() -> Recording:
    return load_recording(SAMPLE)


async def _logs(recording: Recording, name: str, numbers: list[int], first=None) -> list:  # noqa: ANN001
    async with SimPool(1) as pool:
        forks = Forks()
        try:
            return [await sim_rollout(recording, STEP, SimPolicy("sim:" + name), process=pool.pick(), seed=7,
                                      number=n, forks=forks, prefix=prefix_lines(recording, STEP), first=first,
                                      inputlog=True) for n in numbers]
        finally:
            await forks.close()


@pytest.mark.parametrize("name", SIM_POLICIES)
def test_a_seeded_simulator_rollout_repeats_exactly_and_another_number_is_another_battle(sample: Recording,
                                                                                        name: str) -> None:
    first = asyncio.run(_logs(sample, name, [0, 1, 2]))
    again = asyncio.run(_logs(sample, name, [0, 1, 2]))
    assert [(o.winner, o.inputlog) for o in first] == [(o.winner, o.inputlog) for o in again]
    assert len({tuple(o.inputlog) for o in first}) == 3
    prefix = prefix_lines(sample, STEP)
    for outcome in first:
        assert outcome.inputlog[:len(prefix)] == prefix and outcome.inputlog[len(prefix)].startswith(">reseed ")
        assert outcome.reason in ("win", "tie", "turn limit")


def test_a_forced_option_is_the_sides_first_choice_after_the_reseed(sample: Recording) -> None:
    turn = sample.turns[STEP]
    options = turn.decisions["p1"].legal_actions
    switch = next(a for a in options if a.action == "switch")
    [outcome] = asyncio.run(_logs(sample, "heuristic", [0], first={"p1": switch}))
    after = outcome.inputlog[len(prefix_lines(sample, STEP)) + 1:]
    assert next(line for line in after if line.startswith(">p1 ")).startswith(">p1 switch ")
    with pytest.raises(SimulatorError, match="not legal for p1 here"):
        asyncio.run(_logs(sample, "heuristic", [0], first={"p1": switch.model_copy(update={"choice": "Mew"})}))


def test_a_simulator_policy_analysis_repeats_byte_for_byte_raced_at_any_concurrency(sample: Recording) -> None:
    async def both() -> list[str]:
        async with SimPool(1) as pool:
            runs = [await analyse(sample, SimPolicy("sim:heuristic"), pool=pool, k=8, seed=3, steps=[STEP, 11],
                                  options=("p1",), at=[STEP], concurrency=concurrency, sampling="racing", batch=4)
                    for concurrency in (16, 1)]
        assert runs[0].policy == "sim:heuristic" and runs[0].sampling == "racing"
        return [r.to_json() for r in runs]

    first, again = asyncio.run(both())
    assert first == again


def test_simulator_policies_are_refused_by_name_and_off_the_local_engine(sample: Recording,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="not a simulator policy"):
        SimPolicy("sim:minimax")
    with pytest.raises(InputError, match="decides inside the simulator"):
        SimPolicy("sim:random").decide(None)  # type: ignore[arg-type]
    assert main(["analyse", str(SAMPLE), "--policy", "sim:heuristic", "--engine", "ray"]) == 2
    assert "use --engine local" in capsys.readouterr().err
