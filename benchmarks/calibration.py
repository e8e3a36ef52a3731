"""Is the rollout estimate calibrated? (issue 48, item 4) And the value model beside it (item 3)

    .venv/bin/python -m benchmarks.calibration [--train 40] [--held-out 5] [--model-held-out 1000]

Plays seeded gen9randombattle heuristic-vs-heuristic battles: ``--train`` of them only to fit the baselines, and
``--held-out`` others whose every decision gets K = 64 heuristic rollouts (the first 16 of them are the K = 16
estimate: rollout *n* is the same battle either way). Each decision's estimate of p1's score is judged against how
the battle really ended (a win 1, a loss 0, a tie ½): a reliability table of 10 bins and the Brier score, beside
two baselines fitted on the training battles — the base rate (p1's score there) and a logistic fit on the
remaining-HP difference (p1's mean team HP less p2's, from each decision's snapshot). The shipped value model
(``wolfeclick.analysis.value_model``, trained by scripts/train_value_model.py on battles of other seeds) is judged on
the same decisions, and again, with the baselines, on ``--model-held-out`` more battles (no rollouts: cheap).

    .venv/bin/python -m benchmarks.calibration --policies heuristic maxdamage random sim:heuristic ...

judges each rollout policy's estimate instead (issue 48, item 2; its result and section: ``calibration_policies``),
at the same held-out decisions: K rollouts of that policy from the true state, against how the battle ends when that
policy plays both sides on from there (one more rollout, number K, which shares no luck with the K) — the outcome
of a battle between the rollout policies themselves, which is what that policy's estimate estimates.

    .venv/bin/python -m benchmarks.calibration --model-only [--train 40] [--model-held-out 1000]

the value model's part alone, no rollouts (issue 62; its result and section: ``calibration_model``). A run writes
the reliability diagrams (``calibration.svg``, ``calibration-public.svg``) into ``--plots`` (docs/ by default).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmarks import harness
from wolfeclick.analysis import value_model as vm
from wolfeclick.analysis.core import _Player, _Task
from wolfeclick.analysis.rollout import Outcome
from wolfeclick.analysis.sim_rollout import rollout_policy
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording, TurnRecord
from wolfeclick.sim.process import SimPool

NAME = "calibration"
HEADING = "## Analysis: is the rollout estimate calibrated? (issue 48, item 4)"
"""Kept as it was (the section it rewrites); the section now holds the value model's rows too."""
FORMAT = "gen9randombattle"
PLOTS = harness.ROOT / "docs"
"""Where a run writes its reliability diagrams (the section links them by name)."""
COLORS = {"rollouts, K = 16": "#94a3b8", "HP logistic": "#d97706", "value model": "#16a34a"}
"""Each prediction's colour in the diagrams (any other name: K = 64's blue)."""
NOTHING_ON_LOAD = "Nothing here depends on the machine's load."

Bins = list[tuple[int, float | None, float | None]]
"""Ten equal-width bins of a prediction: (count, mean predicted, mean outcome); None where a bin is empty."""


def score(winner: str | None) -> float:
    return 1.0 if winner == "p1" else 0.0 if winner == "p2" else 0.5


def hp_gap(turn: TurnRecord) -> float:
    """p1's mean team HP less p2's, in [-1, 1]."""
    return (turn.snapshot["p1"].team_hp - turn.snapshot["p2"].team_hp) / 100


def fit_logistic(xs: list[float], ys: list[float], steps: int = 50) -> tuple[float, float]:
    """Maximum-likelihood a, b of p = 1 / (1 + exp(-(a + b x))) by Newton's method (ys may be ½ for ties)."""
    a = b = 0.0
    for _ in range(steps):
        ga = gb = haa = hab = hbb = 0.0
        for x, y in zip(xs, ys):
            p = 1 / (1 + math.exp(-(a + b * x)))
            w = p * (1 - p)
            ga += y - p
            gb += (y - p) * x
            haa += w
            hab += w * x
            hbb += w * x * x
        det = haa * hbb - hab * hab
        if det <= 1e-12:
            break
        a += (hbb * ga - hab * gb) / det
        b += (haa * gb - hab * ga) / det
    return a, b


def brier(ps: list[float], ys: list[float]) -> float:
    return sum((p - y) ** 2 for p, y in zip(ps, ys)) / len(ps)


def reliability(ps: list[float], ys: list[float]) -> Bins:
    """Ten equal-width bins of the prediction: (count, mean predicted, mean outcome)."""
    bins: list[list[tuple[float, float]]] = [[] for _ in range(10)]
    for p, y in zip(ps, ys):
        bins[min(9, int(p * 10))].append((p, y))
    return [(len(b), sum(p for p, _ in b) / len(b) if b else None, sum(y for _, y in b) / len(b) if b else None)
            for b in bins]


def reliability_svg(series: list[tuple[str, Bins]], title: str) -> str:
    """Pure: a reliability diagram (observed against predicted, one line per prediction over its non-empty bins, a
    dot's area by its count, the diagonal dashed) as a standalone SVG for the docs."""
    size, pad = 360, 44
    span = size - 2 * pad

    def at(x: float, y: float) -> str:
        return f"{pad + x * span:.1f},{size - pad - y * span:.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 220}" height="{size}" font-family="sans-serif" '
             f'font-size="11"><rect width="100%" height="100%" fill="#fff"/>',
             f'<text x="{pad}" y="16" font-size="12">{title}</text>',
             f'<polyline points="{at(0, 0)} {at(1, 1)}" fill="none" stroke="#9ca3af" stroke-dasharray="4 3"/>',
             f'<rect x="{pad}" y="{pad}" width="{span}" height="{span}" fill="none" stroke="#d1d5db"/>']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<text x="{pad + tick * span:.1f}" y="{size - pad + 14}" text-anchor="middle">{tick:.0%}</text>')
        parts.append(f'<text x="{pad - 6}" y="{size - pad - tick * span + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    parts.append(f'<text x="{pad + span / 2}" y="{size - 8}" text-anchor="middle">predicted (bin mean)</text>')
    parts.append(f'<text x="12" y="{pad + span / 2}" transform="rotate(-90 12 {pad + span / 2})" '
                 'text-anchor="middle">observed</text>')
    for i, (name, bins) in enumerate(series):
        color = COLORS.get(name, "#2563eb")
        points = [(c, m, o) for c, m, o in bins if c and m is not None and o is not None]
        total = sum(c for c, _, _ in points) or 1
        parts.append(f'<polyline points="{" ".join(at(m, o) for _, m, o in points)}" fill="none" stroke="{color}" '
                     'stroke-width="1.5"/>')
        parts += [f'<circle cx="{at(m, o).split(",")[0]}" cy="{at(m, o).split(",")[1]}" '
                  f'r="{2 + 10 * math.sqrt(c / total):.1f}" fill="{color}" fill-opacity="0.5"/>' for c, m, o in points]
        parts.append(f'<rect x="{size + 4}" y="{pad + 18 * i - 8}" width="10" height="10" fill="{color}"/>'
                     f'<text x="{size + 18}" y="{pad + 18 * i + 1}">{name}</text>')
    return "".join(parts) + "</svg>\n"


async def battles(first: int, count: int, pool: SimPool) -> list[Recording]:
    gate = asyncio.Semaphore(16)

    async def one(seed: int) -> Recording:
        async with gate:
            return await play_battle(make_policy("heuristic"), make_policy("heuristic"), format_id=FORMAT, seed=seed,
                                     process=pool.pick())

    return list(await asyncio.gather(*[one(first + n) for n in range(count)]))


async def rollouts(recording: Recording, policy: Any, pool: SimPool, count: int) -> list[list[Outcome]]:
    """Rollouts 0 to ``count`` - 1 (seed 1, lean, forked) from every decision of ``recording``, in decision order."""
    player = _Player(recording, policy, recording.turns, 1, pool, 16, lambda n: None, None, True, True)
    try:
        return list(await asyncio.gather(*[player.many(_Task(t.index), range(count)) for t in recording.turns]))
    finally:
        await player.close()


def model_probabilities(model: vm.ValueModel, recording: Recording) -> list[float]:
    return [float(p) for p in vm.win_probability(model, vm.decision_rows(recording.turns, recording.format),
                                                  recording.format)]


def judge_model(more: list[Recording], model: vm.ValueModel, a: float, b: float, base: float,
                plot: Path | None = None) -> dict[str, Any]:
    """The value model against the baselines on battles judged without rollouts: Brier scores, the value model's
    gain over the HP logistic with a 95% interval from resampling whole battles (their decisions share an ending),
    and both reliability tables (and, given ``plot``, their diagram there)."""
    per = []  # per battle: (value model's squared errors, HP logistic's, decisions)
    ys2: list[float] = []
    hp2: list[float] = []
    vm2: list[float] = []
    for recording in more:
        y = score(recording.result.winner)
        hp = [1 / (1 + math.exp(-(a + b * hp_gap(t)))) for t in recording.turns]
        mine = model_probabilities(model, recording)
        per.append((sum((p - y) ** 2 for p in mine), sum((p - y) ** 2 for p in hp), len(mine)))
        ys2 += [y] * len(mine)
        hp2 += hp
        vm2 += mine
    table = np.array(per)
    rng = np.random.default_rng(0)
    draws = rng.integers(0, len(table), (2000, len(table)))
    gains = (table[draws, 1].sum(axis=1) - table[draws, 0].sum(axis=1)) / table[draws, 2].sum(axis=1)
    low, high = np.percentile(gains, [2.5, 97.5])
    rel2 = {"hp": reliability(hp2, ys2), "model": reliability(vm2, ys2)}
    if plot is not None:
        plot.write_text(reliability_svg([("HP logistic", rel2["hp"]), ("value model", rel2["model"])],
                                        f"Reliability on {len(ys2)} decisions of {len(more)} battles, no rollouts"),
                        encoding="utf-8")
    return {"battles": len(more), "decisions": len(ys2), "base": base,
            "brier": {"hp": brier(hp2, ys2), "model": brier(vm2, ys2), "base": brier([base] * len(ys2), ys2)},
            "gain": brier(hp2, ys2) - brier(vm2, ys2), "low": float(low), "high": float(high), "bins": rel2,
            "plot": plot.name if plot is not None else None}


def _cells(c: int, m: float | None, o: float | None, empty: str = "0 | – | –") -> str:
    return f"{c} | {m:.2f} | {o:.2f}" if c and m is not None and o is not None else empty


def model_text(judged: dict[str, Any]) -> str:
    """``judge_model``'s figures in words and tables (the part of a section after its first paragraphs)."""
    b = judged["brier"]
    rel2 = [judged["bins"]["hp"], judged["bins"]["model"]]
    return (f"The value model and the baselines need no rollouts, so they are judged again on {judged['battles']} more "
            f"held-out battles (seeds 3000 on, {judged['decisions']} decisions):\n\n| prediction | Brier score |\n"
            f"| --- | --- |\n| logistic on the HP gap | {b['hp']:.4f} |\n| value model (public state only) | "
            f"{b['model']:.4f} |\n| base rate ({judged['base']:.2f}) | {b['base']:.4f} |\n\n"
            f"The HP logistic's Brier score less the value model's (above 0: the value model is better): "
            f"{judged['gain']:+.4f}, 95% interval {judged['low']:+.4f} to {judged['high']:+.4f} (2000 resamples of "
            "the battles)." + (f"\n\n![reliability diagram]({judged['plot']})" if judged.get("plot") else "") + "\n\n"
            "| bin | HP logistic: n | predicted | observed | value model: n | predicted | observed |\n"
            + "| --- " * 7 + "|\n"
            + "\n".join(f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | " + " | ".join(_cells(*r[i]) for r in rel2) + " |"
                        for i in range(10)))


async def measure_main(train: int, held_out: int, k: int, model_held_out: int, plots: Path | None) -> dict[str, Any]:
    """The rollouts' and the baselines' figures (and the value model's, on ``model_held_out`` more battles)."""
    policy = make_policy("heuristic")
    model = vm.default_model()
    async with SimPool(2) as pool:
        fitted = await battles(1000, train, pool)
        xs = [hp_gap(t) for r in fitted for t in r.turns]
        ys = [score(r.result.winner) for r in fitted for t in r.turns]
        a, b = fit_logistic(xs, ys)
        base = sum(score(r.result.winner) for r in fitted) / len(fitted)
        judged = await battles(2000, held_out, pool)
        rows: list[tuple[float, float, float, float, float]] = []  # K=16, K=64, HP logistic, value model, outcome
        for recording in judged:
            outcomes = await rollouts(recording, policy, pool, k)
            y = score(recording.result.winner)
            for turn, found, p in zip(recording.turns, outcomes, model_probabilities(model, recording)):
                winners = [o.winner for o in found]
                rows.append((sum(map(score, winners[:min(16, k)])) / min(16, k), sum(map(score, winners)) / len(winners),
                             1 / (1 + math.exp(-(a + b * hp_gap(turn)))), p, y))
            print(f"{recording.id}: {len(recording.turns)} decisions", file=sys.stderr, flush=True)
        more = await battles(3000, model_held_out, pool) if model_held_out else []
    ys = [r[4] for r in rows]
    predictions = [[r[i] for r in rows] for i in range(4)] + [[base] * len(rows)]
    rel = [reliability(ps, ys) for ps in predictions[:4]]
    wide = judge_model(more, model, a, b, base, plots and plots / "calibration-public.svg") if more else None
    if plots is not None:
        names = ["rollouts, K = 16", f"rollouts, K = {k}", "HP logistic", "value model"]
        (plots / "calibration.svg").write_text(
            reliability_svg(list(zip(names, rel)), f"Reliability on {len(rows)} held-out decisions ({held_out} battles)"),
            encoding="utf-8")
    return {"fit_decisions": len(xs), "decisions": len(rows), "a": a, "b": b, "base": base,
            "brier": [brier(ps, ys) for ps in predictions], "bins": rel,
            "plot": "calibration.svg" if plots is not None else None, "model": wide}


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    k = p["k"]
    names = ["rollouts, K = 16", f"rollouts, K = {k}", f"logistic on the HP gap (a = {r['a']:.2f}, b = {r['b']:.2f})",
             "value model (public state only)", f"base rate ({r['base']:.2f})"]
    table = ["| prediction | Brier score |", "| --- | --- |"] + [f"| {name} | {value:.3f} |"
                                                                 for name, value in zip(names, r["brier"])]
    bins = [f"| bin | K = 16: n | predicted | observed | K = {k}: n | predicted | observed | HP logistic: n | "
            "predicted | observed | value model: n | predicted | observed |", "| --- " * 13 + "|"]
    bins += [f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | " + " | ".join(_cells(*rel[i]) for rel in r["bins"]) + " |"
             for i in range(10)]
    n, held_out = r["decisions"], p["held_out"]
    return (f"{HEADING}\n\n`{result.command}`: {p['train']} seeded {FORMAT} heuristic-vs-heuristic battles fit the "
            f"baselines ({r['fit_decisions']} decisions); {held_out} other battles ({n} decisions) are judged: at each "
            f"decision, heuristic rollouts from the true state (K = {k}; K = 16 is their first 16) against how the "
            f"battle ended. Decisions of one battle share its ending, so the {n} are far from independent: read the "
            f"table as a first look, not a verdict. {NOTHING_ON_LOAD} The value model sees only the public state "
            "(docs/value-model.md).\n\n" + harness.describe(result) + "\n\n" + "\n".join(table) + "\n\n"
            + "\n".join(bins)
            + (f"\n\nThe same bins as a reliability diagram (`docs/{r['plot']}`, written by this run):\n\n"
               f"![reliability diagram]({r['plot']})" if r.get("plot") else "")
            + ("\n\n" + model_text(r["model"]) if r.get("model") else ""))


async def measure_model(train: int, model_held_out: int, plots: Path | None) -> dict[str, Any]:
    """The value model's part of the bench without the rollouts (``--model-only``): the HP logistic and the base rate
    fitted on the ``train`` battles (seeds 1000 on), then both beside the shipped value model on the
    ``model_held_out`` battles (seeds 3000 on), with the reliability diagram ``calibration-public.svg``."""
    async with SimPool(2) as pool:
        fitted = await battles(1000, train, pool)
        more = await battles(3000, model_held_out, pool)
    a, b = fit_logistic([hp_gap(t) for r in fitted for t in r.turns],
                        [score(r.result.winner) for r in fitted for t in r.turns])
    base = sum(score(r.result.winner) for r in fitted) / len(fitted)
    model = vm.default_model()
    return {"a": a, "b": b, "base": base, "recipe": model.card.get("recipe", ""),
            "temperature": model.card.get("calibration", {}).get("temperature", 1.0),
            "model": judge_model(more, model, a, b, base, plots and plots / "calibration-public.svg")}


async def measure_policies(specs: list[str], held_out: int, k: int) -> dict[str, Any]:
    """Each rollout policy's K-rollout estimate at every decision of the held-out battles, against that policy's own
    continuation of the battle from there: Brier scores at K = 16 and K, and a reliability table."""
    results: dict[str, tuple[list[float], list[float], list[float]]] = {}  # K = 16, K, outcome
    async with SimPool(2) as pool:
        judged = await battles(2000, held_out, pool)
        for spec in specs:
            policy = rollout_policy(spec)
            small: list[float] = []
            full: list[float] = []
            ends: list[float] = []
            for recording in judged:
                outcomes = await rollouts(recording, policy, pool, k + 1)
                for found in outcomes:
                    winners = [score(o.winner) for o in found]
                    small.append(sum(winners[:min(16, k)]) / min(16, k))
                    full.append(sum(winners[:k]) / k)
                    ends.append(winners[k])
            results[spec] = (small, full, ends)
            print(f"{spec}: {len(full)} decisions, Brier K={k} {brier(full, ends):.3f}", file=sys.stderr, flush=True)
    rows = []
    for spec, (small, full, ends) in results.items():
        rate = sum(ends) / len(ends)
        gaps = [abs(m - o) for c, m, o in reliability(full, ends) if c >= 10 and m is not None and o is not None]
        rows.append({"spec": spec, "brier_16": brier(small, ends), "brier": brier(full, ends),
                     "brier_base": brier([rate] * len(ends), ends), "rate": rate, "gap": max(gaps) if gaps else None,
                     "bins": reliability(full, ends)})
    return {"decisions": len(next(iter(results.values()))[0]), "rows": rows}


def parser(description: str) -> argparse.ArgumentParser:
    out = harness.parser(description)
    out.add_argument("--train", type=int, default=40)
    out.add_argument("--held-out", type=int, default=5)
    out.add_argument("--k", type=int, default=64)
    out.add_argument("--model-held-out", type=int, default=1000,
                     help="more held-out battles for the value model and the baselines alone (0: none)")
    out.add_argument("--policies", nargs="+", default=None,
                     help="judge these rollout policies against their own continuations instead (item 2)")
    out.add_argument("--model-only", action="store_true",
                     help="the value model's part alone: no rollouts (its own section; issue 62)")
    out.add_argument("--plots", type=Path, default=PLOTS, help="the folder the reliability diagrams are written to")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    args.plots.mkdir(parents=True, exist_ok=True)
    with harness.measure() as run:
        if args.model_only:
            name = "calibration_model"
            params: dict[str, Any] = {"train": args.train, "model_held_out": args.model_held_out}
            results = asyncio.run(measure_model(args.train, args.model_held_out, args.plots))
        elif args.policies:
            name = "calibration_policies"
            params = {"held_out": args.held_out, "k": args.k, "policies": args.policies}
            results = asyncio.run(measure_policies(args.policies, args.held_out, args.k))
        else:
            name = NAME
            params = {"train": args.train, "held_out": args.held_out, "k": args.k,
                      "model_held_out": args.model_held_out}
            results = asyncio.run(measure_main(args.train, args.held_out, args.k, args.model_held_out, args.plots))
    harness.finish(name, argv, params, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
