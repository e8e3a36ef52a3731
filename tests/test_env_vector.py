"""Gymnasium's own vector envs over ``ShowdownEnv``, with their defaults, through many episode ends: ``info`` has the
same keys with the same types on every reset and step (Gymnasium stacks them), and ``SyncVectorEnv``,
``AsyncVectorEnv`` with spawned and with forked workers (shared memory on) play 500 steps each, never on a decision
without a legal action. The env is registered with Gymnasium."""

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


def factory(max_turns: int, **kwargs) -> gym.Env:
    return gym.make(ENV_ID, opponent="random", format=FORMAT, max_turns=max_turns, recordings=False, **kwargs)


def run_vector(vector: gym.vector.VectorEnv, steps: int, seed: int = 11) -> int:
    """Step every env with a seeded random action that the mask allows; the number of episode ends seen. No env
    is ever on a decision without a legal action."""
    rng = np.random.default_rng(seed)
    _, infos = vector.reset(seed=[seed + i for i in range(vector.num_envs)])
    ends = 0
    finished = np.zeros(vector.num_envs, dtype=bool)
    for _ in range(steps):
        masks = infos["action_mask"].astype(bool)
        for index in np.flatnonzero(~finished):  # a live decision: something legal to do, listed and masked in
            assert masks[index].any() and len(infos["legal_actions"][index]) > 0, infos["turn"][index]
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        _, rewards, terminated, truncated, infos = vector.step(actions)
        assert rewards.dtype == np.float64 and infos["reward"]["shaped"].shape == (vector.num_envs,)
        assert not infos["illegal"].any(), infos["illegal_reason"]
        finished = np.logical_or(terminated, truncated)
        for index in np.flatnonzero(finished):
            assert infos["result"]["reason"][index] in ("win", "tie", "turn_limit")
            assert infos["turn"][index] >= 1
        ends += int(finished.sum())
    return ends


VECTOR = {"observation": "vector", "action": "discrete"}


def test_sync_vector_env_plays_500_steps_through_episode_ends():
    vector = gym.vector.SyncVectorEnv([functools.partial(factory, 300, **VECTOR)] * 2)
    try:
        assert run_vector(vector, 500) >= 10
    finally:
        vector.close()


def test_async_vector_env_with_spawned_workers_and_shared_memory_plays_500_steps():
    vector = gym.vector.AsyncVectorEnv([functools.partial(factory, 300, **VECTOR)] * 2, context="spawn")
    try:
        assert vector.shared_memory and run_vector(vector, 500, seed=21) >= 10
    finally:
        vector.close()


def test_async_vector_env_with_forked_workers_and_shared_memory_plays_500_steps():
    """Gymnasium's defaults on Linux: fork and shared memory. The parent has built an env (poke-env's loop thread
    runs here) and played a battle (the service's loop and the runner's decision threads too) before forking."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    played = factory(300, **VECTOR)
    played.reset(seed=1)
    played.step(int(np.flatnonzero(played.unwrapped.action_masks())[0]))
    vector = gym.vector.AsyncVectorEnv([functools.partial(factory, 300, **VECTOR)] * 2, context="fork")
    try:
        assert run_vector(vector, 500, seed=31) >= 10
    finally:
        vector.close()
        played.close()


@pytest.mark.parametrize("observation", ["text", "dict"])
def test_text_and_dict_observations_cross_shared_memory(observation):
    """A text observation has ``#``, ``%``, ``|`` and ``é``: Gymnasium writes it to shared memory one code point at
    a time (with a charset of letters and digits, the first ``#`` was a ``KeyError``)."""
    vector = gym.vector.AsyncVectorEnv([functools.partial(factory, 4, observation=observation, action="discrete")] * 2,
                                       context="spawn")
    direct = ShowdownEnv("random", format=FORMAT, max_turns=4, recordings=False, observation=observation,
                         action="discrete")
    try:
        observations, infos = vector.reset(seed=[41, 42])
        alone, _ = direct.reset(seed=41)
        for _ in range(2):  # the batch handed out is the current one at every step, not the first one again
            if observation == "text":
                assert observations[0] == alone and ("#" in alone or "|" in alone)
            else:
                assert all(np.array_equal(observations[key][0], alone[key]) for key in alone)
            actions = np.array([int(np.flatnonzero(mask)[0]) for mask in infos["action_mask"]])
            observations, _, _, _, infos = vector.step(actions)
            alone = direct.step(int(actions[0]))[0]
        assert run_vector(vector, 40, seed=41) >= 2
    finally:
        vector.close()
        direct.close()


def test_the_env_is_registered_with_gymnasium():
    env = gym.make(ENV_ID, format=FORMAT, recordings=False)
    assert isinstance(env.unwrapped, ShowdownEnv) and env.unwrapped.format == FORMAT
    env.close()
