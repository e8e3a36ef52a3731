"""The Arena's battle core as a training environment: Gymnasium (``ShowdownEnv``), TRL's ``environment_factory``
(``ShowdownToolEnv``, ``reward_func``) and an OpenEnv server (``wolfeclick.env.server``, ``wolfeclick.env.client``).

Every episode is a normal recording (``source.kind = "training"``), so training battles show up in Replays.
"""

from __future__ import annotations

import gymnasium

from wolfeclick.env.env import NumericSpaces, ShowdownEnv
from wolfeclick.env.episode import EnvError
from wolfeclick.env.service import SimService, default_service

ENV_ID = "WolfeClick/Showdown-v0"
"""``gymnasium.make(ENV_ID, opponent=…, format=…)`` and ``gymnasium.make_vec``; keyword arguments are ShowdownEnv's.
Registered when this package is imported; Gymnasium 1.x loads no plugins, so in a fresh interpreter use the
module-qualified id ``"wolfeclick.env:WolfeClick/Showdown-v0"`` (Gymnasium imports this package first) or
``import wolfeclick.env`` with ``gymnasium.register_envs(wolfeclick.env)`` (docs/training.md). Every episode is saved,
gzip-compressed, to ``$WOLFECLICK_RECORDINGS`` (else ``./recordings``) unless ``recordings=False``."""
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="wolfeclick.env.env:ShowdownEnv")

__all__ = ["ENV_ID", "EnvError", "NumericSpaces", "ShowdownEnv", "ShowdownToolEnv", "SimService", "default_service", "reward_func"]


def __getattr__(name: str):  # the TRL side is imported on first use
    if name in ("ShowdownToolEnv", "reward_func"):
        from wolfeclick.env import tool_env

        return getattr(tool_env, name)
    raise AttributeError(f"module 'wolfeclick.env' has no attribute {name!r}")
