"""Racing: spend rollouts where they decide (issue 48).

Uniform sampling gives every option of a decision K rollouts, even one that is clearly lost after eight. Racing
plays rounds of a few rollouts per option instead; after each round an option whose 95% interval lies wholly below
the leader's stops, and the others go on, up to K each. The options share their luck (rollout *n* of every option
gets the same reseed), so an option that survives to K has exactly the estimate uniform sampling gives it.

Everything here is pure over plain counts, so the stopping rule can be tested apart from any simulator.
"""

from __future__ import annotations

from dataclasses import dataclass

from wolfeclick.arena.stats import Z95, wilson_interval

DEFAULT_BATCH = 8
"""Rollouts per live option per round."""


@dataclass(frozen=True)
class Tally:
    """Rollouts so far from one state: ``score`` is wins plus half the draws, out of ``n``."""

    score: float
    n: int

    @property
    def mean(self) -> float:
        return self.score / self.n if self.n else 0.5


def interval(tally: Tally, z: float = Z95) -> tuple[float, float]:
    """The Wilson interval the analysis reports for ``tally``."""
    return wilson_interval(tally.score, tally.n, z)


def leader(tallies: list[Tally], live: list[bool]) -> int | None:
    """Index of the live option with the highest mean (the first such on ties), or None when none is live."""
    best = None
    for i, (tally, alive) in enumerate(zip(tallies, live)):
        if alive and (best is None or tally.mean > tallies[best].mean):
            best = i
    return best


def still_racing(tallies: list[Tally], live: list[bool], z: float = Z95) -> list[bool]:
    """Which options race on: the leader and every live option whose interval reaches the leader's lower bound.

    An option stops only if its upper bound lies strictly below the leader's lower bound; one stopped stays stopped.
    """
    top = leader(tallies, live)
    if top is None:
        return list(live)
    floor = interval(tallies[top], z)[0]
    return [alive and (i == top or interval(tally, z)[1] >= floor)
            for i, (tally, alive) in enumerate(zip(tallies, live))]


def band(tallies: list[Tally], live: list[bool], z: float = Z95) -> float:
    """The width of the band that holds every live option's interval (1.0 while one has no rollouts yet)."""
    intervals = [interval(t, z) for t, alive in zip(tallies, live) if alive]
    if not intervals or any(t.n == 0 for t, alive in zip(tallies, live) if alive):
        return 1.0
    return max(high for _, high in intervals) - min(low for low, _ in intervals)


def next_round(tallies: list[Tally], live: list[bool], budget: int, batch: int = DEFAULT_BATCH,
               spread: float = 0.0) -> list[int]:
    """How many more rollouts each option gets in the next round (0 for all: the race is over).

    Live options get ``batch`` more, never beyond ``budget`` each. The race is over once a single option is left
    racing (with nothing to compare it to, more rollouts would not change which option is best), or, with a
    ``spread``, once every live option's interval lies within a band at most ``spread`` wide: options that close
    cannot differ by a mistake's margin, and no option is dropped for it.
    """
    racing = sum(live)
    if racing == 0 or (racing == 1 and len(tallies) > 1) or (spread > 0 and band(tallies, live) <= spread):
        return [0] * len(tallies)
    return [min(batch, budget - t.n) if alive and t.n < budget else 0 for t, alive in zip(tallies, live)]


def uniform_width(k: int, z: float = Z95) -> float:
    """The widest interval uniform sampling with ``k`` rollouts reports (at a score rate of one half): the precision
    the win-probability pass stops at by default."""
    low, high = wilson_interval(k / 2, k, z)
    return high - low


def settled(tally: Tally, width: float, budget: int, z: float = Z95) -> bool:
    """Whether a win-probability estimate needs no more rollouts: its interval is at most ``width`` wide, or it has
    ``budget``."""
    if tally.n >= budget:
        return True
    if tally.n == 0:
        return False
    low, high = interval(tally, z)
    return high - low <= width
