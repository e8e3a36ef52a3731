"""The pure presentation layer: wording, input reading, the error split, lists and the viewer payload."""

from __future__ import annotations

import json

import pytest

from devkit.samples import sample_path
from wolfeclick.battle.store import RecordingError, load_recording
from wolfeclick.errors import WolfeClickError
from wolfeclick.ui.battle_panels import BattleView
from wolfeclick.ui.presentation import (
    BUG_MESSAGE,
    InputError,
    clamp_pace,
    compare_label,
    error_line,
    finished_phase,
    int_param,
    jump_to_turn,
    page_of,
    parse_step,
    result_text,
    search_rows,
    share_query,
    status_line,
    verdict_rows,
)
from wolfeclick.ui.viewer_payload import MAX_PAYLOAD_BYTES, battle_payload, live_payload, nice_ticks

NAMES = {"p1": "heuristic", "p2": "random"}


def test_result_wording_never_contradicts_the_turn_shown():
    assert result_text({"winner": "p1", "reason": "win", "turns": 22}, NAMES) == "heuristic (p1) won in turn 22"
    assert result_text({"winner": None, "reason": "aborted", "turns": 6}, NAMES) == "stopped during turn 6"
    assert "after" not in result_text({"winner": None, "reason": "aborted", "turns": 6}, NAMES)
    assert result_text(None, NAMES) == "in progress"
    assert result_text({"winner": "p2", "reason": "forfeit", "turns": 3}, NAMES).endswith("by forfeit")


def test_status_line_has_one_state_word():
    line = status_line(finished_phase({"reason": "aborted"}), "**a** vs **b**", "stopped during turn 6")
    assert line.startswith("Stopped") and "Finished" not in line
    assert status_line(finished_phase({"reason": "win"}), "t", "x").startswith("Finished")
    assert status_line("live", "t", "turn 3 · 4 decisions") == "● Live · t · turn 3 · 4 decisions"


def test_pace_is_clamped():
    assert clamp_pace(99, 0.4) == 5.0 and clamp_pace(-1, 0.4) == 0.0 and clamp_pace("x", 0.4) == 0.4
    assert clamp_pace(float("nan"), 0.4) == 0.4 and clamp_pace(None, 0.7) == 0.7


@pytest.mark.parametrize("bad", ["abc", [1], {}, -1, 2.5, True, "1" * 20])
def test_parse_step_refuses_in_one_line(bad):
    with pytest.raises(InputError) as info:
        parse_step(bad)
    assert "\n" not in str(info.value) and isinstance(info.value, WolfeClickError)


def test_parse_step_accepts_whole_numbers():
    assert [parse_step(v) for v in (0, 3, "7", 4.0, None)] == [0, 3, 7, 4, 0]


def test_jump_to_turn_clamps_and_says_so():
    turns = [1, 2, 2, 3, 4]
    assert jump_to_turn(turns, 2) == (1, "")
    index, message = jump_to_turn(turns, -3)
    assert index == 0 and "Turn -3 is not in this battle (turns 1–4)" in message
    index, message = jump_to_turn(turns, 0)
    assert index == 0 and "not in this battle" in message  # 0 was silently accepted before
    index, message = jump_to_turn(turns, 2.5)
    assert index == 1 and "whole" in message
    assert jump_to_turn(turns, 99)[0] == 4 and jump_to_turn(turns, "x")[1].startswith("“x” is not a turn number")


def test_share_query_and_params():
    assert share_query("r", [1, 2, 2, 3], 2) == "?replay=r&turn=2&step=2"
    assert share_query("r", [1, 2, 2, 3], 1) == "?replay=r&turn=2"
    assert int_param("12") == 12 and int_param("-1") is None and int_param("9" * 20) is None


def test_error_split():
    assert error_line(RecordingError("bad file")) == ("⚠ bad file", False)
    assert error_line(KeyError("p2")) == (BUG_MESSAGE, True)


def test_search_and_pages():
    rows = [{"id": f"r{i}", "p1": "heuristic" if i % 2 else "random", "p2": "maxdamage", "format": "gen4",
             "winner": "p1", "source": "tournament" if i < 3 else "played", "policies": ""} for i in range(60)]
    assert len(search_rows(rows, "heuristic")) == 30
    assert len(search_rows(rows, "source:tournament")) == 3
    assert len(search_rows(rows, "source:tournament heuristic")) == 1
    page = page_of(search_rows(rows, ""), 3, 25)
    assert (page.page, page.pages, page.total, len(page.rows)) == (3, 3, 60, 10)
    assert page_of(rows, 99, 25).page == 3 and page_of(rows, "x", 25).page == 1
    assert page.caption() == "Page 3 of 3 · 60 recordings"


def test_compare_label_and_verdicts():
    label = compare_label("t-abc", ["random", "heuristic"], "gen4randombattle", "2026-12-01 09:00 UTC", 4, 8)
    assert label.startswith("2026-12-01 09:00 UTC · random vs heuristic") and "4 of 8 battles" in label
    assert verdict_rows({}) == [] and verdict_rows(None) == []
    summary = {"pairings": [{"a": "x", "b": "y", "verdict": {"kind": "stronger", "text": "x wins", "more_pairs": 0,
                                                             "favoured": "x"}}, {"a": "x", "b": "z"}]}
    assert verdict_rows(summary) == [["x vs y", "stronger", "x", "x wins", ""]]


def test_ticks_are_whole_turns():
    assert all(float(t).is_integer() for t in nice_ticks(1, 3, 8, integer=True))
    assert nice_ticks(1, 3, 8, integer=True) == [1, 2, 3]


def test_payload_carries_the_whole_battle_once():
    view = BattleView.of(load_recording(sample_path()))
    payload = battle_payload(view, replay_id="x", start=5)
    assert payload["total"] == view.steps and len(payload["panels"]) == view.steps and payload["first"] == 0
    assert payload["start"] == 5 and len(payload["list"]) == view.steps
    assert len(payload["marks"]["hp"]) == view.steps
    assert len(json.dumps(payload)) < MAX_PAYLOAD_BYTES


def test_payload_is_bounded_for_huge_battles():
    view = BattleView.of(load_recording(sample_path()))
    small = battle_payload(view, replay_id="x", start=10, budget=30_000)
    assert 0 < len(small["panels"]) < view.steps and small["first"] <= 10 < small["first"] + len(small["panels"])
    assert sum(len(p) for p in small["panels"]) < 30_000 + max(len(p) for p in small["panels"])  # + one panel


def test_live_payload_resends_the_settled_step():
    view = BattleView.of(load_recording(sample_path()))
    update = live_payload(view, run="r", since=3, status="")
    assert update["first"] == 3 and len(update["panels"]) == view.steps - 3 and update["marks_first"] == 0


def test_a_mirror_match_names_each_side_once_and_counts_read_in_the_singular():
    """Issue 27: "random (p2) (p2) won" (the runner already names mirror sides "random (p2)"), "1 decisions",
    "1 recordings"."""
    from wolfeclick.battle.runner import player_names
    from wolfeclick.ui.presentation import Page, compare_label, plural, result_text

    names = player_names("random", "random")
    assert result_text({"winner": "p2", "reason": "win", "turns": 5}, names) == "random (p2) won in turn 5"
    assert result_text({"winner": "p1", "reason": "win", "turns": 5}, {"p1": "You"}) == "You (p1) won in turn 5"
    assert [plural(n, "decision") for n in (0, 1, 2)] == ["0 decisions", "1 decision", "2 decisions"]
    assert Page(["x"], 1, 1, 1).caption() == "Page 1 of 1 · 1 recording"
    assert Page(["x", "y"], 1, 1, 2).caption() == "Page 1 of 1 · 2 recordings"
    assert " · 1 battle · " in compare_label("t1", ["a", "b"], "gen4randombattle", "2026-12-01", 1, 1)


def test_the_page_refuses_in_the_projects_one_input_error() -> None:
    """ui/presentation had a second InputError that ``except wolfeclick.errors.InputError`` did not catch."""
    from wolfeclick.errors import InputError as ProjectInputError
    from wolfeclick.ui.presentation import parse_step

    with pytest.raises(ProjectInputError, match="whole number"):
        parse_step("-3")
