"""Plain-words verdicts per pairing: "B is stronger (95%)", "not separable yet — about N more pairs", "no
detectable difference". Pure functions of the paired statistics; no I/O.

The verdict reads the paired (pentanomial) interval of `stats.paired_summary`, A's score per game with pairs as
the unit: a pairing is called only when that interval leaves out ½ (an Elo difference of 0), so an interval that
covers 0 is never shown as a win. Otherwise a power calculation says how many further pairs would likely
separate it if the edge seen so far is the true one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from wolfeclick.arena.distributions import norm_ppf
from wolfeclick.arena.stats import PairedSummary

__all__ = [
    "POWER",
    "MAX_MORE_PAIRS",
    "Verdict",
    "more_pairs_needed",
    "pairing_verdict",
    "score_to_elo",
    "verdict_rows",
]

POWER = 0.8
"""Chance the further pairs separate the pairing, if the observed edge is the true one."""
MAX_MORE_PAIRS = 1000
"""Beyond this many further pairs an edge is called "no detectable difference": too small for an arena to see."""

VerdictKind = Literal["stronger", "not_separable", "no_difference"]


@dataclass(frozen=True)
class Verdict:
    """One pairing's verdict. `favoured` is the stronger policy (kind "stronger"), the one ahead so far (kind
    "not_separable", when either is), or None; `more_pairs` is the estimate of further pairs (kind
    "not_separable" only)."""

    kind: VerdictKind
    text: str
    more_pairs: int | None
    favoured: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "more_pairs": self.more_pairs, "favoured": self.favoured}


def more_pairs_needed(paired: PairedSummary, level: float = 0.95, power: float = POWER) -> int | None:
    """Further pairs after which a `level` interval would likely (`power`) leave out ½, at the observed edge.

    The usual normal power calculation for a mean: with per-pair standard deviation sd (`PairedSummary.sd`,
    regularised) and observed edge e = |mean − ½|, N = ((z_{(1+level)/2} + z_power) · sd / e)² pairs in all;
    the answer is N minus the pairs played, at least 1. None when no edge is seen at all (e = 0).
    """
    edge = abs(paired.mean - 0.5)
    if edge == 0.0:
        return None
    z = norm_ppf((1.0 + level) / 2.0) + norm_ppf(power)
    total = math.ceil((z * paired.sd / edge) ** 2 - 1e-9)
    return max(1, total - paired.pairs)


def pairing_verdict(a: str, b: str, paired: PairedSummary, level: float = 0.95) -> Verdict:
    """The verdict on A (`a`, whose score `paired` holds) against B."""
    if paired.pairs == 0:
        return Verdict("not_separable", "not separable yet — no complete pair played", None, None)
    ahead = a if paired.mean > 0.5 else b if paired.mean < 0.5 else None
    if paired.ci_low > 0.5 or paired.ci_high < 0.5:
        return Verdict("stronger", f"{ahead} is stronger ({level:.0%})", None, ahead)
    more = more_pairs_needed(paired, level)
    if more is None or more > MAX_MORE_PAIRS:
        return Verdict("no_difference", "no detectable difference", None, None)
    unit = "pair" if more == 1 else "pairs"
    return Verdict("not_separable", f"not separable yet — about {more} more {unit}", more, ahead)


def score_to_elo(score: float) -> float | None:
    """Elo difference of a per-game score under the logistic model; None at 0 or 1 (unbounded)."""
    if score <= 0.0 or score >= 1.0:
        return None
    return 400.0 * math.log10(score / (1.0 - score))


def _signed(elo: float | None, open_text: str) -> str:
    return open_text if elo is None else f"{elo:+.0f}"


def verdict_rows(summary: Any) -> list[dict[str, Any]]:
    """One display row per pairing, from a `TournamentSummary` or its `summary.json` data.

    Keys: ``pairing`` ("a vs b"), ``record`` (a's W-L-T over games), ``pairs``, ``score`` (a's score per game
    with its paired interval), ``elo`` (the same as an Elo difference for a), ``verdict`` (the plain words),
    ``kind``, ``more_pairs`` and ``favoured`` (as in the pairing's ``verdict``).
    """
    data: Mapping[str, Any] = summary.to_dict() if hasattr(summary, "to_dict") else summary
    rows = []
    for p in data.get("pairings", []):
        interval = p["pair_interval"]
        elo = p["elo_interval"]
        verdict = p["verdict"]
        rows.append({
            "pairing": f"{p['a']} vs {p['b']}",
            "record": f"{p['wins_a']}-{p['wins_b']}-{p['ties']}",
            "pairs": p["pairs"],
            "score": f"{p['pair_mean_a']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]",
            "elo": f"{_signed(p['elo_a'], 'n/a')} [{_signed(elo['low'], 'open')}, {_signed(elo['high'], 'open')}]",
            "verdict": verdict["text"],
            "kind": verdict["kind"],
            "more_pairs": verdict["more_pairs"],
            "favoured": verdict["favoured"],
        })
    return rows
