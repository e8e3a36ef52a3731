"""Side snapshots validate as the recording schema and tell revealed from hidden team members."""

from __future__ import annotations

from game_helpers import both, feed, new_battle, request, team

from wolfeclick.battle.schema import SideSnapshot
from wolfeclick.game.snapshot import side_snapshot
from wolfeclick.game.state import mean_team_hp

LINES = [
    "|move|p1a: Pikachu|Thunderbolt|p2a: Gyarados",
    "|-supereffective|p2a: Gyarados",
    "|-damage|p2a: Gyarados|0 fnt",
    "|faint|p2a: Gyarados",
    "|switch|p2a: Ferrothorn|Ferrothorn, L84|200/200",
    "|move|p2a: Ferrothorn|Leech Seed|p1a: Pikachu",
    "|-damage|p1a: Pikachu|150/200",
    "|-status|p1a: Pikachu|par",
]


def test_snapshot_fields_validate_as_schema() -> None:
    p1, p2 = both(LINES)
    snap = side_snapshot(p1, p2)
    assert set(snap) == set(SideSnapshot.model_fields)
    SideSnapshot.model_validate(snap)
    SideSnapshot.model_validate(side_snapshot(p2, p1))


def test_own_side_values() -> None:
    p1, p2 = both(LINES)
    snap = side_snapshot(p1, p2)
    assert snap["active"] == "Pikachu"
    assert snap["active_hp"] == 75.0
    assert snap["active_status"] == "PAR"
    assert snap["fainted"] == 0
    assert snap["team_hp"] == round((75 + 500) / 6, 1)
    assert [m["species"] for m in snap["team"]] == ["Pikachu", "Snorlax", "Garchomp", "Starmie", "Scizor", "Gengar"]
    assert [m["revealed"] for m in snap["team"]] == [True] + [False] * 5
    assert [m["active"] for m in snap["team"]] == [True] + [False] * 5


def test_fainted_and_revealed_on_the_other_side() -> None:
    p1, p2 = both(LINES)
    snap = side_snapshot(p2, p1)
    by_species = {m["species"]: m for m in snap["team"]}
    assert snap["fainted"] == 1
    assert by_species["Gyarados"] == {
        "species": "Gyarados", "hp": 0.0, "status": None, "fainted": True, "active": False, "revealed": True,
    }  # fmt: skip
    assert by_species["Ferrothorn"]["revealed"] and by_species["Ferrothorn"]["active"]
    assert not by_species["Blissey"]["revealed"]
    assert snap["team_hp"] == round(500 / 6, 1)


def test_without_opponent_view_revealed_means_has_appeared() -> None:
    p1, _ = both([])
    snap = side_snapshot(p1)
    assert [m["revealed"] for m in snap["team"]] == [True] + [False] * 5


def test_no_active_yet() -> None:
    mons = team("p1")
    for mon in mons:
        mon["active"] = False
    snap = side_snapshot(new_battle("p1", request("p1", mons, wait=True)))
    assert snap["active"] is None and snap["active_hp"] is None and snap["active_status"] is None
    SideSnapshot.model_validate(snap)


def test_team_hp_counts_missing_slots_as_full() -> None:
    assert round(mean_team_hp([50.0]), 1) == round((50 + 500) / 6, 1)
    assert mean_team_hp([0.0] * 6) == 0.0
    assert mean_team_hp([]) == 100.0


def test_an_entry_cache_never_changes_the_snapshot() -> None:
    """The runner keeps one cache per side for a whole battle: after every line, both sides' snapshots with it are
    the snapshots without it (HP, a faint, a status, a switch and a reveal all happen on the way)."""
    p1, p2 = both([])
    caches: dict[str, dict] = {"p1": {}, "p2": {}}
    for line in LINES:
        for battle in (p1, p2):
            feed(battle, [line])
        for side, own, view in (("p1", p1, p2), ("p2", p2, p1)):
            assert side_snapshot(own, view, caches[side]) == side_snapshot(own, view)
    assert caches["p1"] and caches["p2"]
