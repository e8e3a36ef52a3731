"""A simulator that dies under a vector env ends only the episode it was playing: that env's step returns
``truncated=True`` with the simulator's error in ``info["error"]``, the env starts a fresh simulator at its next
reset, and training goes on. Shown with the real Node process killed (SIGKILL) inside a worker of Gymnasium's
``AsyncVectorEnv`` and of SB3's ``SubprocVecEnv`` under sb3-contrib's ``MaskablePPO``, each then running 1,000 more
steps; ``close()`` returns afterwards."""

from __future__ import annotations

import functools
import os
import signal
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from wolfeclick.battle.store import load_recording
from wolfeclick.env import ENV_ID, ShowdownEnv, SimService

FORMAT = "gen9randombattle"
MORE_STEPS = 1_000
HANG_GUARD_S = 180
"""Only a bound so that a hang fails the test instead of the suite (close() takes well under a second)."""


def factory(**kwargs) -> gym.Env:
    return gym.make(ENV_ID, opponent="random", format=FORMAT, recordings=False, observation="vector",
                    action="discrete", **kwargs)


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found


def simulators_under(pid: int) -> list[int]:
    """The Node simulator processes a worker process started."""
    out = []
    for child in descendants(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(command) in (b"node", b"nodejs"):
            out.append(child)
    return out


def kill_simulators_of(worker_pid: int) -> list[int]:
    pids = simulators_under(worker_pid)
    assert pids, f"worker {worker_pid} runs no simulator"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids


def close_within_guard(closable) -> None:
    """``closable.close()`` in a thread: a hang fails the test instead of hanging the suite."""
    errors: list[BaseException] = []

    def close() -> None:
        try:
            closable.close()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=close, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), "close() did not return"
    assert not errors, errors


def masked_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks.astype(bool)])


def test_a_single_env_truncates_on_a_dead_simulator_and_plays_on_after_reset(tmp_path):
    service = SimService(1)
    try:
        env = ShowdownEnv("random", format=FORMAT, recordings=tmp_path, service=service, step_timeout_s=60)
        _, info = env.reset(seed=2)
        assert info["error"] == ""
        service.pool.processes[0].kill()
        _, reward, terminated, truncated, info = env.step(0)
        assert (terminated, truncated) == (False, True)
        assert info["error"].startswith("simulator") and "\n" not in info["error"]
        assert info["result"]["reason"] == "aborted" and info["done"] is True and info["result"]["error"]
        assert info["reward"]["outcome"] == 0.0
        recording = load_recording(Path(info["recording_path"]))
        assert recording.result.reason == "aborted"  # the turns played so far are kept
        _, info = env.reset(seed=2)  # the dead simulator was replaced: the next battle plays
        assert info["error"] == "" and info["legal_actions"]
        assert env.step(0)[-1]["turn"] >= 1
        env.close()
    finally:
        service.close()


def test_async_vector_env_plays_on_after_a_worker_simulator_is_killed():
    vector = gym.vector.AsyncVectorEnv([factory] * 2)
    rng = np.random.default_rng(7)
    try:
        _, infos = vector.reset(seed=[5, 6])
        for _ in range(2):
            _, _, terminated, truncated, infos = vector.step(masked_actions(infos["action_mask"], rng))
        assert not (terminated | truncated).any()
        kill_simulators_of(vector.processes[0].pid)
        errors, ends = [], 0
        for _ in range(MORE_STEPS):
            _, _, terminated, truncated, infos = vector.step(masked_actions(infos["action_mask"], rng))
            for index in np.flatnonzero(terminated | truncated):
                ends += 1
                if infos["error"][index]:
                    errors.append((int(index), bool(truncated[index]), str(infos["error"][index])))
        assert len(errors) == 1 and errors[0][:2] == (0, True), errors
        assert "simulator" in errors[0][2]
        assert ends >= 10  # both envs went on through many more episodes
    finally:
        close_within_guard(vector)


def kill_once(at: int):
    """An SB3 callback: kill worker 0's simulator once ``at`` steps were taken; note every episode end's error."""
    from stable_baselines3.common.callbacks import BaseCallback

    class KillOnce(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.at, self.killed_at, self.errors, self.ends = at, None, [], 0

        def _on_step(self) -> bool:
            for index, (done, info) in enumerate(zip(self.locals["dones"], self.locals["infos"])):
                if done:
                    self.ends += 1
                    if info.get("error"):
                        self.errors.append((index, bool(info.get("TimeLimit.truncated")), info["error"]))
            if self.killed_at is None and self.num_timesteps >= self.at:
                kill_simulators_of(self.training_env.processes[0].pid)
                self.killed_at = self.num_timesteps
            return True

    return KillOnce()


def test_maskable_ppo_on_subproc_vec_env_trains_on_after_a_worker_simulator_is_killed():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vector = SubprocVecEnv([functools.partial(factory, max_turns=300)] * 2)
    try:
        model = sb3_contrib.MaskablePPO("MlpPolicy", vector, n_steps=64, batch_size=64, n_epochs=1, seed=3,
                                        device="cpu")
        callback = kill_once(at=40)
        model.learn(total_timesteps=40 + MORE_STEPS, callback=callback)
        assert callback.killed_at is not None and model.num_timesteps >= callback.killed_at + MORE_STEPS
        assert len(callback.errors) == 1 and callback.errors[0][:2] == (0, True), callback.errors
        assert callback.ends >= 5
    finally:
        close_within_guard(vector)
