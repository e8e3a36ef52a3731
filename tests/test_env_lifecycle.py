"""Envs end with the interpreter: a script that never calls ``close()`` exits, its open battle is forfeited and
saved, and no simulator outlives it; a forked child plays, before and after its parent played; a killed simulator is healed
through the pool's own locked path by envs resetting at once, and ``close()`` leaves no Node process behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from wolfeclick.battle.store import load_recording
from wolfeclick.env import ShowdownEnv, SimService

ROOT = Path(__file__).resolve().parents[1]
FORMAT = "gen9randombattle"
HANG_GUARD_S = 120
"""Only a bound so that a hang fails the test instead of the suite: the scripts exit in seconds."""


def run_child(code: str, tmp_path: Path) -> dict:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the script did not exit (no close() called): {exc.stdout!r}")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def assert_forfeited_and_stopped(out: dict, folder: Path) -> None:
    recording = load_recording(next(folder.glob("*.json")))
    assert recording.result.reason == "forfeit" and recording.result.winner == "p2"
    assert out["pids"] and all(gone(pid) for pid in out["pids"])  # the script's own simulators were stopped


def test_a_script_that_never_closes_its_env_exits_and_forfeits(tmp_path):
    out = run_child(f"""
        import json
        from wolfeclick.env import ShowdownEnv
        env = ShowdownEnv(format={FORMAT!r}, recordings="out")
        env.reset(seed=3)
        env.step(0)
        print(json.dumps({{"pids": [p.pid for p in env.service.pool.processes]}}))
    """, tmp_path)
    assert_forfeited_and_stopped(out, tmp_path / "out")


def test_a_script_that_never_closes_its_tool_env_exits_and_forfeits(tmp_path):
    out = run_child(f"""
        import json
        from wolfeclick.env import ShowdownToolEnv
        env = ShowdownToolEnv(format={FORMAT!r}, recordings="out")
        env.reset(seed=7)
        print(json.dumps({{"pids": [p.pid for p in env._env.service.pool.processes]}}))
    """, tmp_path)
    assert_forfeited_and_stopped(out, tmp_path / "out")


def test_an_env_in_a_forked_child_plays_before_and_after_the_parent_played(tmp_path):
    out = run_child(f"""
        import json, multiprocessing
        from tests.helpers import forked_reset
        from wolfeclick.env import ShowdownEnv
        fork = multiprocessing.get_context("fork")

        def child():
            queue = fork.Queue()
            process = fork.Process(target=forked_reset, args=(queue, {FORMAT!r}))
            process.start()
            answer = queue.get(timeout=120)
            process.join(120)
            return answer

        before = child()  # poke-env's loop thread is already running here: a forked child has none, nor needs it
        env = ShowdownEnv(format={FORMAT!r}, recordings=False)
        env.reset(seed=1)
        after = child()  # the service's loop and the runner's decision threads too: the child starts its own
        env.step(0)  # the parent's battle is untouched by the child's
        print(json.dumps({{"answers": [before, after]}}))
    """, tmp_path)
    assert [answer.split()[0] for answer in out["answers"]] == ["played", "played"], out["answers"]


@pytest.mark.fresh_simulators  # waits for its simulators to end
def test_envs_resetting_after_a_kill_heal_through_the_pool_and_close_stops_every_simulator(tmp_path):
    service = SimService(1)
    try:
        first = ShowdownEnv("random", format=FORMAT, recordings=False, service=service)
        first.reset(seed=2)
        first.close()
        killed = service.pool.processes[0]
        killed.kill()
        envs = [ShowdownEnv("random", format=FORMAT, recordings=False, service=service) for _ in range(4)]
        errors: list[BaseException] = []
        barrier = threading.Barrier(len(envs))

        def reset(env: ShowdownEnv, seed: int) -> None:
            barrier.wait()
            try:
                env.reset(seed=seed)
                env.step(0)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=reset, args=(env, 10 + n)) for n, env in enumerate(envs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HANG_GUARD_S)
        assert not errors, errors
        assert service.pool.replaced == 1 and len(service.pool.processes) == 1
        pids = [killed.pid, service.pool.processes[0].pid]
        for env in envs:
            env.close()
    finally:
        service.close()
    assert all(gone(pid) for pid in pids)
