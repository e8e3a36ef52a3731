"""The yardstick: a reference ladder of policies rated on one fixed scale, and a policy's rating against it. Pure.

The ladder's *rungs* (``random``, ``maxdamage``, ``heuristic``, and ``search?level=1..3`` once that kind is
registered) play a round robin of seat-swapped pairs on fixed seeds in each ladder format; `ladder_table` rates them
together (Bradley–Terry) on a scale anchored at ``random`` = 1000, with 95% intervals relative to that anchor. The
table ships with the package (``reference_ladder.json``, read by `load_ladder`), so a rating on it means the same on
every machine that runs the same simulator and baselines.

`rate_on_ladder` places one more policy on that scale from its games against rungs whose ratings are held fixed
(they define the scale): one strength fitted by maximum likelihood, with an interval that is the wider of the
likelihood-ratio interval and a bootstrap over seat-swapped pairs. `choose_rung` says which rung to play next (the
one nearest the current estimate, where a game tells most). The gauntlet (``arena.gauntlet``) plays those games.

Why ``random`` = 1000 and not ``heuristic`` = 1500: the Arena's leaderboard already puts random at 1000, so a
rating read here and one read there are on the same scale whenever random is in the history; and random is the one
rung whose play depends on nothing but the legal actions, where heuristic is poke-env's code and may change with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from wolfeclick.arena.intervals import open_high, open_low, rating_text, shown_bounds
from wolfeclick.arena.ratings import (
    BOOTSTRAP_PAIRS,
    ELO_PER_NAT,
    PRIOR_GAMES,
    PROFILE_LIKELIHOOD,
    bootstrap_ratings,
    canonical_order,
    model_fit,
    profile_intervals,
    separation,
)
from wolfeclick.arena.stats import GameResult, score_for
from wolfeclick.arena.yardstick_plan import ANCHOR, ANCHOR_RATING, LADDER_FORMATS, LEVEL
from wolfeclick.errors import InputError

__all__ = [
    "ANCHOR",
    "ANCHOR_RATING",
    "LEVEL",
    "LADDER_FORMATS",
    "BASE_RUNGS",
    "SEARCH_KIND",
    "SEARCH_LEVELS",
    "LADDER_FILE",
    "ladder_rungs",
    "RungRating",
    "ladder_table",
    "RungGame",
    "Estimate",
    "rate_on_ladder",
    "start_rating",
    "choose_rung",
    "RungEntry",
    "Fit",
    "FormatTable",
    "ReferenceLadder",
    "format_table_entry",
    "parse_ladder",
    "load_ladder",
    "ladder_text",
]

BASE_RUNGS = ("random", "maxdamage", "heuristic")
SEARCH_KIND = "search"
SEARCH_LEVELS = (1, 2, 3)
LADDER_FILE = "reference_ladder.json"
"""The shipped table, package data of ``wolfeclick.arena``."""


def ladder_rungs(kinds: Iterable[str], extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The rungs for the policy kinds registered: the three baselines, ``search?level=1..3`` when a ``search``
    kind is among ``kinds``, then any ``extra`` specs (an operator's own), each once."""
    names = set(kinds)
    rungs = [*BASE_RUNGS, *(f"{SEARCH_KIND}?level={level}" for level in SEARCH_LEVELS if SEARCH_KIND in names)]
    return tuple(dict.fromkeys([*rungs, *extra]))


# ---------------------------------------------------------------------------------------------- the ladder's table
@dataclass(frozen=True)
class RungRating:
    """One rung of the table: its rating relative to the anchor, the interval, the side the data leave open
    (`intervals`), its battles and its score per battle over the round robin."""

    spec: str
    rating: float
    low: float
    high: float
    open: str | None
    battles: int
    score: float


def ladder_table(games: Iterable[GameResult], anchor: str = ANCHOR, anchor_rating: float = ANCHOR_RATING,
                 level: float = LEVEL, rounds: int = 1000, seed: int = 0) -> list[RungRating]:
    """Bradley–Terry ratings of the rungs, the ``anchor`` at ``anchor_rating``, strongest first.

    A rung's interval is for its rating *relative to the anchor* (the anchor's own is its rating: it is the scale's
    definition): each end the wider of the profile likelihood of θ_rung − θ_anchor (`profile_intervals` with the
    anchor as the whole field) and the percentile bootstrap over pairs, refitted with the anchor fixed
    (`bootstrap_ratings`). When the win graph is separated (some rung never took a point off another's group) the
    bootstrap means nothing and the profile alone is given, its open side marked.
    """
    ordered = canonical_order(games)
    players = sorted({p for g in ordered for p in (g.a, g.b)})
    if anchor not in players:
        raise InputError(f"the ladder needs its anchor {anchor!r} among the rungs; got {', '.join(players) or 'none'}")
    with np.errstate(invalid="ignore", divide="ignore"):  # the anchor's own profile is degenerate; replaced below
        profile = profile_intervals(ordered, level, anchor_rating, field=(anchor,))
    split = separation(ordered, (anchor,))
    boot = None if split.separated else bootstrap_ratings(ordered, rounds, seed, anchor, anchor_rating,
                                                          anchor_rating, level)
    battles = {p: 0 for p in players}
    scores = {p: 0.0 for p in players}
    for g in ordered:
        for p in (g.a, g.b):
            battles[p] += 1
            scores[p] += score_for(g, p)
    out = []
    for p in players:
        rating, low, high = profile[p]
        side = split.open.get(p) if split.separated else None
        if p == anchor:
            rating = low = high = anchor_rating
            side = None
        elif boot is not None:
            low, high = min(low, boot[p][1]), max(high, boot[p][2])
        out.append(RungRating(p, rating, low, high, side, battles[p], scores[p] / battles[p]))
    return sorted(out, key=lambda r: (-r.rating, r.spec))


# -------------------------------------------------------------------------------------- rating against the ladder
@dataclass(frozen=True)
class RungGame:
    """One game of a rated policy against a rung: ``pair`` names the seat-swapped pair it belongs to (the
    bootstrap's resampling unit), ``score`` is the rated policy's (1 win, ½ tie, 0 loss)."""

    rung: str
    pair: str
    score: float

    def __post_init__(self) -> None:
        if self.score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a game's score is 0, 0.5 or 1, got {self.score!r}")


@dataclass(frozen=True)
class Estimate:
    """A rating on the ladder's scale with its interval; ``open`` is the side the games leave unbounded (the
    number there is the prior's). ``interval_method`` names where each end came from."""

    rating: float
    low: float
    high: float
    open: str | None
    battles: int
    interval_method: str

    @property
    def width(self) -> float:
        """high − low, infinite when a side is open (an open interval is never narrow enough)."""
        return math.inf if self.open is not None else self.high - self.low

    def text(self) -> str:
        """``1547 [1490, 1602]`` (an open end reads "open")."""
        return rating_text(self.rating, self.low, self.high, self.open)

    def to_dict(self) -> dict[str, Any]:
        low, high = shown_bounds(self.low, self.high, self.open, 1)
        return {"rating": round(self.rating, 1), "low": low, "high": high, "open": self.open,
                "battles": self.battles, "interval_method": self.interval_method}


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = -np.logaddexp(0.0, -z)
    return out


class _OneStrength:
    """The log-likelihood of one strength x (Elo) from scores ``s`` out of ``n`` games against rungs rated ``r``,
    plus `PRIOR_GAMES` virtual drawn games against ``centre``. Vectorised over rows of ``s`` and ``n`` (bootstrap
    rounds)."""

    def __init__(self, r: np.ndarray, s: np.ndarray, n: np.ndarray, centre: float) -> None:
        self.r, self.s, self.n, self.centre = r, np.atleast_2d(s), np.atleast_2d(n), centre
        spread = float(np.max(np.abs(r - centre))) if len(r) else 0.0
        self.lo, self.hi = centre - spread - 4000.0, centre + spread + 4000.0

    def value(self, x: np.ndarray) -> np.ndarray:
        z = (x[:, None] - self.r[None, :]) / ELO_PER_NAT
        games = np.sum(self.s * _log_sigmoid(z) + (self.n - self.s) * _log_sigmoid(-z), axis=1)
        zc = (x - self.centre) / ELO_PER_NAT
        out: np.ndarray = games + PRIOR_GAMES * 0.5 * (_log_sigmoid(zc) + _log_sigmoid(-zc))
        return out

    def slope(self, x: np.ndarray) -> np.ndarray:
        p = 1.0 / (1.0 + np.exp(-(x[:, None] - self.r[None, :]) / ELO_PER_NAT))
        pc = 1.0 / (1.0 + np.exp(-(x - self.centre) / ELO_PER_NAT))
        out: np.ndarray = np.sum(self.s - self.n * p, axis=1) + PRIOR_GAMES * (0.5 - pc)
        return out

    def maximiser(self) -> np.ndarray:
        """Where the (strictly concave) log-likelihood peaks, by bisection on its decreasing slope."""
        rows = len(self.s)
        lo, hi = np.full(rows, self.lo), np.full(rows, self.hi)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            up = self.slope(mid) > 0
            lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
        out: np.ndarray = 0.5 * (lo + hi)
        return out

    def crossing(self, peak: float, floor: float, direction: float) -> float:
        """Where the log-likelihood, walking from ``peak`` in ``direction``, falls to ``floor`` (row 0 only)."""
        inner, outer = peak, (self.hi if direction > 0 else self.lo)
        for _ in range(80):
            mid = 0.5 * (inner + outer)
            if float(self.value(np.array([mid]))[0]) > floor:
                inner = mid
            else:
                outer = mid
        return 0.5 * (inner + outer)


def _chi2_1(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf((1.0 + level) / 2.0) ** 2


def rate_on_ladder(games: Sequence[RungGame], ratings: Mapping[str, float], centre: float, level: float = LEVEL,
                   rounds: int = 1000, seed: int = 0) -> Estimate:
    """The rating on the ladder's scale that best explains ``games`` against rungs held at ``ratings``.

    P(win against a rung rated r) = 1 / (1 + 10^((r − x) / 400)); ties count half. One virtual drawn game against
    ``centre`` (the ladder's middle, `start_rating`) keeps the rating finite when a policy never lost or never won.
    The interval's ends are each the wider of the likelihood-ratio interval (2 Δℓ ≤ χ²₁(level)) and the
    percentile bootstrap over pairs (``rounds`` resamples drawn with numpy ``default_rng(seed)``, pairs taken in
    sorted order, so the same games give the same interval whatever their order). A policy that never gave up a
    point has its upper side open (and never lost one, its lower side): the data bound it on one side only.
    The rungs' own uncertainty is not added: their ratings are the scale.
    """
    unknown = sorted({g.rung for g in games} - set(ratings))
    if unknown:
        raise ValueError(f"games against rungs the ladder does not rate: {', '.join(unknown)}")
    rungs = sorted({g.rung for g in games})
    r = np.array([ratings[k] for k in rungs], dtype=float)
    index = {k: i for i, k in enumerate(rungs)}
    pairs = sorted({g.pair for g in games})
    where = {p: i for i, p in enumerate(pairs)}
    s_pair = np.zeros((len(pairs), len(rungs)))
    n_pair = np.zeros((len(pairs), len(rungs)))
    for g in games:
        s_pair[where[g.pair], index[g.rung]] += g.score
        n_pair[where[g.pair], index[g.rung]] += 1.0
    s, n = s_pair.sum(axis=0), n_pair.sum(axis=0)
    fit = _OneStrength(r, s, n, centre)
    x = float(fit.maximiser()[0])
    floor = float(fit.value(np.array([x]))[0]) - _chi2_1(level) / 2.0
    low, high = fit.crossing(x, floor, -1.0), fit.crossing(x, floor, 1.0)
    total, points = float(n.sum()), float(s.sum())
    side = {(True, True): "both", (True, False): "below", (False, True): "above"}.get(
        (points <= 0.0, points >= total))
    method = PROFILE_LIKELIHOOD
    if side is None and pairs:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, len(pairs), size=(rounds, len(pairs)))
        weights = np.stack([np.bincount(row, minlength=len(pairs)) for row in draws]).astype(float)
        refits = _OneStrength(r, weights @ s_pair, weights @ n_pair, centre).maximiser()
        tail = (1.0 - level) / 2.0 * 100.0
        boot_low, boot_high = float(np.percentile(refits, tail)), float(np.percentile(refits, 100.0 - tail))
        ends = (BOOTSTRAP_PAIRS if boot_low < low else PROFILE_LIKELIHOOD,
                BOOTSTRAP_PAIRS if boot_high > high else PROFILE_LIKELIHOOD)
        method = ends[0] if ends[0] == ends[1] else f"{BOOTSTRAP_PAIRS}+{PROFILE_LIKELIHOOD}"
        low, high = min(low, boot_low), max(high, boot_high)
    return Estimate(x, low, high, side, int(total), method)


def start_rating(ratings: Mapping[str, float]) -> float:
    """Where a gauntlet starts: the middle rung's rating (the lower of the two middle ones for an even count)."""
    if not ratings:
        raise ValueError("a ladder with no rungs")
    ordered = sorted(ratings.values())
    return ordered[(len(ordered) - 1) // 2]


def choose_rung(estimate: float, ratings: Mapping[str, float], exclude: Iterable[str] = ()) -> str:
    """The rung whose expected score against a policy at ``estimate`` is nearest ½ (the nearest rating: where one
    game tells the most about the policy's strength); a tie goes to the lower rung, then to the name."""
    left = set(exclude)
    candidates = sorted((abs(rating - estimate), rating, spec) for spec, rating in ratings.items() if spec not in left)
    if not candidates:
        raise InputError("no rung left to play: the policy is every rung of the ladder")
    return candidates[0][2]


# ---------------------------------------------------------------------------------------------- the shipped table
_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)
OpenSide = Literal["above", "below", "both"]


class RungEntry(BaseModel):
    """One rung as the shipped table holds it (an open end is null, as every export writes it)."""

    model_config = _STRICT
    spec: str
    rating: float
    low: float | None
    high: float | None
    open: OpenSide | None = None
    battles: int
    score: float

    @model_validator(mode="after")
    def _ordered(self) -> "RungEntry":
        if (self.low is None) != open_low(self.open) or (self.high is None) != open_high(self.open):
            raise ValueError(f"rung {self.spec!r}: a bound is null exactly when its side is open")
        if (self.low is not None and self.low > self.rating) or (self.high is not None and self.high < self.rating):
            raise ValueError(f"rung {self.spec!r}: its rating lies outside its interval")
        if self.battles < 1 or not 0.0 <= self.score <= 1.0:
            raise ValueError(f"rung {self.spec!r}: battles must be positive and the score in [0, 1]")
        return self


class Fit(BaseModel):
    """Pearson's X² of the Bradley–Terry fit (`ratings.model_fit`)."""

    model_config = _STRICT
    statistic: float
    df: int
    p_value: float | None


class FormatTable(BaseModel):
    """One format's ladder: how it was played (tournament seed, pairs per pairing among the baselines, turn cap,
    that round robin's tournament id; the slower rungs' pairs per pairing against every rung and their tournament,
    when there are any) and its rungs, strongest first."""

    model_config = _STRICT
    format: str
    seed: int
    pairs: int
    max_turns: int
    battles: int
    tournament: str
    extra_pairs: int = 0
    extra_tournament: str | None = None
    rungs: list[RungEntry]
    fit: Fit

    def ratings(self) -> dict[str, float]:
        return {r.spec: r.rating for r in self.rungs}


class ReferenceLadder(BaseModel):
    """The shipped table: the anchor, the level of its intervals, one `FormatTable` per format, and what played
    it (simulator, poke-env)."""

    model_config = _STRICT
    version: Literal[1] = 1
    anchor: str
    anchor_rating: float
    level: float
    formats: dict[str, FormatTable]
    simulator: str
    poke_env: str
    command: str

    @model_validator(mode="after")
    def _anchored(self) -> "ReferenceLadder":
        for name, table in self.formats.items():
            if name != table.format:
                raise ValueError(f"format {name!r} holds the table of {table.format!r}")
            specs = [r.spec for r in table.rungs]
            if len(set(specs)) != len(specs) or len(specs) < 2:
                raise ValueError(f"{name}: the rungs must be two or more, each once")
            if table.ratings().get(self.anchor) != self.anchor_rating:
                raise ValueError(f"{name}: the anchor {self.anchor!r} must be rated {self.anchor_rating:g}")
            if [r.rating for r in table.rungs] != sorted((r.rating for r in table.rungs), reverse=True):
                raise ValueError(f"{name}: rungs are listed strongest first")
        return self

    def table(self, format_id: str) -> FormatTable:
        """The table of ``format_id`` (one line naming the formats it has otherwise)."""
        if format_id not in self.formats:
            raise InputError(f"the reference ladder has no {format_id[:60]!r}; it rates "
                             f"{', '.join(self.formats) or 'no format'}")
        return self.formats[format_id]

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"


def format_table_entry(games: Sequence[GameResult], format_id: str, seed: int, pairs: int, max_turns: int,
                       tournament: str, anchor: str = ANCHOR, anchor_rating: float = ANCHOR_RATING,
                       level: float = LEVEL, extra_pairs: int = 0, extra_tournament: str | None = None) -> FormatTable:
    """One format's `FormatTable` from its round robin's games (ratings rounded to a tenth: the same games give
    the same bytes)."""
    rows = ladder_table(games, anchor, anchor_rating, level)
    fit = model_fit(games)
    rungs = []
    for row in rows:
        low, high = shown_bounds(row.low, row.high, row.open, 1)
        rungs.append(RungEntry(spec=row.spec, rating=round(row.rating, 1), low=low, high=high, open=row.open,
                               battles=row.battles, score=round(row.score, 4)))
    return FormatTable(format=format_id, seed=seed, pairs=pairs, max_turns=max_turns, battles=len(games),
                       tournament=tournament, extra_pairs=extra_pairs, extra_tournament=extra_tournament, rungs=rungs,
                       fit=Fit(statistic=round(fit.statistic, 3), df=fit.df,
                               p_value=None if fit.p_value is None else round(fit.p_value, 4)))


def parse_ladder(text: str, where: str = LADDER_FILE) -> ReferenceLadder:
    """A reference ladder from its JSON text; a bad one is one line (`InputError`)."""
    try:
        return ReferenceLadder.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise InputError(f"{where} is not valid JSON: {exc.msg}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(part) for part in first["loc"]) or "top level"
        raise InputError(f"{where} is not a reference ladder: {at}: {first['msg']}") from None


def load_ladder(path: Path | str | None = None) -> ReferenceLadder:
    """The shipped table (package data), or the one at ``path``."""
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
        return parse_ladder(text, str(path))
    return parse_ladder(resources.files("wolfeclick.arena").joinpath(LADDER_FILE).read_text(encoding="utf-8"))


def ladder_text(ladder: ReferenceLadder) -> str:
    """The table as the CLI prints it: per format, each rung's rating and interval, battles and score."""
    lines = [f"Reference ladder (Bradley–Terry, {ladder.anchor} = {ladder.anchor_rating:.0f}, "
             f"{ladder.level:.0%} intervals relative to {ladder.anchor})"]
    for table in ladder.formats.values():
        extra = f" ({table.extra_pairs} for the slower rungs)" if table.extra_pairs else ""
        lines.append(f"\n{table.format}: {table.battles} battles, {table.pairs} pairs per pairing{extra}, "
                     f"seed {table.seed}")
        width = max(len(r.spec) for r in table.rungs)
        for rung in table.rungs:
            text = rating_text(rung.rating, rung.low if rung.low is not None else rung.rating,
                               rung.high if rung.high is not None else rung.rating, rung.open)
            lines.append(f"  {rung.spec:<{width}}  {text:>20}  {rung.battles:>5} battles  score {rung.score:.3f}")
    return "\n".join(lines)
