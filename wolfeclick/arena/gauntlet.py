"""Playing the yardstick: the gauntlet that rates one policy against the reference ladder, and the ladder's rebuild.

Both play ordinary tournaments (``arena.tournament.run_tournament``) into a results folder, so every battle is in
the history (``arena.history``) like any other, and a run repeated with the same seed finds its tournaments already
played and reads them back (same seed, same policies: same battles, same rating).

The gauntlet plays in steps: each step is a tournament of a few seat-swapped pairs between the policy and one rung,
the rung nearest the policy's current estimate (`yardstick.choose_rung`; the first step plays the middle rung).
After each step the policy is rated against every game so far with the rungs held at their shipped ratings
(`yardstick.rate_on_ladder`); it stops once the interval is narrower than the width asked for, or at the battle
cap. Step k's tournament seed derives from the gauntlet's seed and k only, so the whole run is a function of the
seed, the policy and the ladder.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wolfeclick.arena.results import game_results
from wolfeclick.arena.schedule import SEED_MODULUS, TournamentConfig, check_specs, pair_seeds
from wolfeclick.arena.stats import score_for
from wolfeclick.arena.tournament import load_results, run_tournament, tournament_dir
from wolfeclick.arena.yardstick import (
    ANCHOR,
    BASE_RUNGS,
    Estimate,
    FormatTable,
    ReferenceLadder,
    RungGame,
    choose_rung,
    format_table_entry,
    rate_on_ladder,
    start_rating,
)
from wolfeclick.arena.yardstick_plan import (
    DEFAULT_MAX_BATTLES,
    DEFAULT_WIDTH,
    LADDER_EXTRA_PAIRS,
    LADDER_PAIRS,
    LADDER_SEED,
    LEVEL,
    STEP_PAIRS,
)
from wolfeclick.battle.runner import DEFAULT_MAX_TURNS
from wolfeclick.errors import InputError
from wolfeclick.policies.base import Policy
from wolfeclick.sim.protocol import derive_int

__all__ = [
    "STEP_PAIRS",
    "DEFAULT_WIDTH",
    "DEFAULT_MAX_BATTLES",
    "LADDER_SEED",
    "LADDER_PAIRS",
    "LADDER_EXTRA_PAIRS",
    "step_seed",
    "Step",
    "GauntletResult",
    "run_gauntlet",
    "gauntlet_text",
    "build_format",
    "ladder_versions",
    "ladder_seeds",
]


def step_seed(seed: int, step: int) -> int:
    """The tournament seed of a gauntlet's step ``step``."""
    return derive_int(seed, f"gauntlet:{step}") % SEED_MODULUS


@dataclass(frozen=True)
class Step:
    """One step: the rung played, the tournament that played it, and the estimate after it."""

    rung: str
    tournament: str
    battles: int
    estimate: Estimate


@dataclass
class GauntletResult:
    """A finished gauntlet: the policy, the format, the estimate, why it stopped ("width", "cap" or "stopped"),
    each step, and the per-rung record (battles, points)."""

    spec: str
    format: str
    anchor: str
    anchor_rating: float
    width: float
    estimate: Estimate
    stopped_by: str
    steps: list[Step] = field(default_factory=list)
    record: dict[str, tuple[int, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "format": self.format, "anchor": self.anchor, "anchor_rating": self.anchor_rating,
                "width": self.width, **self.estimate.to_dict(), "stopped_by": self.stopped_by,
                "steps": [{"rung": s.rung, "tournament": s.tournament, "battles": s.battles} for s in self.steps],
                "record": {rung: {"battles": n, "score": round(points / n, 4)}
                           for rung, (n, points) in sorted(self.record.items())}}


def gauntlet_text(result: GauntletResult, ladder: FormatTable | None = None) -> str:
    """What the CLI prints: the rating with its interval and the battles it took, then the record per rung."""
    why = {"width": f"interval narrower than {result.width:g}", "cap": "battle cap reached",
           "stopped": "stopped"}[result.stopped_by]
    lines = [f"{result.spec} on the reference ladder ({result.format}, {result.anchor} = {result.anchor_rating:.0f}): "
             f"{result.estimate.text()} (95%), {result.estimate.battles} battles ({why})"]
    shipped = ladder.ratings() if ladder is not None else {}
    for rung, (n, points) in sorted(result.record.items(), key=lambda item: shipped.get(item[0], 0.0)):
        at = f" (rated {shipped[rung]:.0f})" if rung in shipped else ""
        lines.append(f"  vs {rung}{at}: {n} battles, score {points / n:.3f}")
    return "\n".join(lines)


def _games(directory: Path, spec: str, step: int) -> list[RungGame]:
    _, rows = load_results(directory)
    games = []
    for g in game_results(rows):
        rung = g.b if g.a == spec else g.a
        games.append(RungGame(rung, f"{step}:{g.pair_index}", score_for(g, spec)))
    return games


async def run_gauntlet(
    spec: str,
    ladder: ReferenceLadder,
    format_id: str,
    out_dir: Path | str,
    *,
    width: float = DEFAULT_WIDTH,
    max_battles: int = DEFAULT_MAX_BATTLES,
    seed: int = 0,
    concurrency: int = 1,
    max_turns: int = DEFAULT_MAX_TURNS,
    keep_recordings: bool = True,
    recordings_dir: Path | None = None,
    policies: Mapping[str, Policy] | None = None,
    llm_options: Mapping[str, Any] | None = None,
    on_step: Callable[[Step], None] | None = None,
    stop: asyncio.Event | None = None,
    rungs: Collection[str] | None = None,
) -> GauntletResult:
    """Rate ``spec`` on ``ladder``'s ``format_id`` table (see the module docstring); every step's tournament is
    written under ``out_dir`` (played afresh, or read back when the same step was played before). ``rungs``: only
    these of the table's rungs are played (the app's, when it does not serve every rung); their ratings stay the
    table's."""
    if max_battles < 2:
        raise InputError("the battle cap must allow one pair (2 battles)")
    if not width > 0:
        raise InputError("the width must be positive")
    table = ladder.table(format_id)
    ratings = {name: rating for name, rating in table.ratings().items()
               if name != spec and (rungs is None or name in rungs)}
    if not ratings:
        raise InputError(f"{spec!r} is the only rung of the {format_id} ladder: nothing to play")
    options = dict(llm_options or {})
    given = dict(policies or {})
    check_specs([s for s in (spec, *ratings) if s not in given], **options)
    centre = start_rating(ratings)
    result = GauntletResult(spec, format_id, ladder.anchor, ladder.anchor_rating, width,
                            rate_on_ladder([], ratings, centre, LEVEL), "cap")
    games: list[RungGame] = []
    lineup: dict[str, Policy] = dict(given)
    played = 0
    step = 0
    while played + 2 <= max_battles:
        if stop is not None and stop.is_set():
            result.stopped_by = "stopped"
            break
        rung = choose_rung(result.estimate.rating if games else centre, ratings)
        pairs = min(STEP_PAIRS, (max_battles - played) // 2)
        config = TournamentConfig(players=(spec,), vs=(rung,), pairs=pairs, format=format_id,
                                  seed=step_seed(seed, step), max_turns=max_turns)
        for name in (spec, rung):
            if name not in lineup:  # built once for the whole gauntlet, not once per step
                from wolfeclick.battle.policy_specs import make_policy

                lineup[name] = make_policy(name, **options)
        summary = await run_tournament(config, out_dir, concurrency=concurrency, resume=True,
                                       keep_recordings=keep_recordings, recordings_dir=recordings_dir,
                                       policies=lineup, llm_options=options, stop=stop)
        new = _games(tournament_dir(out_dir, config), spec, step)
        games += new
        played += 2 * pairs
        estimate = rate_on_ladder(games, ratings, centre, LEVEL)
        n, points = result.record.get(rung, (0, 0.0))
        result.record[rung] = (n + len(new), points + sum(g.score for g in new))
        result.estimate = estimate
        result.steps.append(Step(rung, config.id, len(new), estimate))
        if on_step is not None:
            on_step(result.steps[-1])
        step += 1
        if not summary.complete:
            result.stopped_by = "stopped"
            break
        if estimate.width < width:
            result.stopped_by = "width"
            break
    return result


# ------------------------------------------------------------------------------------------- rebuilding the ladder
async def ladder_versions() -> tuple[str, str]:
    """(simulator, poke-env): what plays the ladder's battles here, as the table records it."""
    from importlib.metadata import version

    from wolfeclick.sim.process import SimPool

    pool = SimPool(1)
    await pool.start()
    try:
        showdown = pool.showdown_version
    finally:
        await pool.close()
    return f"pokemon-showdown {showdown}", f"poke-env {version('poke-env')}"


async def build_format(
    rungs: Sequence[str],
    format_id: str,
    out_dir: Path | str,
    *,
    pairs: int = LADDER_PAIRS,
    extra_pairs: int = LADDER_EXTRA_PAIRS,
    seed: int = LADDER_SEED,
    concurrency: int = 1,
    max_turns: int = DEFAULT_MAX_TURNS,
    keep_recordings: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_result: Callable[[Any, int, int], None] | None = None,
) -> FormatTable:
    """Play (or finish, or read back) the rungs' tournaments in ``format_id`` and rate them together.

    The baselines among ``rungs`` (`BASE_RUNGS`: fast) play a round robin of ``pairs`` pairs per pairing; every
    other rung (search levels, an operator's own: slow) plays every rung, baselines and the others, ``extra_pairs``
    pairs per pairing. Both tournaments deal from the same seed, so pair k is the same teams in each, and the
    bootstrap resamples pair k of both together.
    """
    base = tuple(r for r in rungs if r in BASE_RUNGS)
    extra = tuple(r for r in rungs if r not in BASE_RUNGS)
    if ANCHOR not in base or len(base) < 2:
        raise InputError(f"the ladder needs {ANCHOR!r} and another baseline among its rungs")
    configs = [TournamentConfig(players=base, pairs=pairs, format=format_id, seed=seed, max_turns=max_turns)]
    if extra:
        configs.append(TournamentConfig(players=extra, vs=tuple(rungs), pairs=extra_pairs, format=format_id,
                                        seed=seed, max_turns=max_turns))
    games = []
    for config in configs:
        summary = await run_tournament(config, out_dir, concurrency=concurrency, resume=True,
                                       keep_recordings=keep_recordings, on_start=on_start, on_result=on_result)
        if not summary.complete:
            raise InputError(f"the {format_id} ladder did not finish; run the same command again to finish it")
        _, rows = load_results(tournament_dir(out_dir, config))
        played = game_results(rows)
        if len(played) < len(rows):
            raise InputError(f"{len(rows) - len(played)} battles of the {format_id} ladder aborted; the table "
                             "needs all; run the same command again to play them")
        games += played
    return format_table_entry(games, format_id, seed, pairs, max_turns, configs[0].id,
                              extra_pairs=extra_pairs if extra else 0,
                              extra_tournament=configs[1].id if extra else None)


def ladder_seeds(table: FormatTable) -> set[int]:
    """The battle seeds a shipped format table was played on (to tell a gauntlet's seeds apart from them)."""
    return set(pair_seeds(table.seed, max(table.pairs, table.extra_pairs)))
