"""The shortcuts the hot path takes (issue 17) keep their meaning: shared views, shared splits, skipped lines.

The end-to-end proof is ``test_perf_golden`` (50 battles, byte-identical recordings); these pin the pieces.
"""

from __future__ import annotations

from wolfeclick.battle.tracker import SideTracker, split_lines
from wolfeclick.game.reward import _effectiveness
from wolfeclick.sim.protocol import split_update

START = ["|player|p1|Alice|", "|player|p2|Bob|", "|teamsize|p1|6", "|teamsize|p2|6", "|gen|9", "|start"]


def test_an_update_without_secrets_is_one_shared_view_and_secrets_still_split() -> None:
    public = ["|", "|move|p1a: Pikachu|Tackle|p2a: Eevee", "|-damage|p2a: Eevee|80/100", "|upkeep", "|turn|2"]
    views = split_update(public)
    assert views["p1"] is views["p2"] is views["spectator"] is public
    secret = ["|split|p2", "|-damage|p2a: Eevee|150/188", "|-damage|p2a: Eevee|80/100", "|turn|3"]
    views = split_update(secret)
    assert views["p2"] == ["|-damage|p2a: Eevee|150/188", "|turn|3"]
    assert views["p1"] == views["spectator"] == ["|-damage|p2a: Eevee|80/100", "|turn|3"]


def test_split_lines_drops_non_protocol_lines_and_splits_a_shared_line_once() -> None:
    cache: dict[str, list[str]] = {}
    first = split_lines(["|move|p1a: A|Tackle|p2a: B", "not protocol", ""], cache)
    second = split_lines(["|move|p1a: A|Tackle|p2a: B", "|turn|1"], cache)
    assert first == [["", "move", "p1a: A", "Tackle", "p2a: B"]]
    assert second[0] is first[0] and second[1] == ["", "turn", "1"]
    assert split_lines(["|x|y"]) == [["", "x", "y"]]


def test_a_tracker_fed_shared_splits_tracks_both_sides_and_skips_ignored_lines() -> None:
    trackers = {side: SideTracker("t", side, name, "gen9randombattle") for side, name in (("p1", "Alice"),
                                                                                        ("p2", "Bob"))}
    lines = START + ["|", "|switch|p1a: Pikachu|Pikachu, L88, M|100/100", "|switch|p2a: Eevee|Eevee, L90, F|100/100",
                     "|upkeep", "|turn|1", "|move|p1a: Pikachu|Thunderbolt|p2a: Eevee", "|-damage|p2a: Eevee|40/100"]
    cache: dict[str, list[str]] = {}
    for tracker in trackers.values():
        tracker.feed_parts(split_lines(lines, cache))
    p1, p2 = trackers["p1"].battle, trackers["p2"].battle
    assert p1.turn == p2.turn == 1
    assert p1.opponent_active_pokemon.current_hp_fraction == 0.4
    assert "thunderbolt" in p2.opponent_active_pokemon.moves
    assert not trackers["p1"].warnings and not trackers["p2"].warnings
    # what poke-env ignores never reaches it (its replay buffer holds only lines it acts on), but for the
    # ``upkeep`` the v1 prompt's history reads to infer a wait request
    tags = [parts[1] for parts in p1._replay_data]
    assert "" not in tags and tags.count("upkeep") == 1


def test_effectiveness_reads_only_its_tags() -> None:
    events = ["|move|p1a: Pikachu|Thunderbolt|p2a: Gyarados", "|-supereffective|p2a: Gyarados", "|-damage|p2a: G|1/100",
              "|move|p2a: Gyarados|Earthquake|p1a: Pikachu", "|-supereffective|p1a: Pikachu", "|turn|4",
              "|-immune|p2a: Gyarados", "|move|p1a: Pikachu|Thunderbolt|p2a: Dugtrio", "|-immune|p2a: Dugtrio"]
    assert _effectiveness(events, "p1") == 0.5 - 1.0
    assert _effectiveness(events, "p2") == 0.5
