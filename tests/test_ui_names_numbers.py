"""One decision numbering in every text, and names that follow take-overs (issue 47, items 3 and 4).

A branch keeps its parent's player names in the simulator (its replayed decisions must reproduce the parent's log),
so a page that showed the recorded names called a side taken over by ``maxdamage`` "random" everywhere. Each place a
name is shown (header, narration, legends, the Replays list, the analysis card) now reads ``played_by``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from wolfeclick.analysis.core import summary_line
from wolfeclick.analysis.schema import Analysis, TurningPoint
from wolfeclick.battle.branch import branch
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.ui.battle_panels import BattleMeta, BattleView
from wolfeclick.ui.library import Library, source_text
from wolfeclick.ui.presentation import played_by


def test_played_by_names_both_parts_of_a_side_taken_over_and_nothing_else() -> None:
    names = {"p1": "heuristic", "p2": "random"}
    assert played_by(names, {"p1": "heuristic", "p2": "maxdamage"}, True) == {"p1": "heuristic",
                                                                               "p2": "random → maxdamage"}
    assert played_by(names, {"p1": "human", "p2": "random"}, True) == {"p1": "heuristic → human", "p2": "random"}
    assert played_by(names, {"p1": "heuristic", "p2": "maxdamage"}, False) == names  # not a branch: as recorded
    mirror = {"p1": "heuristic (p1)", "p2": "heuristic (p2)"}  # the simulator's names of a mirror match
    assert played_by(mirror, {"p1": "heuristic", "p2": "heuristic"}, True) == mirror
    assert played_by(mirror, {"p1": "heuristic", "p2": "maxdamage"}, True) == {"p1": "heuristic (p1)",
                                                                                "p2": "heuristic (p2) → maxdamage"}


def test_a_take_over_is_named_by_the_policies_that_played_it(tmp_path: Path) -> None:
    async def make() -> tuple:
        parent = await play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen9randombattle",
                                   seed=11, max_turns=14)
        child = await branch(parent, 3, {"p1": None, "p2": make_policy("maxdamage")})
        return parent, child

    parent, child = asyncio.run(make())
    assert child.players["p2"].name == "random"  # the simulator's name stays the parent's
    meta = BattleMeta.of(child)
    assert meta.names == {"p1": "heuristic", "p2": "random → maxdamage"}
    view = BattleView.of(child)
    said = " ".join(s.text for step in view.narration for s in step) + " ".join(s.text for s in view.tail)
    assert "random → maxdamage's " in said and "random's " not in said
    for recording in (parent, child):
        (tmp_path / f"{recording.id}.json").write_text(recording.to_json(), encoding="utf-8")
    rows = {info.id: info for info in Library(tmp_path).list()}
    assert (rows[child.id].p1, rows[child.id].p2) == ("heuristic", "random → maxdamage")
    assert (rows[parent.id].p1, rows[parent.id].p2) == ("heuristic", "random")
    assert source_text(child) == f"branch of {parent.id} at decision 4"  # step 3 is decision 4


def test_the_summary_line_counts_decisions_as_the_app_does() -> None:
    from wolfeclick.ui.analysis_view import analysis_card

    recording = asyncio.run(play_battle(make_policy("heuristic"), make_policy("random"),
                                        format_id="gen9randombattle", seed=2, max_turns=5))
    analysis = Analysis.model_construct(
        recording=recording.id, policy="heuristic", k=4, seed=0, margin=0.1, winner=recording.result.winner,
        decisions=[], mistakes=[], turning_points=[TurningPoint(index=2, turn=3, before=0.5, after=0.9, swing=0.4)])
    assert "biggest swing at turn 3 (decision 3)" in summary_line(analysis, recording)
    assert "turn 3 (decision 3)" in analysis_card(analysis, recording)
