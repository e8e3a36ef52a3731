"""One way to show a rating interval whose end the data may leave open: every table, export and chart uses it.

A rating interval comes with ``open`` ("above", "below", "both" or None, see `ratings.Separation`): the side the
data set no bound on. The finite number the fit has there is the prior's, not the data's, so no view may print
it as a bound. Text reads "open" (``1547 [1350, open]``), JSON ``null``, CSV an empty cell, and a chart draws
an arrow instead of a bar end (`charts.ratings_chart`).
"""

from __future__ import annotations

__all__ = ["OPEN", "open_low", "open_high", "shown_bounds", "bounds_text", "rating_text"]

OPEN = "open"
"""How an open end reads in text."""


def open_low(side: str | None) -> bool:
    """Whether the data leave the lower end open."""
    return side in ("below", "both")


def open_high(side: str | None) -> bool:
    """Whether the data leave the upper end open."""
    return side in ("above", "both")


def shown_bounds(low: float, high: float, side: str | None, digits: int | None = None) -> tuple[float | None,
                                                                                             float | None]:
    """(low, high) as exports give them: an open end is None; ``digits`` rounds the others."""

    def shown(x: float) -> float:
        return round(float(x), digits) if digits is not None else float(x)

    return (None if open_low(side) else shown(low), None if open_high(side) else shown(high))


def bounds_text(low: float, high: float, side: str | None) -> str:
    """``[1350, open]``: whole rating points, an open end written "open"."""
    lo, hi = shown_bounds(low, high, side)
    return f"[{OPEN if lo is None else f'{lo:.0f}'}, {OPEN if hi is None else f'{hi:.0f}'}]"


def rating_text(rating: float, low: float, high: float, side: str | None) -> str:
    """``1547 [1350, open]``: the rating and its interval, as the CLI, the tabs and the page all print it."""
    return f"{rating:.0f} {bounds_text(low, high, side)}"
