"""Gymnasium's own vector envs over ``ShowdownEnv``, through several episode ends: ``info`` has the same keys with the
same types on every reset and step (Gymnasium stacks them), ``SyncVectorEnv`` and ``AsyncVectorEnv`` with spawned
workers play on, and forked workers refuse in one line instead of hanging. The env is registered with Gymnasium."""

from __future__ import annotations

import functools
import multiprocessing

import gymnasium as gym
import numpy as np
import pytest

from wolfeclick.env import ENV_ID, ShowdownEnv, SimService

FORMAT = "gen9randombattle"


def shape(value):
    """A value's type, recursively (dict keys included): what must not change from one step to the next."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def test_info_has_the_same_keys_and_types_on_every_reset_and_step():
    service = SimService(1)
    env = ShowdownEnv("random", format=FORMAT, max_turns=3, recordings=False, service=service)
    try:
        shapes = []
        for seed in (1, 2):
            _, info = env.reset(seed=seed)
            shapes.append(shape(info))
            done = False
            while not done:
                _, _, terminated, truncated, info = env.step(0)
                shapes.append(shape(info))
                done = terminated or truncated
        assert info["result"]["reason"] == "turn_limit" and info["done"] is True
        assert all(s == shapes[0] for s in shapes), [s for s in shapes if s != shapes[0]][:1]
    finally:
        env.close()
        service.close()


def factory(max_turns: int) -> gym.Env:
    return gym.make(ENV_ID, opponent="random", format=FORMAT, max_turns=max_turns, recordings=False)


def run_vector(vector: gym.vector.VectorEnv, steps: int) -> int:
    """Step every env with its first legal action; the number of episode ends seen."""
    _, infos = vector.reset(seed=[11, 12])
    ends = 0
    for _ in range(steps):
        _, rewards, terminated, truncated, infos = vector.step((0, 0))
        assert rewards.dtype == np.float64 and infos["reward"]["shaped"].shape == (2,)
        finished = np.logical_or(terminated, truncated)
        for index in np.flatnonzero(finished):
            assert infos["result"]["reason"][index] in ("win", "tie", "turn_limit")
            assert infos["turn"][index] >= 1
        ends += int(finished.sum())
    return ends


def test_sync_vector_env_plays_through_several_episode_ends():
    vector = gym.vector.SyncVectorEnv([functools.partial(factory, 2), functools.partial(factory, 3)])
    try:
        assert run_vector(vector, 12) >= 5
    finally:
        vector.close()


def test_async_vector_env_with_spawned_workers_plays_through_several_episode_ends():
    vector = gym.vector.AsyncVectorEnv([functools.partial(factory, 2), functools.partial(factory, 3)],
                                       context="spawn", shared_memory=False)
    try:
        assert run_vector(vector, 12) >= 5
    finally:
        vector.close()


def test_async_vector_env_with_forked_workers_refuses_instead_of_hanging(capfd):
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    with pytest.raises((ConnectionError, EOFError, BrokenPipeError)):  # Gymnasium's own report of a dead worker
        vector = gym.vector.AsyncVectorEnv([functools.partial(factory, 2)] * 2, context="fork",
                                           shared_memory=False)
        vector.close()
    refusals = [line for line in capfd.readouterr().err.splitlines() if line.startswith("wolfeclick.env.service.")]
    assert refusals and all('context="spawn"' in line for line in refusals)  # each worker said why, in one line


def test_the_env_is_registered_with_gymnasium():
    env = gym.make(ENV_ID, format=FORMAT, recordings=False)
    assert isinstance(env.unwrapped, ShowdownEnv) and env.unwrapped.format == FORMAT
    env.close()
