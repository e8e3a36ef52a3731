"""A compact per-side snapshot for charts (validates as ``wolfeclick.battle.schema.SideSnapshot``).

Built from the side's own ``Battle`` so HP is exact; the other side's ``Battle`` is consulted only to say which of our
Pokémon the opponent has seen, so a chart can tell hidden team members apart.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.game.state import display_name, hp_percent, mean_team_hp, status_name


def _seen_by(opponent_view: Any, key: str) -> bool:
    """Whether the opponent's ``Battle`` has our Pokémon ``key`` (``'p1: Pikachu'``) in its opponent team."""
    return key in opponent_view.opponent_team


def side_snapshot(own: Any, opponent_view: Any = None) -> dict[str, Any]:
    """The SideSnapshot dict for the side owning ``own``; ``revealed`` comes from ``opponent_view`` when given."""
    team: list[dict[str, Any]] = []
    for key, mon in own.team.items():
        revealed = _seen_by(opponent_view, key) if opponent_view is not None else bool(mon.revealed)
        team.append(
            {
                "species": display_name(mon),
                "hp": hp_percent(mon),
                "status": status_name(mon),
                "fainted": bool(mon.fainted),
                "active": bool(mon.active),
                "revealed": revealed,
            }
        )
    active = own.active_pokemon
    return {
        "active": display_name(active) if active is not None else None,
        "active_hp": hp_percent(active) if active is not None else None,
        "active_status": status_name(active) if active is not None else None,
        "team_hp": round(mean_team_hp([entry["hp"] for entry in team]), 1),
        "fainted": sum(1 for entry in team if entry["fainted"]),
        "team": team,
    }
