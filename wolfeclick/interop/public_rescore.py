"""Ask a policy what it would have played at each decision of a public replay, from the inferred player's view.

A public-log import has no seed and no input log, so it cannot be replayed in the simulator the way ``rescore``
replays a battle played here. Its decisions are rebuilt instead (``wolfeclick.interop.views``: the side's own team
completed from the format's set data) and the policy gets each one as the observation a battle would have given it.
A ``search`` policy builds its worlds from that observation with the same loader it uses in a live battle (the
bridge's ``world``), so its option values are an analysis by rollouts from an inferred state. The result is a
``Rescore`` like any other, its metadata saying ``state: from an inferred state``.
"""

from __future__ import annotations

from typing import Any, Iterable

from wolfeclick.battle.branch import RecordedChoice
from wolfeclick.battle.rescore import Rescore, rescored_decision
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.game.sets import SetBook
from wolfeclick.interop.views import PlayerView, player_views
from wolfeclick.policies.base import Observation, Policy
from wolfeclick.sides import Side

INFERRED_STATE = "from an inferred state"
"""How a rescore of a public replay is labelled (its metadata's ``state``, the CLI's line)."""


def is_public_import(recording: Recording) -> bool:
    """A recording known only from a public log: its decisions hold no view (nothing to replay them from)."""
    return not recording.inputlog and any(d.policy_info.get("public_only") for t in recording.turns
                                          for d in t.decisions.values())


def rescore_public(recording: Recording, policy: Policy, side: Side, book: SetBook,
                   at: Iterable[int] | None = None) -> Rescore:
    """``policy``'s answer at each of ``side``'s decisions (``at``: only these decision indices) of a public-log
    import, from the inferred view of that side."""
    wanted = set(at) if at is not None else None
    answers = []

    def probe(view: PlayerView, observation: Observation) -> None:
        if view.side != side or (wanted is not None and view.index not in wanted):
            return
        decision = recording.turns[view.index].decisions[side]
        if view.action is not None:  # the action as the request named it (the log's name may differ: Hidden Power)
            decision = decision.model_copy(update={"action": ActionRecord(action=view.action.kind,
                                                                          choice=view.action.name)})
        answer = policy.decide(observation)
        info: dict[str, Any] = dict(answer.info)
        answers.append(rescored_decision(RecordedChoice(view.index, decision.command, True, decision), view.turn,
                                         answer.action, info))

    player_views(recording, book, [side], probe=probe)
    return Rescore(recording=recording.id, side=side, policy=policy.spec,
                   recorded_policy=recording.players[side].policy,
                   metadata={**policy.metadata(), "state": INFERRED_STATE}, decisions=answers)
