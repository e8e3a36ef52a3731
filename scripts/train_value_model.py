"""Train the value model (issue 48, item 3): p1's chance to win from the public state at a decision.

    .venv/bin/python -m scripts.train_value_model [--out wolfeclick/analysis/value_model.json] [--doc]

Plays seeded battles between the rollout policies (``--mix FORMAT:P1:P2:COUNT``, repeatable; default below), reads
every decision's public state with ``wolfeclick.analysis.value_model.decision_rows`` and labels it with how its
battle ended (p1 a win 1, a loss 0, a tie or turn limit ½): the rollout policies' own outcomes, which is what the
K-rollout estimate estimates too. Every fifth battle of each mix is held out for validation and every first kept out
of the fit; the model is fitted on the other three (full-batch Adam, ``wolfeclick.analysis.value_model.fit``), its
temperature on the calibration battles (``--calibration``: by default fresh battles in the evaluation's mix of
pairings, ``CALIBRATION_SEEDS``), and it is written with its card: the recipe, the data and the validation Brier
scores beside a logistic regression on the same features, a logistic fit on the HP gap and the base rate. ``--doc``
rewrites the measured section of docs/value-model.md.

Deterministic: battle seeds are fixed (from 100000 up: apart from benchmarks.calibration's 1000s and 2000s), BLAS runs
on one thread, and the file holds no dates or timings, so the same recipe gives the same bytes on one machine.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # one summation order: the same data gives the same weights

import argparse  # noqa: E402
import asyncio  # noqa: E402
import hashlib  # noqa: E402
import inspect  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

from scripts.benchdoc import write_section  # noqa: E402
from wolfeclick.analysis import value_model as vm  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.battle.schema import Recording  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

DOC = ROOT / "docs" / "value-model.md"
HEADING = "## The shipped model's training run"
FIRST_SEED = 100_000
GROUP_SEEDS = 10_000
"""Group ``i`` of the mix plays seeds ``FIRST_SEED + i * GROUP_SEEDS`` on: a group's battles do not move when
another group's count changes (the calibration bench plays 1000s and 2000s, the value-model bench 3000s and the
evaluation 800000 on, since issue 62's second round 900000 on and since its third 1200000 on; the calibration
battles play 1100000 on)."""
POLICIES = ("heuristic", "maxdamage", "random")
FORMATS = ("gen9randombattle", "gen4randombattle")
SELF_PLAY = {"gen9randombattle": 2700, "gen4randombattle": 1800}
UNEVEN = 120
MIX = tuple(f"{fmt}:{p1}:{p2}:{SELF_PLAY[fmt] if p1 == p2 == 'heuristic' else UNEVEN}"
            for fmt in FORMATS for p1 in POLICIES for p2 in POLICIES)
"""Both formats, every ordered pairing of the three baselines (issue 62: the model had learnt heuristic self-play
alone, mostly gen9, and was worse than an HP logistic on uneven pairings): heuristic self-play (what the rollout
estimate plays) the most, each other pairing, both ways round, 120 battles per format. A battle takes about
0.1 s of wall time on two quiet cores, 0.3 s on a busy one."""
VALIDATE_EVERY = 5
"""Of every five battles of a group, the fifth is held out for validation and the first kept out of the fit (until
issue 62's third round it was the calibration fold; ``--calibration fold`` uses it so again): the model is fitted on
the other three."""
PAIRS = tuple((p1, p2) for p1 in POLICIES for p2 in POLICIES)
PAIRING_SEEDS = 5_000
"""In a block of battles in the evaluation's mix (``play_pairings``), pairing ``n`` of ``PAIRS`` plays from the
format's first seed + ``n * PAIRING_SEEDS``."""
CALIBRATION_SEEDS = {"gen9randombattle": 1_100_000, "gen4randombattle": 1_150_000}
CALIBRATION_BATTLES = 900
"""The temperature's battles (issue 62, third round): per format, every ordered pairing of the baselines in equal
share (100 each), the mix ``scripts/eval_value_model.py`` judges in, on seeds no other script plays. The first of
every five training battles (the old calibration fold) is two thirds heuristic self-play; fitted there the
temperature sharpened the model (T = 0.820) and the fresh evaluation, two thirds uneven pairings, found it
overconfident on both sides. ``--calibration fold`` fits it there again (the second round's file)."""
CACHE = ROOT / "tmp" / "value-model-battles"


def outcome(winner: str | None) -> float:
    return 1.0 if winner == "p1" else 0.0 if winner == "p2" else 0.5


def parse_mix(items: list[str]) -> list[tuple[str, str, str, int]]:
    mix = []
    for item in items:
        fmt, p1, p2, count = item.rsplit(":", 3)
        mix.append((fmt, p1, p2, int(count)))
    return mix


def features_version() -> str:
    """What the cached rows depend on: the source of every function that reads them, and the feature names (a
    change there plays the battles again)."""
    parts = [inspect.getsource(f) for f in (vm._Seen, vm._status, vm._read_condition, vm._Field, vm._public_vector,
                                            vm._static, vm._pokedex, vm._type_chart, vm._dex, vm._stat, vm._matchup,
                                            vm.decision_rows, vm._generation)]
    return hashlib.sha256("\n".join([*parts, *vm.FEATURES]).encode()).hexdigest()[:16]


def cache_path(cache: Path, fmt: str, p1: str, p2: str, count: int, first: int) -> Path:
    return cache / f"{fmt}-{p1}-{p2}-{first}-{count}-{features_version()}.npz"


def hp_gaps(recording: Recording) -> list[float]:
    """p1's mean team HP less p2's at each decision, from the snapshots (the HP logistic's input, as
    benchmarks/calibration.py reads it: each side's own knowledge)."""
    return [(t.snapshot["p1"].team_hp - t.snapshot["p2"].team_hp) / 100 for t in recording.turns]


def public_gaps(rows: np.ndarray) -> np.ndarray:
    """p1's mean public team HP less p2's at each row (the model's own ``team_hp`` columns, 0-1): the HP gap as a
    spectator saw it, the HP logistic's other input."""
    column = vm.SIDE_FEATURES.index("team_hp")
    gaps: np.ndarray = rows[:, column] - rows[:, vm.WIDTH + column]
    return gaps


async def play_group(pool: SimPool, fmt: str, p1: str, p2: str, count: int, first: int, in_flight: int,
                     group: int) -> list[dict]:
    """The group's battles in seed order: each one's rows, p1's outcome, the HP gaps, its seed and group."""
    gate = asyncio.Semaphore(in_flight)

    async def one(seed: int) -> dict | None:
        async with gate:
            recording = await play_battle(make_policy(p1), make_policy(p2), format_id=fmt, seed=seed,
                                          process=pool.pick())
        if recording.result.reason not in ("win", "tie", "turn_limit") or not recording.turns:
            return None
        return {"rows": vm.decision_rows(recording.turns, recording.format), "y": outcome(recording.result.winner),
                "hp": hp_gaps(recording), "seed": seed, "group": group}

    return [b for b in await asyncio.gather(*[one(first + n) for n in range(count)]) if b is not None]


def save_group(path: Path, battles: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, rows=np.concatenate([b["rows"] for b in battles]), lengths=[len(b["rows"]) for b in battles],
             y=[b["y"] for b in battles], hp=np.concatenate([np.asarray(b["hp"]) for b in battles]),
             seeds=[b["seed"] for b in battles])


def load_group(path: Path, group: int) -> list[dict]:
    with np.load(path) as data:  # each item read once: an NpzFile reads its array again at every access
        rows, hp, lengths, ys, seeds = (data[key] for key in ("rows", "hp", "lengths", "y", "seeds"))
    ends = np.cumsum(lengths)
    return [{"rows": rows[e - n:e], "hp": list(hp[e - n:e]), "y": float(y), "seed": int(seed), "group": group}
            for n, e, y, seed in zip(lengths, ends, ys, seeds)]


def fewer(cache: Path, fmt: str, p1: str, p2: str, count: int, first: int) -> list[dict]:
    """The battles of the largest cached run of this group under ``count`` (the same seeds from ``first``): a
    larger count plays only the seeds after them."""
    sizes = []
    for path in cache.glob(f"{fmt}-{p1}-{p2}-{first}-*-{features_version()}.npz"):
        size = path.name.split("-")[-2]
        if size.isdigit() and int(size) < count:
            sizes.append((int(size), path))
    return load_group(max(sizes)[1], 0) if sizes else []


async def play_pairings(count: int, in_flight: int, cache: Path | None, seeds: dict[str, int]) -> list[dict]:
    """``count`` battles per format of ``seeds`` (format: first seed), one group per (format, pairing of ``PAIRS``),
    every pairing getting its share in turn (a larger count than a cached run's plays only the seeds after it): the
    evaluation's mix, which the calibration battles share."""
    battles: list[dict] = []
    async with SimPool(2) as pool:
        for fmt, first in seeds.items():
            for n, (p1, p2) in enumerate(PAIRS):
                share = count // len(PAIRS) + (n < count % len(PAIRS))
                start = first + n * PAIRING_SEEDS
                path = cache_path(cache, fmt, p1, p2, share, start) if cache is not None else None
                if path is not None and path.exists():
                    group = load_group(path, n)
                else:
                    kept = fewer(cache, fmt, p1, p2, share, start) if cache is not None else []
                    group = [{**b, "group": n} for b in kept] + await play_group(
                        pool, fmt, p1, p2, share - len(kept), start + len(kept), in_flight, n)
                    print(f"  {fmt} {p1} vs {p2}: {len(group)} battles, load {os.getloadavg()[0]:.1f}", flush=True)
                    if path is not None:
                        save_group(path, group)
                        group = load_group(path, n)
                battles += [{**b, "format": fmt, "pairing": "self-play" if p1 == p2 else "uneven"} for b in group]
    return battles


async def play(mix: list[tuple[str, str, str, int]], in_flight: int, cache: Path | None,
               first_seed: int = FIRST_SEED) -> list[dict]:
    """Every battle of the mix, group by group in seed order (read from ``cache`` when it holds the group)."""
    battles: list[dict] = []
    async with SimPool(2) as pool:
        for group, (fmt, p1, p2, count) in enumerate(mix):
            first = first_seed + group * GROUP_SEEDS
            path = cache_path(cache, fmt, p1, p2, count, first) if cache is not None else None
            if path is not None and path.exists():
                battles += load_group(path, group)
                continue
            kept = fewer(cache, fmt, p1, p2, count, first) if cache is not None else []
            started = time.perf_counter()
            played = kept + await play_group(pool, fmt, p1, p2, count - len(kept), first + len(kept), in_flight,
                                             group)
            print(f"  {fmt} {p1} vs {p2}: {len(played)} battles in {time.perf_counter() - started:.0f} s, load "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
            if path is not None:
                save_group(path, played)
            battles += load_group(path, group) if path is not None else played
    return battles


def stack(battles: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = np.concatenate([b["rows"] for b in battles])
    ys = np.concatenate([np.full(len(b["rows"]), b["y"]) for b in battles])
    hp = np.concatenate([np.asarray(b["hp"]) for b in battles])
    return rows, ys, hp


def pairing(mix: list[tuple[str, str, str, int]], battle: dict) -> str:
    fmt, p1, p2, _ = mix[battle["group"]]
    return f"{fmt} {'self-play' if p1 == p2 else 'uneven'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", action="append", help="FORMAT:P1:P2:COUNT (repeatable; default: the shipped mix)")
    parser.add_argument("--units", type=int, default=8, help="hidden units (0: a logistic regression)")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--l2", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0, help="the weights' initial draw")
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help="where each group's rows are kept once played (git-ignored tmp/ by default)")
    parser.add_argument("--no-cache", action="store_true", help="play every battle again, keep nothing")
    parser.add_argument("--play-only", action="store_true", help="play (and cache) the battles, fit nothing")
    parser.add_argument("--calibration", choices=("fresh", "fold"), default="fresh",
                        help=f"the temperature's battles: fresh ones in the evaluation's mix ({CALIBRATION_BATTLES} "
                             "per format from CALIBRATION_SEEDS; the default) or the first of every five training "
                             "battles (the training mix; issue 62's second round)")
    parser.add_argument("--out", type=Path, default=vm.MODEL_PATH)
    parser.add_argument("--doc", action="store_true", help=f"rewrite '{HEADING}' in docs/value-model.md")
    args = parser.parse_args()
    mix = parse_mix(args.mix or list(MIX))

    started, load = time.perf_counter(), os.getloadavg()
    cache = None if args.no_cache else args.cache
    battles = asyncio.run(play(mix, args.in_flight, cache))
    fresh = (asyncio.run(play_pairings(CALIBRATION_BATTLES, args.in_flight, cache, CALIBRATION_SEEDS))
             if args.calibration == "fresh" else [])
    played = time.perf_counter() - started
    if args.play_only:
        print(f"{len(battles)} battles ready in {played:.0f} s")
        return
    counts: dict[int, int] = {}
    train: list[dict] = []
    first_fold: list[dict] = []
    held: list[dict] = []
    for battle in battles:
        counts[battle["group"]] = counts.get(battle["group"], 0) + 1
        fold = counts[battle["group"]] % VALIDATE_EVERY
        (held if fold == 0 else first_fold if fold == 1 else train).append(battle)
    calibrate = fresh if args.calibration == "fresh" else first_fold
    rows, ys, hp = stack(train)
    options = "".join(f" --mix {m}" for m in args.mix or []) + (
        " --calibration fold" if args.calibration == "fold" else "") + "".join(
        f" --{name} {value}" for name, value, default in (("units", args.units, 8), ("steps", args.steps, 1500),
                                                          ("l2", args.l2, 1e-2), ("seed", args.seed, 0))
        if value != default)
    fit_started = time.perf_counter()
    raw = vm.fit(rows, ys, units=args.units, steps=args.steps, l2=args.l2, seed=args.seed)
    crows, cys, _ = stack(calibrate)
    t = vm.fit_temperature(raw, crows, cys)
    frows, fys, _ = stack(first_fold)
    t_fold = vm.fit_temperature(raw, frows, fys)
    fitted = time.perf_counter() - fit_started
    logistic = vm.fit(rows, ys, units=0, steps=args.steps, l2=args.l2, seed=args.seed)
    from benchmarks.calibration import fit_logistic  # the HP-gap baseline, as the calibration bench fits it

    a, b = fit_logistic(list(hp), list(ys))
    pa, pb = fit_logistic(list(public_gaps(rows)), list(ys))
    base = float(np.mean([battle["y"] for battle in train]))
    card = {"recipe": f"scripts/train_value_model.py{options}",
            "mix": [f"{fmt}:{p1}:{p2}:{count}" for fmt, p1, p2, count in mix], "first_seed": FIRST_SEED,
            "group_seeds": GROUP_SEEDS, "validate_every": VALIDATE_EVERY, "units": args.units, "steps": args.steps,
            "l2": args.l2, "init_seed": args.seed, "train_battles": len(train), "train_decisions": int(len(ys)),
            "calibration": {"kind": "temperature", "temperature": round(t, 6), "battles": len(calibrate),
                            "decisions": int(len(cys)),
                            "how": "the fitted score divided by T (the linear and output weights), T of least log "
                                   "loss on the calibration battles",
                            **({"battles_from": "fresh battles in the evaluation's mix (every ordered pairing "
                                                "in equal share), on seeds no other script plays",
                                "per_format": CALIBRATION_BATTLES, "seeds": CALIBRATION_SEEDS,
                                "pairing_seeds": PAIRING_SEEDS, "pairings": [f"{p1}:{p2}" for p1, p2 in PAIRS]}
                               if args.calibration == "fresh" else
                               {"battles_from": "the first of every five battles of each training group (the "
                                                "training mix)"}),
                            "temperature_on_first_fold": round(t_fold, 6)},
            "hp_logistic": {"a": round(a, 6), "b": round(b, 6),
                            "reads": "p1's snapshot team HP less p2's (scripts/bench_calibration.py's hp_gap), "
                                     "fitted on the training battles"},
            "hp_logistic_public": {"a": round(pa, 6), "b": round(pb, 6),
                                   "reads": "p1's public team HP less p2's (the model's own team_hp columns: the "
                                            "last HP everyone saw, an unrevealed Pokémon full), fitted on the "
                                            "training battles"},
            "label": "how the battle ended for p1 (win 1, loss 0, tie or turn limit 0.5)", "sees": vm.SEES}
    model = vm.with_temperature(raw, t, card)
    if args.calibration == "fresh":  # each generation's own temperature on top of the pooled one (issue 62)
        per_generation = {}
        for fmt in sorted({battle["format"] for battle in calibrate}, key=vm._generation):
            grows, gys, _ = stack([battle for battle in calibrate if battle["format"] == fmt])
            per_generation[str(vm._generation(fmt))] = round(vm.fit_temperature(model, grows, gys), 6)
        card["calibration"]["per_generation"] = per_generation
        card["calibration"]["per_generation_how"] = (
            "a battle's score is further divided by its generation's factor (T of least log loss on that "
            "format's calibration battles, the pooled T already applied); other generations use the pooled T")
        model = vm.with_temperature(raw, t, card)
    validation = {}
    subsets = [("all held out", held)] + [
        (name, [h for h in held if pairing(mix, h) == name])
        for name in sorted({pairing(mix, h) for h in held}, key=lambda n: (n.split()[0][:4] != "gen9", n))]
    for name, subset in subsets:
        if not subset:
            continue
        vrows, vys, vhp = stack(subset)
        validation[name] = {
            "battles": len(subset), "decisions": int(len(vys)),
            "value model": round(vm.brier(vm.win_probability(model, vrows), vys), 4),
            "before calibration": round(vm.brier(vm.win_probability(raw, vrows), vys), 4),
            "logistic on the same features": round(vm.brier(vm.win_probability(logistic, vrows), vys), 4),
            "logistic on the HP gap": round(vm.brier(1 / (1 + np.exp(-(a + b * vhp))), vys), 4),
            "logistic on the public HP gap": round(vm.brier(1 / (1 + np.exp(-(pa + pb * public_gaps(vrows)))), vys), 4),
            "base rate": round(vm.brier(np.full(len(vys), base), vys), 4)}
    model.card["validation_brier"] = validation
    text = model.to_json()
    args.out.write_text(text, encoding="utf-8")
    again = vm.load_model(args.out)
    assert again.to_json() == text
    end = os.getloadavg()
    summary = (f"`.venv/bin/python -m scripts.train_value_model{options}{' --doc' if args.doc else ''}`"
               f": {len(battles)} battles ({sum(len(b['rows']) for b in battles)} decisions) in {played:.0f} s "
               f"(played, or read from the cache of a run before), {len(train)} of them ({len(ys)} decisions) "
               f"fitted and {len(calibrate)} "
               + ("fresh ones in the evaluation's mix (seeds "
                  + ", ".join(f"{s} on" for s in CALIBRATION_SEEDS.values()) + ", "
                  if args.calibration == "fresh" else "of them (the first of every five, ")
               + f"{len(cys)} decisions) calibrated in {fitted:.0f} s ({args.units} hidden units, {args.steps} "
               f"steps, L2 {args.l2:g}; temperature {t:.3f}"
               + (f", where the first of every five training battles would give {t_fold:.3f}"
                  if args.calibration == "fresh" else "")
               + "); the weights file is "
               f"{len(text.encode()) / 1024:.1f} KiB. On {platform.machine()} with {os.cpu_count()} cores, load "
               f"average {load[0]:.1f} at the start and {end[0]:.1f} at the end (a shared machine: the times move "
               "with it, the weights do not).\n\nValidation (every fifth battle of each group, never fitted nor "
               "calibrated on), Brier score of p1's chance at every decision against how its battle ended:\n\n"
               "| held out | battles | decisions | value model | before calibration | logistic, same features | "
               "logistic, HP gap (snapshots) | logistic, public HP gap | base rate |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
               + "".join(f"| {name} | {v['battles']} | {v['decisions']} | {v['value model']:.4f} | "
                         f"{v['before calibration']:.4f} | {v['logistic on the same features']:.4f} | "
                         f"{v['logistic on the HP gap']:.4f} | {v['logistic on the public HP gap']:.4f} | "
                         f"{v['base rate']:.4f} |\n"
                         for name, v in validation.items()))
    print(f"{HEADING}\n\n{summary}")
    if args.doc:
        write_section(HEADING, f"{HEADING}\n\n{summary}", DOC)


if __name__ == "__main__":
    main()
