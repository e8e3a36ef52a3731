"""Stable-Baselines3's ``check_env`` over every observation × action combination, as docs/training.md's table says:
SB3 has no ``Text`` space, so it passes on ``vector``/``dict`` × ``discrete`` and refuses the four combinations with a
text observation or a text action; each of those passes once wrapped in ``NumericSpaces`` (the table names it), on
``ShowdownEnv`` itself and through ``gymnasium.make``. MaskablePPO trains on ``gymnasium.make``'s default env wrapped
so. (Gymnasium's own ``check_env`` passes on all six unwrapped.)"""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from wolfeclick.env import ENV_ID, NumericSpaces, ShowdownEnv, SimService

FORMAT = "gen9randombattle"
DOC = Path(__file__).resolve().parents[1] / "docs" / "training.md"
OBSERVATIONS = ("text", "vector", "dict")
ACTIONS = ("text", "discrete")


@pytest.fixture(scope="module")
def service():
    service = SimService(1)
    yield service
    service.close()


def documented_matrix() -> dict[tuple[str, str], str]:
    """docs/training.md's SB3 table: (observation, action) → ``passes`` or the wrapper it names."""
    section = DOC.read_text(encoding="utf-8").split("SB3's `check_env`", 1)[1]
    rows = re.findall(r"^ *\| `(\w+)` \| (.+?) \| (.+?) \|$", section, re.M)
    assert len(rows) >= 3, "no SB3 table in docs/training.md"
    matrix = {}
    for observation, discrete, text in rows[:3]:
        matrix[(observation, "discrete")] = discrete.strip()
        matrix[(observation, "text")] = text.strip()
    return matrix


def make(how: str, observation: str, action: str, service: SimService) -> gym.Env:
    kwargs = dict(opponent="random", format=FORMAT, recordings=False, service=service, observation=observation,
                  action=action, max_turns=20)
    return ShowdownEnv(**kwargs) if how == "direct" else gym.make(ENV_ID, **kwargs)


def test_the_docs_table_covers_every_combination():
    matrix = documented_matrix()
    assert set(matrix) == {(o, a) for o in OBSERVATIONS for a in ACTIONS}
    for (observation, action), verdict in matrix.items():
        if observation != "text" and action == "discrete":
            assert verdict == "passes"
        else:
            wanted = 'NumericSpaces(env, "dict")' if observation == "dict" else "NumericSpaces(env)"
            assert verdict == f"`{wanted}`", (observation, action, verdict)


@pytest.mark.parametrize("how", ["direct", "gymnasium.make"])
@pytest.mark.parametrize("observation", OBSERVATIONS)
@pytest.mark.parametrize("action", ACTIONS)
def test_sb3_check_env_as_documented(service, how, observation, action):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    verdict = documented_matrix()[(observation, action)]
    env = make(how, observation, action, service)
    try:
        if how == "direct":
            gym_check_env(env, skip_render_check=True)
        if verdict == "passes":
            sb3_check_env(env, warn=True)
            return
        with pytest.raises((AssertionError, ValueError, NotImplementedError, TypeError)):
            sb3_check_env(env, warn=True)
        wrapped = NumericSpaces(env, "dict" if observation == "dict" else "vector")
        sb3_check_env(wrapped, warn=True)
        obs, _ = wrapped.reset(seed=4)
        assert wrapped.observation_space.contains(obs) and wrapped.action_masks().any()
    finally:
        env.close()


def test_maskable_ppo_trains_on_the_default_env_wrapped(service):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = NumericSpaces(gym.make(ENV_ID, format=FORMAT, recordings=False, service=service))
    try:
        model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=1, device="cpu")
        model.learn(128)
        assert model.num_timesteps >= 128
    finally:
        env.close()
