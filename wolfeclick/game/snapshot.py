"""A compact per-side snapshot for charts (validates as ``wolfeclick.battle.schema.SideSnapshot``).

Built from the side's own ``Battle`` so HP is exact; the other side's ``Battle`` is consulted only to say which of our
Pokémon the opponent has seen, so a chart can tell hidden team members apart.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.game.state import display_name, hp_percent, mean_team_hp, status_name

SnapshotEntries = dict[tuple[Any, ...], dict[str, Any]]
"""One battle's team entries by what they are read from (``side_snapshot``'s ``cache``)."""


def _entry(mon: Any, revealed: bool) -> dict[str, Any]:
    return {
        "species": display_name(mon),
        "hp": hp_percent(mon),
        "status": status_name(mon),
        "fainted": bool(mon.fainted),
        "active": bool(mon.active),
        "revealed": revealed,
    }


def side_snapshot(own: Any, opponent_view: Any = None, cache: SnapshotEntries | None = None) -> dict[str, Any]:
    """The SideSnapshot dict for the side owning ``own``; ``revealed`` comes from ``opponent_view`` when given
    (whether the opponent's ``Battle`` has our Pokémon ``'p1: Pikachu'`` in its opponent team).

    ``cache`` (an empty dict at first, then kept for this one battle) hands back the entry of a Pokémon read the
    same as before instead of writing it again (the raw values are cheaper to read than the entry is to write);
    its entries are shared between snapshots, so treat them as read-only."""
    return side_snapshot_read(own, opponent_view, cache)[0]


TeamReading = tuple[float, int, Any]
"""What the reward reads off a side's own team (``game.reward.reward_view``): its six-slot mean HP of fractions,
how many fainted, and its active Pokémon (poke-env's ``active_pokemon``: the first active one in team order)."""


def side_snapshot_read(own: Any, opponent_view: Any = None,
                       cache: SnapshotEntries | None = None) -> tuple[dict[str, Any], TeamReading]:
    """``side_snapshot`` and the reward's reading of the same team, from one read of each Pokémon (an import reads
    both at every decision point: reading the team twice was a tenth of its CPU)."""
    seen = opponent_view.opponent_team if opponent_view is not None else None  # a property: read once
    team: list[dict[str, Any]] = []
    active: dict[str, Any] | None = None
    active_mon: Any = None
    levels: list[float] = []
    fainted = 0
    for key, mon in own.team.items():
        revealed = key in seen if seen is not None else bool(mon.revealed)
        gone, fraction, on_field = mon.fainted, mon.current_hp_fraction, mon.active
        if cache is None:
            entry = _entry(mon, revealed)
        else:  # every value _entry reads (the generation aside: one battle's, so one cache a battle)
            read = (mon.species, gone, fraction, mon.status, on_field, revealed)
            cached = cache.get(read)
            entry = cached if cached is not None else cache.setdefault(read, _entry(mon, revealed))
        team.append(entry)
        if gone:  # as game.reward reads a team: a fainted one at 0, else its fraction clamped to [0, 1]
            levels.append(0.0)
            fainted += 1
        else:
            levels.append(max(0.0, min(1.0, float(fraction))))
        if active is None and entry["active"]:
            active = entry  # poke-env's active_pokemon: the first active one in team order
            active_mon = mon
    snapshot = {
        "active": active["species"] if active is not None else None,
        "active_hp": active["hp"] if active is not None else None,
        "active_status": active["status"] if active is not None else None,
        "team_hp": round(mean_team_hp([entry["hp"] for entry in team]), 1),
        "fainted": sum(1 for entry in team if entry["fainted"]),
        "team": team,
    }
    return snapshot, (mean_team_hp(levels, full=1.0), fainted, active_mon)
