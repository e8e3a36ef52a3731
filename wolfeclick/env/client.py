"""The client for ``python -m wolfeclick serve-env``: openenv-core's WebSocket ``EnvClient`` with typed results.

    with ShowdownClient(base_url="http://127.0.0.1:8001").sync() as client:
        result = client.reset(seed=1, opponent="heuristic")
        while not result.done:
            result = client.step(ShowdownAction(index=0))

One client is one session and so one battle at a time; closing it forfeits a battle still in progress.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from wolfeclick.env.server import ShowdownAction, ShowdownObservation, ShowdownState

__all__ = ["ShowdownAction", "ShowdownClient", "ShowdownObservation", "ShowdownState"]


class ShowdownClient(EnvClient[ShowdownAction, ShowdownObservation, ShowdownState]):
    """``reset(seed=…, opponent=…, format=…)`` and ``step(ShowdownAction(text=…) | ShowdownAction(index=…))``."""

    def _step_payload(self, action: ShowdownAction) -> dict[str, Any]:
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ShowdownObservation]:
        data = dict(payload.get("observation") or {})
        observation = ShowdownObservation(**data, reward=payload.get("reward"), done=bool(payload.get("done")))
        return StepResult(observation=observation, reward=payload.get("reward"), done=bool(payload.get("done")))

    def _parse_state(self, payload: dict[str, Any]) -> ShowdownState:
        return ShowdownState(**payload)
