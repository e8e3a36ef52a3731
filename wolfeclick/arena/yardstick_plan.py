"""What the yardstick plays by default: constants only, so the CLI's parser reads them without loading the
statistics (``arena.yardstick`` and ``arena.gauntlet`` use and re-export them)."""

from __future__ import annotations

__all__ = ["ANCHOR", "ANCHOR_RATING", "LEVEL", "LADDER_FORMATS", "LADDER_SEED", "LADDER_PAIRS", "LADDER_EXTRA_PAIRS", "STEP_PAIRS",
           "DEFAULT_WIDTH", "DEFAULT_MAX_BATTLES"]

ANCHOR = "random"
ANCHOR_RATING = 1000.0
LEVEL = 0.95
LADDER_FORMATS = ("gen9randombattle", "gen4randombattle")
"""The formats the shipped table covers: today's random battles, and the published checkpoints' format."""
LADDER_SEED = 61
"""The reference ladder's tournament seed (issue 61). A gauntlet's step seeds derive from its own seed with another
label, so they are not the ladder's seeds: a gauntlet of a rung rates it on battles the ladder did not play."""
LADDER_PAIRS = 300
"""Pairs per pairing among the baselines (600 battles per pairing)."""
LADDER_EXTRA_PAIRS = 10
"""Pairs per pairing of every slower rung (search levels, an operator's own) against every rung: a search battle
costs a hundred baseline battles and more."""
STEP_PAIRS = 4
"""Seat-swapped pairs per gauntlet step (8 battles) before the estimate is looked at again and the next rung
chosen."""
DEFAULT_WIDTH = 150.0
"""A gauntlet stops once the 95% interval is narrower than this many rating points (about 80 battles near 50%)."""
DEFAULT_MAX_BATTLES = 200
"""A gauntlet's battle cap."""
