"""What a long-running server builds again and again must not stay behind: serve-env builds an opponent for every
episode, the app a baseline for every battle (issue 60: serve-env's RSS grew ~0.37 MB an episode)."""

from __future__ import annotations

import logging

from wolfeclick.battle.specs import make_policy


def test_building_baseline_players_leaves_no_logger_behind() -> None:
    for spec in ("random", "maxdamage", "heuristic"):
        make_policy(spec)  # the first build of each kind may set up what every later one shares
    before = len(logging.Logger.manager.loggerDict)
    for _ in range(20):
        for spec in ("random", "maxdamage", "heuristic"):
            make_policy(spec)
    assert len(logging.Logger.manager.loggerDict) == before  # poke-env named one logger per player before
