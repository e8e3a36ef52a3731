"""Plain helpers several test modules share (the shared fixtures are in ``tests/conftest.py``): a recording's
identity, the command line in a subprocess, and an env reset in a forked child."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

from wolfeclick.battle.schema import Recording

ROOT = Path(__file__).resolve().parents[1]


BRANCH_NAMING = ("id", "source")
"""What a branch replaying its parent names differently (its own id, its parent): left out to compare the battles."""


def identity(recording: Recording, apart: tuple[str, ...] = ()) -> str:
    """The recording without its measurements (write time, decision latency), which no seed can fix, nor the
    top-level fields named in ``apart``."""
    data = json.loads(recording.to_json())
    for key in ("created", *apart):
        data.pop(key)
    for turn in data["turns"]:
        for decision in turn["decisions"].values():
            decision.pop("latency_ms")
    return json.dumps(data, sort_keys=True)


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wolfeclick", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def forked_reset(queue: "multiprocessing.Queue[str]", format: str = "gen9randombattle") -> None:
    """Reset an env in a forked child and put one line on ``queue``: what it played, or the error it raised."""
    from wolfeclick.env import ShowdownEnv

    try:
        env = ShowdownEnv(format=format, recordings=False)
        obs, info = env.reset(seed=4)
        queue.put(f"played {len(info['legal_actions'])}")
        env.close()
    except Exception as exc:  # what the parent checks: one line naming the spawn context
        queue.put(f"{type(exc).__name__}: {exc}")
