"""A forced Struggle re-simulates: when every move is imprisoned the simulator writes ``move struggle`` in its input
log, a choice it refuses when the log is replayed; ``resim`` reads it back as the forced Struggle it was."""

from __future__ import annotations

import asyncio
from pathlib import Path

from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import replayable, resimulate
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.teams import TeamSources, prepare_deal

MIRROR = Path(__file__).parent / "data" / "v1_teams" / "imprison-bronzong.txt"
"""One Bronzong a side, Imprison among its four moves: once one imprisons, the other's every move is blocked."""


def test_a_battle_with_every_move_imprisoned_re_simulates() -> None:
    async def go():  # type: ignore[no-untyped-def]
        deal = await prepare_deal(TeamSources(team1=MIRROR, team2=MIRROR), "gen4ou")
        assert deal is not None
        return await play_battle(make_policy("random"), make_policy("random"), format_id="gen4ou", seed=2,
                                 teams=deal.infos(2), max_turns=40)

    recording = asyncio.run(go())
    forced = [line for line in recording.inputlog if line.endswith(" move struggle")]
    assert forced, "the battle must hold a forced Struggle for this test to mean anything"
    assert "|move|p2a: Bronzong|Struggle|p1a: Bronzong" in recording.log
    result = asyncio.run(resimulate(recording))
    assert result.ok, result.message


def test_only_a_whole_struggle_choice_is_read_back_as_move_one() -> None:
    lines = [">p1 move struggle", ">p2 move 3", ">p2 move struggle", ">p1 move strugglebug", ">p1 switch 2"]
    assert replayable(lines) == [">p1 move 1", ">p2 move 3", ">p2 move 1", ">p1 move strugglebug", ">p1 switch 2"]
