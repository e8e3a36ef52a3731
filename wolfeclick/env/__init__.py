"""The Arena's battle core as a training environment: Gymnasium (``ShowdownEnv``), TRL's ``environment_factory``
(``ShowdownToolEnv``, ``reward_func``) and an OpenEnv server (``wolfeclick.env.server``, ``wolfeclick.env.client``).

Every episode is a normal recording (``source.kind = "training"``), so training battles show up in Replays.
"""

from __future__ import annotations

from wolfeclick.env.env import ShowdownEnv
from wolfeclick.env.episode import EnvError
from wolfeclick.env.service import SimService, default_service

__all__ = ["EnvError", "ShowdownEnv", "ShowdownToolEnv", "SimService", "default_service", "reward_func"]


def __getattr__(name: str):  # the TRL side is imported on first use
    if name in ("ShowdownToolEnv", "reward_func"):
        from wolfeclick.env import tool_env

        return getattr(tool_env, name)
    raise AttributeError(f"module 'wolfeclick.env' has no attribute {name!r}")
