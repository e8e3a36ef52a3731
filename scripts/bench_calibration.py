"""Is the rollout estimate calibrated? (issue 48, item 4) And the value model beside it (item 3)

    .venv/bin/python scripts/bench_calibration.py [--train 40] [--held-out 5] [--model-held-out 1000] [--doc]

Plays seeded gen9randombattle heuristic-vs-heuristic battles: ``--train`` of them only to fit the baselines, and
``--held-out`` others whose every decision gets K = 64 heuristic rollouts (the first 16 of them are the K = 16
estimate: rollout *n* is the same battle either way). Each decision's estimate of p1's score is judged against how
the battle really ended (a win 1, a loss 0, a tie ½): a reliability table of 10 bins and the Brier score, beside
two baselines fitted on the training battles — the base rate (p1's score there) and a logistic fit on the
remaining-HP difference (p1's mean team HP less p2's, from each decision's snapshot). The shipped value model
(``wolfeclick.analysis.value_model``, trained by scripts/train_value_model.py on battles of other seeds) is judged on
the same decisions, and again, with the baselines, on ``--model-held-out`` more battles (no rollouts: cheap).

    .venv/bin/python scripts/bench_calibration.py --policies heuristic maxdamage random sim:heuristic ... [--doc]

judges each rollout policy's estimate instead (issue 48, item 2), at the same held-out decisions: K rollouts of that
policy from the true state, against how the battle ends when that policy plays both sides on from there (one more
rollout, number K, which shares no luck with the K) — the outcome of a battle between the rollout policies
themselves, which is what that policy's estimate estimates.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.benchdoc import write_section  # noqa: E402
from wolfeclick.analysis import value_model as vm  # noqa: E402
from wolfeclick.analysis.core import _Player, _Task  # noqa: E402
from wolfeclick.analysis.sim_rollout import rollout_policy  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

HEADING = "## Analysis: is the rollout estimate calibrated? (issue 48, item 4)"
"""Kept as it was (the section it rewrites); the section now holds the value model's rows too."""
FORMAT = "gen9randombattle"


def score(winner: str | None) -> float:
    return 1.0 if winner == "p1" else 0.0 if winner == "p2" else 0.5


def hp_gap(turn) -> float:  # noqa: ANN001
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


def reliability(ps: list[float], ys: list[float]) -> list[tuple[int, float, float]]:
    """Ten equal-width bins of the prediction: (count, mean predicted, mean outcome)."""
    bins: list[list[tuple[float, float]]] = [[] for _ in range(10)]
    for p, y in zip(ps, ys):
        bins[min(9, int(p * 10))].append((p, y))
    return [(len(b), sum(p for p, _ in b) / len(b) if b else math.nan, sum(y for _, y in b) / len(b) if b else math.nan)
            for b in bins]


PLOT = Path(__file__).resolve().parents[1] / "docs" / "calibration.svg"
COLORS = {"rollouts, K = 16": "#94a3b8", "HP logistic": "#d97706", "value model": "#16a34a"}
"""Each prediction's colour in the diagrams (any other name: K = 64's blue)."""


def reliability_svg(series: list[tuple[str, list[tuple[int, float, float]]]], title: str) -> str:
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
        points = [(c, m, o) for c, m, o in bins if c]
        total = sum(c for c, _, _ in points) or 1
        parts.append(f'<polyline points="{" ".join(at(m, o) for _, m, o in points)}" fill="none" stroke="{color}" '
                     'stroke-width="1.5"/>')
        parts += [f'<circle cx="{at(m, o).split(",")[0]}" cy="{at(m, o).split(",")[1]}" '
                  f'r="{2 + 10 * math.sqrt(c / total):.1f}" fill="{color}" fill-opacity="0.5"/>' for c, m, o in points]
        parts.append(f'<rect x="{size + 4}" y="{pad + 18 * i - 8}" width="10" height="10" fill="{color}"/>'
                     f'<text x="{size + 18}" y="{pad + 18 * i + 1}">{name}</text>')
    return "".join(parts) + "</svg>\n"


async def battles(first: int, count: int, pool: SimPool) -> list:  # type: ignore[type-arg]
    gate = asyncio.Semaphore(16)

    async def one(seed: int):  # noqa: ANN202
        async with gate:
            return await play_battle(make_policy("heuristic"), make_policy("heuristic"), format_id=FORMAT, seed=seed,
                                     process=pool.pick())

    return list(await asyncio.gather(*[one(first + n) for n in range(count)]))


async def rollouts(recording, policy, pool: SimPool, count: int) -> list:  # type: ignore[no-untyped-def,type-arg]
    """Rollouts 0 to ``count`` - 1 (seed 1, lean, forked) from every decision of ``recording``, in decision order."""
    player = _Player(recording, policy, recording.turns, 1, pool, 16, lambda n: None, None, True, True)
    try:
        return list(await asyncio.gather(*[player.many(_Task(t.index), range(count)) for t in recording.turns]))
    finally:
        await player.close()


def model_probabilities(model: vm.ValueModel, recording) -> list[float]:  # noqa: ANN001
    return [float(p) for p in vm.win_probability(model, vm.decision_rows(recording.turns, recording.format))]


def model_comparison(more: list, model: vm.ValueModel, a: float, b: float, base: float,  # type: ignore[type-arg]
                     plot: Path | None = None) -> str:
    """The value model against the baselines on battles judged without rollouts: Brier scores, the value model's
    gain over the HP logistic with a 95% interval from resampling whole battles (their decisions share an ending),
    and both reliability tables."""
    per = []  # per battle: (value model's squared errors, HP logistic's, decisions)
    ys2, hp2, vm2 = [], [], []
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
    rel2 = [reliability(ps, ys2) for ps in (hp2, vm2)]
    if plot is not None:
        plot.write_text(reliability_svg(list(zip(["HP logistic", "value model"], rel2)),
                                        f"Reliability on {len(ys2)} decisions of {len(more)} battles, no rollouts"),
                        encoding="utf-8")
    return (f"\n\nThe value model and the baselines need no rollouts, so they are judged again on {len(more)} more "
            f"held-out battles (seeds 3000 on, {len(ys2)} decisions):\n\n| prediction | Brier score |\n| --- | --- |\n"
            f"| logistic on the HP gap | {brier(hp2, ys2):.4f} |\n| value model (public state only) | "
            f"{brier(vm2, ys2):.4f} |\n| base rate ({base:.2f}) | {brier([base] * len(ys2), ys2):.4f} |\n\n"
            f"The HP logistic's Brier score less the value model's (above 0: the value model is better): "
            f"{brier(hp2, ys2) - brier(vm2, ys2):+.4f}, 95% interval {low:+.4f} to {high:+.4f} (2000 resamples of "
            "the battles)." + (f"\n\n![reliability diagram]({plot.name})" if plot is not None else "") + "\n\n"
            "| bin | HP logistic: n | predicted | observed | value model: n | predicted | observed |\n"
            + "| --- " * 7 + "|\n"
            + "\n".join(f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | " + " | ".join(
                f"{c} | {m:.2f} | {o:.2f}" if c else "0 | – | –" for c, m, o in (r[i] for r in rel2)) + " |"
                for i in range(10)))


async def run(train: int, held_out: int, k: int, model_held_out: int, plot: Path | None = None) -> str:
    load = os.getloadavg()[0]
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
            print(f"{recording.id}: {len(recording.turns)} decisions, load {os.getloadavg()[0]:.1f}", flush=True)
        more = await battles(3000, model_held_out, pool) if model_held_out else []
    ys = [r[4] for r in rows]
    n = len(rows)
    scores = [("rollouts, K = 16", [r[0] for r in rows]), (f"rollouts, K = {k}", [r[1] for r in rows]),
              (f"logistic on the HP gap (a = {a:.2f}, b = {b:.2f})", [r[2] for r in rows]),
              ("value model (public state only)", [r[3] for r in rows]), (f"base rate ({base:.2f})", [base] * n)]
    table = ["| prediction | Brier score |", "| --- | --- |"] + [f"| {name} | {brier(ps, ys):.3f} |"
                                                                 for name, ps in scores]
    bins = ["", ""]
    rel = [reliability(ps, ys) for _, ps in scores[:4]]
    for i in range(10):
        cells = [f"{c} | {m:.2f} | {o:.2f}" if c else "0 | – | –" for c, m, o in (r[i] for r in rel)]
        bins.append(f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | " + " | ".join(cells) + " |")
    bins[0] = (f"| bin | K = 16: n | predicted | observed | K = {k}: n | predicted | observed | HP logistic: n | "
               "predicted | observed | value model: n | predicted | observed |")
    bins[1] = "| --- " * 13 + "|"
    wide = model_comparison(more, model, a, b, base, plot and plot.with_name("calibration-public.svg")) if more else ""
    if plot is not None:
        names = ["rollouts, K = 16", f"rollouts, K = {k}", "HP logistic", "value model"]
        plot.write_text(reliability_svg(list(zip(names, rel)), f"Reliability on {n} held-out decisions "
                                        f"({held_out} battles)"), encoding="utf-8")
    end = os.getloadavg()[0]
    return (f"{HEADING}\n\n`.venv/bin/python scripts/bench_calibration.py --train {train} --held-out {held_out} "
            f"--model-held-out {model_held_out} --doc` on {platform.machine()} with {os.cpu_count()} cores: {train} "
            f"seeded {FORMAT} heuristic-vs-heuristic battles fit the baselines ({len(xs)} decisions); {held_out} "
            f"other battles ({n} decisions) are judged: at each decision, heuristic rollouts "
            f"from the true state (K = {k}; K = 16 is their first 16) against how the battle ended. Decisions of "
            f"one battle share its ending, so the {n} are far from independent: read the table as a first look, "
            f"not a verdict. Load average {load:.1f} at the start and {end:.1f} at the end (nothing here "
            "depends on the load). The value model sees only the public state "
            "(docs/value-model.md).\n\n" + "\n".join(table) + "\n\n" + "\n".join(bins)
            + ("\n\nThe same bins as a reliability diagram (`docs/calibration.svg`, written by this run):\n\n"
               "![reliability diagram](calibration.svg)" if plot is not None else "") + wide + "\n")


MODEL_HEADING = "## Analysis: the value model on the calibration bench's 1000 battles (issue 62)"


async def model_only(train: int, model_held_out: int) -> str:
    """The value model's part of the bench without the rollouts (``--model-only``): the HP logistic and the base rate
    fitted on the ``train`` battles (seeds 1000 on), then both beside the shipped value model on the
    ``model_held_out`` battles (seeds 3000 on), with the reliability diagram ``docs/calibration-public.svg``."""
    load = os.getloadavg()[0]
    async with SimPool(2) as pool:
        fitted = await battles(1000, train, pool)
        more = await battles(3000, model_held_out, pool)
    a, b = fit_logistic([hp_gap(t) for r in fitted for t in r.turns],
                        [score(r.result.winner) for r in fitted for t in r.turns])
    base = sum(score(r.result.winner) for r in fitted) / len(fitted)
    wide = model_comparison(more, vm.default_model(), a, b, base, PLOT.with_name("calibration-public.svg"))
    return (f"{MODEL_HEADING}\n\n`.venv/bin/python scripts/bench_calibration.py --model-only --train {train} "
            f"--model-held-out {model_held_out} --doc` on {platform.machine()} with {os.cpu_count()} cores, load "
            f"average {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (nothing here depends on the "
            f"load): the value-model part of *Analysis: is the rollout estimate calibrated?* again, for the shipped model (issue 62's: "
            f"{vm.default_model().card.get('recipe', '')}, temperature "
            f"{vm.default_model().card.get('calibration', {}).get('temperature', 1.0)}), the rollouts left out. "
            f"{train} seeded {FORMAT} heuristic-vs-heuristic battles (seeds 1000 on) fit the HP logistic "
            f"(a = {a:.2f}, b = {b:.2f}: its input is the snapshots' HP gap) and the base rate." + wide + "\n")


POLICIES_HEADING = "## Analysis: is each rollout policy's estimate calibrated? (issue 48, item 2)"


async def per_policy(specs: list[str], held_out: int, k: int) -> str:
    """Each rollout policy's K-rollout estimate at every decision of the held-out battles, against that policy's own
    continuation of the battle from there: Brier scores at K = 16 and K, and a reliability table."""
    load = open("/proc/loadavg").read().split()[0]
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
            print(f"{spec}: {len(full)} decisions, Brier K={k} {brier(full, ends):.3f}, load "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
    n = len(next(iter(results.values()))[0])
    rows = ["| rollout policy | Brier, K = 16 | Brier, K = " + str(k) + " | Brier, its own base rate | p1 scores "
            "(mean of the continuations) | largest gap between predicted and observed, bins of ≥ 10 |",
            "| --- | --- | --- | --- | --- | --- |"]
    for spec, (small, full, ends) in results.items():
        rate = sum(ends) / len(ends)
        gaps = [abs(m - o) for c, m, o in reliability(full, ends) if c >= 10]
        gap = f"{max(gaps):.2f}" if gaps else "–"
        rows.append(f"| {spec} | {brier(small, ends):.3f} | {brier(full, ends):.3f} | "
                    f"{brier([rate] * len(ends), ends):.3f} | {rate:.2f} | {gap} |")
    bins = ["| bin (K = " + str(k) + ") | " + " | ".join(f"{spec}: n · predicted → observed" for spec in results)
            + " |", "| --- " * (len(results) + 1) + "|"]
    tables = {spec: reliability(full, ends) for spec, (_, full, ends) in results.items()}
    for i in range(10):
        cells = [f"{c} · {m:.2f} → {o:.2f}" if c else "0" for c, m, o in (tables[spec][i] for spec in results)]
        bins.append(f"| {i / 10:.1f}–{(i + 1) / 10:.1f} | " + " | ".join(cells) + " |")
    return (f"{POLICIES_HEADING}\n\n`.venv/bin/python scripts/bench_calibration.py --held-out {held_out} --policies "
            f"{' '.join(specs)} --doc` on {platform.machine()} with {os.cpu_count()} cores: the {held_out} held-out "
            f"{FORMAT} heuristic-vs-heuristic battles of the section above ({n} decisions). At each decision each "
            f"rollout policy's estimate (K = {k} rollouts of it from the true state; K = 16 is their first 16) is "
            f"judged against how the battle ends when that policy plays both sides on from there (rollout number "
            f"{k}, which shares no luck with the {k}): the outcome of a battle between the rollout policies "
            "themselves, one per decision, so the decisions are independent draws here. A policy's own base rate "
            "is the mean of its continuations (fitted on the outcomes it is judged on: a floor, not a rival). "
            f"Load average {load} at the start and {open('/proc/loadavg').read().split()[0]} at the end (nothing "
            "here depends on the load).\n\n" + "\n".join(rows) + "\n\n" + "\n".join(bins) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=40)
    parser.add_argument("--held-out", type=int, default=5)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--model-held-out", type=int, default=1000,
                        help="more held-out battles for the value model and the baselines alone (0: none)")
    parser.add_argument("--policies", nargs="+", default=None,
                        help="judge these rollout policies against their own continuations instead (item 2)")
    parser.add_argument("--model-only", action="store_true",
                        help="the value model's part alone: no rollouts (its own section; issue 62)")
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    if args.model_only:
        text = asyncio.run(model_only(args.train, args.model_held_out))
        print(text)
        if args.doc:
            write_section(MODEL_HEADING, text)
        return
    if args.policies:
        text = asyncio.run(per_policy(args.policies, args.held_out, args.k))
        print(text)
        if args.doc:
            write_section(POLICIES_HEADING, text)
        return
    text = asyncio.run(run(args.train, args.held_out, args.k, args.model_held_out, PLOT if args.doc else None))
    print(text)
    if args.doc:
        write_section(HEADING, text)


if __name__ == "__main__":
    main()
