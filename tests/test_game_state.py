"""The state markdown: three parts, readable statuses, no object reprs, nothing the side cannot know."""

from __future__ import annotations

from game_helpers import TEAMS, both, feed

from wolfeclick.game.state import format_state, speed_range, speed_stat, stage_multiplier

LINES = [
    "|move|p1a: Pikachu|Thunderbolt|p2a: Gyarados",
    "|-supereffective|p2a: Gyarados",
    "|-damage|p2a: Gyarados|100/200",
    "|move|p2a: Gyarados|Waterfall|p1a: Pikachu",
    "|-damage|p1a: Pikachu|120/200",
    "|-status|p1a: Pikachu|brn",
    "|-boost|p2a: Gyarados|spe|1",
    "|-weather|RainDance",
]


def test_three_parts_in_order() -> None:
    text = format_state(both(LINES)[0])
    headers = ("## Part A: Active Field", "## Part B: Full Self Roster", "## Part C: Opponent History")
    a, b, c = (text.index(h) for h in headers)
    assert a < b < c


def test_readable_values_and_no_reprs() -> None:
    for battle in both(LINES):
        text = format_state(battle)
        assert "BRN" in text
        assert "<" not in text and "Status." not in text and "object" not in text
        assert "Status: none" in text
    p1_text = format_state(both(LINES)[0])
    assert "Thunderbolt (Electric, 90 BP)" in p1_text
    assert "Thunder Wave (Electric, status)" in p1_text
    assert "- Stat stages: spe +1" in p1_text
    assert "Weather: raindance" in p1_text
    assert "Ability: possible: intimidate / moxie" in p1_text
    assert "Item: unknown" in p1_text


def test_hides_what_the_side_cannot_know() -> None:
    p1, p2 = both(LINES)
    p1_text, p2_text = format_state(p1), format_state(p2)
    for species, *_ in TEAMS["p2"][1:]:
        assert species not in p1_text
    for species, *_ in TEAMS["p1"][1:]:
        assert species not in p2_text
    assert "Unrevealed: 5" in p1_text and "Unrevealed: 5" in p2_text
    # p2's own moves and item are in p2's view, only the revealed move in p1's.
    assert "Dragon Dance" in p2_text and "Dragon Dance" not in p1_text
    assert "Revealed moves: Waterfall (Water, 80 BP)" in p1_text
    assert "heavydutyboots" in p2_text and "heavydutyboots" not in p1_text


def test_hp_and_status_per_side() -> None:
    p1, p2 = both(LINES)
    p1_text, p2_text = format_state(p1), format_state(p2)
    assert "Pikachu (L88) [active] | HP 60.0% | Status: BRN" in p1_text
    assert "Gyarados (L80) [active] | Last HP 50.0%" in p1_text
    assert "Pikachu (L88) [active] | Last HP 60.0% | Status: BRN" in p2_text


def test_deterministic() -> None:
    assert format_state(both(LINES)[0]) == format_state(both(LINES)[0])


def test_speed_range_uses_level_and_stage() -> None:
    # Gyarados: base 81, level 80, at +1 speed.
    low = speed_stat(81, 80, 0, 0, 0.9)
    high = speed_stat(81, 80, 31, 252, 1.1)
    assert (low, high) == (120, 229)
    p1, p2 = both(LINES)
    assert speed_range(p1.opponent_active_pokemon) == (180, 343)
    assert "Possible speed: 180-343" in format_state(p1)
    assert "Speed: 200 (effective 300 at +1)" in format_state(p2)
    assert stage_multiplier(-1) == 2 / 3 and stage_multiplier(6) == 4.0


def test_a_roster_cache_never_changes_the_text() -> None:
    """The runner keeps one cache per side for a whole battle: after every line, the text with it is the text
    without it, for both sides (HP, status, revealed moves and the active Pokémon all change on the way)."""
    p1, p2 = both([])
    caches: dict[str, dict] = {"p1": {}, "p2": {}}
    for line in LINES:
        for side, battle in (("p1", p1), ("p2", p2)):
            feed(battle, [line])
            assert format_state(battle, caches[side]) == format_state(battle)
    assert caches["p1"] and caches["p2"]
