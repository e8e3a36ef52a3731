"""Racing against uniform K (issue 48, item 1): the same verdicts at a fraction of the rollouts?

    .venv/bin/python -m benchmarks.racing [--battles 0 22] [--cache /tmp/racing] [--batch 8] [--k 64]
    .venv/bin/python -m benchmarks.racing --battles 0 10 --cache C1 --against C2    # two rollout policies compared

Plays seeded gen9randombattle battles (p1 random or maxdamage, so that there are mistakes to find, against heuristic
p2), picks three p1 decisions of each, and plays ``--k`` rollouts (``--policy`` both sides, heuristic by default)
of the decision's win probability and of every legal option, keeping each rollout's winner in order, one file a
battle in ``--cache`` (a battle already there is not played again: the run may be made in pieces). Rollout *n* of a
task is the same battle however the analysis schedules it (shared luck, seeded policies; tested byte for byte), so
racing's rule (``wolfeclick.analysis.core.race`` and ``settle``, the very functions the analysis awaits) run over
those kept winners gets exactly what a live racing analysis gets; its best option, mistake verdict and win
probability are compared with uniform K. ``--against`` compares the uniform-K verdicts of two caches of the same
decisions (two rollout policies) and prints them, writing no result. ``benchmarks.racing_live`` times racing on the
real simulator.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.analysis.core import _Player, _Task, estimate, option_table, race, settle
from wolfeclick.analysis.racing import uniform_width
from wolfeclick.analysis.rollout import Outcome
from wolfeclick.arena.stats import Z95
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import ActionRecord, Recording
from wolfeclick.sim.process import SimPool

NAME = "racing"
HEADING = "## Analysis by racing against uniform K = 64: verdicts and rollouts (issue 48)"
MARGIN = 0.15
VARIANTS = ((None, Z95, "the analysis' rule: 95% intervals, the race ends in a band as wide as the margin"),
            (0.0, Z95, "95% intervals, no band"),
            (0.2, Z95, "95% intervals, band 0.2"),
            (0.3, Z95, "95% intervals, band 0.3"),
            (0.25, 1.0, "aggressive: 68% intervals stop options, band 0.25"))
"""The racing rules compared: the band that ends a race (None: the margin), the intervals' z, label."""
DOCUMENTED = (0, 22)
DOCUMENTED_ROLLOUTS = 24128 + 4224
"""The battles of the documented run: 66 decisions, its option and win-probability rollouts at K = 64."""
DOCUMENTED_AT = "efae875"
"""The commit whose docs/benchmarks.md holds that run's table (2026-12-05), which docs/analysis.md quotes."""


async def battle(number: int) -> Recording:
    p1 = "random" if number % 2 == 0 else "maxdamage"
    return await play_battle(make_policy(p1), make_policy("heuristic"), format_id="gen9randombattle",
                             seed=100 + number)


def picks(recording: Recording) -> list[int]:
    """Three p1 decisions with a choice to make, spread over the battle."""
    steps = [t.index for t in recording.turns if "p1" in t.decisions and len(t.decisions["p1"].legal_actions) > 1]
    return sorted({steps[int(len(steps) * f)] for f in (0.2, 0.5, 0.8)}) if steps else []


def cached(cache: Path, number: int) -> Path:
    return cache / f"battle-{number}.json"


async def collect(numbers: Sequence[int], cache: Path, processes: int, spec: str, k: int) -> int:
    """Play and keep the winners of battles ``numbers`` not yet in ``cache``; returns the rollouts played."""
    from wolfeclick.analysis.sim_rollout import rollout_policy

    cache.mkdir(parents=True, exist_ok=True)
    policy = rollout_policy(spec)
    count = 0
    async with SimPool(processes) as pool:
        for number in numbers:
            if cached(cache, number).exists():
                continue
            recording = await battle(number)
            steps = picks(recording)
            player = _Player(recording, policy, [recording.turns[s] for s in steps], 1, pool, 16, lambda n: None,
                             None, True, True)
            started = time.perf_counter()
            rows = []
            for step in steps:
                actions = recording.turns[step].decisions["p1"].legal_actions
                tasks = [_Task(step)] + [_Task(step, "p1", a) for a in actions]
                done = await asyncio.gather(*[player.many(t, range(k)) for t in tasks])
                count += k * len(tasks)
                played = recording.turns[step].decisions["p1"].action
                assert played is not None  # a recorded decision was made
                rows.append({"step": step, "played": played.model_dump(),
                             "actions": [a.model_dump() for a in actions],
                             "win": [o.winner for o in done[0]], "options": [[o.winner for o in d] for d in done[1:]]})
            await player.close()
            cached(cache, number).write_text(json.dumps({"id": recording.id, "policy": spec, "k": k,
                                                         "decisions": rows}))
            print(f"battle {number}: {len(steps)} decisions, {time.perf_counter() - started:.0f} s", file=sys.stderr,
                  flush=True)
    return count


def load(cache: Path, numbers: Sequence[int], spec: str, k: int) -> list[dict[str, Any]]:
    """The kept battles ``numbers`` (each checked to hold ``k`` rollouts of ``spec``)."""
    battles = []
    for number in numbers:
        data = json.loads(cached(cache, number).read_text())
        if (data.get("policy"), data.get("k")) != (spec, k):
            raise SystemExit(f"{cached(cache, number)} holds {data.get('k')} rollouts of {data.get('policy')}, "
                             f"not {k} of {spec}: use another --cache")
        battles.append(data)
    return battles


def _outcomes(winners: list[str | None]) -> list[Outcome]:
    return [Outcome(w, "", []) for w in winners]


async def replay(row: dict[str, Any], k: int, batch: int, spread: float | None = None,
                 z: float = Z95) -> dict[str, Any]:
    """Racing over the kept winners, against uniform K over all of them."""
    actions = [ActionRecord(**a) for a in row["actions"]]
    played = ActionRecord(**row["played"])
    kept = [_outcomes(o) for o in row["options"]]

    async def fetch(i: int, numbers: range) -> list[Outcome]:
        return [kept[i][n] for n in numbers]

    raced, live = await race(fetch, len(actions), "p1", k, batch, MARGIN if spread is None else spread, z)
    uniform = option_table("p1", [(a, estimate(o, "p1")) for a, o in zip(actions, kept)], played, MARGIN)
    early = [a for a, o, alive in zip(actions, raced, live) if not alive and len(o) < k]
    racing = option_table("p1", [(a, estimate(o, "p1")) for a, o in zip(actions, raced)], played, MARGIN, early)
    win_all = _outcomes(row["win"])

    async def fetch_win(numbers: range) -> list[Outcome]:
        return [win_all[n] for n in numbers]

    win = await settle(fetch_win, k, batch, uniform_width(k))
    top = uniform.options[0].estimate
    near = {(o.action.action, o.action.choice) for o in uniform.options if o.estimate.high >= top.low}
    won = estimate(win, "p1")
    return {"same_best": uniform.options[0].action == racing.options[0].action,
            "near_best": (racing.options[0].action.action, racing.options[0].action.choice) in near,
            "same_mistake": uniform.mistake == racing.mistake, "mistake": uniform.mistake,
            "options": len(actions), "uniform_rollouts": k * len(actions),
            "racing_rollouts": sum(len(o) for o in raced), "win_rollouts": len(win),
            "win_gap": abs(won.value - estimate(win_all, "p1").value), "win_width": won.high - won.low}


def late_wins(rows: list[dict[str, Any]], k: int) -> dict[str, int]:
    """How often an option with no win in its first quarter of rollouts (16 of 64) wins one of the rest: how
    settled a 0 of 16 is."""
    first = k // 4
    cold = [o for row in rows for o in row["options"] if not any(w == "p1" for w in o[:first])]
    return {"first": first, "rest": k - first, "cold": len(cold),
            "late": sum(any(w == "p1" for w in o[first:]) for o in cold)}


def oracle_prefix(row: dict[str, Any], k: int) -> tuple[int, int]:
    """The fewest rollouts any rule that stops all of a decision's options together (in steps of 8) could spend and
    still give uniform K's best option and verdict: it knows the answer, so no real rule spends less. Returns
    (rollouts, uniform's)."""
    actions = [ActionRecord(**a) for a in row["actions"]]
    played = ActionRecord(**row["played"])

    def answer(n: int) -> tuple[ActionRecord, bool]:
        table = option_table("p1", [(a, estimate(_outcomes(o[:n]), "p1")) for a, o in zip(actions, row["options"])],
                             played, MARGIN)
        return table.options[0].action, table.mistake

    full = answer(k)
    step = min(8, k)
    first = next(n for n in [*range(step, k + 1, step), k] if answer(n) == full)
    return first * len(actions), k * len(actions)


def report(battles: list[dict[str, Any]], k: int, batch: int) -> dict[str, Any]:
    """Every racing rule of ``VARIANTS`` over the kept winners, against uniform K, and the oracle's floor."""
    rows = [row for data in battles for row in data["decisions"]]
    variants = []
    first: list[dict[str, Any]] = []
    for spread, z, label in VARIANTS:
        results = [asyncio.run(replay(row, k, batch, spread=spread, z=z)) for row in rows]
        first = first or results
        variants.append({"label": label, "same_best": sum(r["same_best"] for r in results),
                         "near_best": sum(r["near_best"] for r in results),
                         "same_mistake": sum(r["same_mistake"] for r in results),
                         "both": sum(r["same_best"] and r["same_mistake"] for r in results),
                         "uniform_rollouts": sum(r["uniform_rollouts"] for r in results),
                         "racing_rollouts": sum(r["racing_rollouts"] for r in results),
                         "win_rollouts": sum(r["win_rollouts"] for r in results)})
    spent, uniform = (sum(col) for col in zip(*(oracle_prefix(row, k) for row in rows))) if rows else (0, 0)
    return {"battles": [data["id"] for data in battles], "decisions": len(rows),
            "options": sum(r["options"] for r in first), "mistakes": sum(r["mistake"] for r in first),
            "win_gap_max": max((r["win_gap"] for r in first), default=0.0),
            "win_width_max": max((r["win_width"] for r in first), default=0.0), "target_width": uniform_width(k),
            "late": late_wins(rows, k), "variants": variants, "oracle": {"spent": spent, "uniform": uniform}}


def compare(pairs: list[tuple[dict[str, Any], dict[str, Any]]], k: int) -> str:
    """Two rollout policies' uniform-K verdicts at the same decisions (pairs of one battle's kept winners): best
    option, mistake, win probability."""
    same_best = same_mistake = n = 0
    gaps = []
    for a, b in pairs:
        for one, other in zip(a["decisions"], b["decisions"]):
            actions = [ActionRecord(**x) for x in one["actions"]]
            played = ActionRecord(**one["played"])
            tables = [option_table("p1", [(x, estimate(_outcomes(o), "p1")) for x, o in zip(actions, row["options"])],
                                   played, MARGIN) for row in (one, other)]
            same_best += tables[0].options[0].action == tables[1].options[0].action
            same_mistake += tables[0].mistake == tables[1].mistake
            gaps.append(abs(estimate(_outcomes(one["win"]), "p1").value - estimate(_outcomes(other["win"]), "p1").value))
            n += 1
    return (f"{n} decisions, uniform K = {k}: same best option {same_best}/{n}, same mistake "
            f"verdict {same_mistake}/{n}, win probability differs by {sum(gaps) / max(1, n):.3f} on average "
            f"(largest {max(gaps, default=0):.3f})")


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / max(1, whole):.0f}%)"


def render(result: harness.Result) -> str:
    r, p = result.results, result.params
    k, n = p["k"], r["decisions"]
    lines = ["| racing rule | same best option | best within uniform's best interval | same mistake verdict | both "
             f"(same best and verdict) | option rollouts vs uniform K = {k} | win-probability rollouts vs uniform |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    meets = []  # the rules that meet issue 48's goal: both verdicts at >= 95% of decisions, <= 1/3 of the rollouts
    for v in r["variants"]:
        raced, uniform = v["racing_rollouts"], v["uniform_rollouts"]
        lines.append(f"| {v['label']} | {share(v['same_best'], n)} | {v['near_best']}/{n} | "
                     f"{share(v['same_mistake'], n)} | {share(v['both'], n)} | "
                     f"{raced}/{uniform} = {raced / max(1, uniform):.2f} | "
                     f"{v['win_rollouts']}/{k * n} = {v['win_rollouts'] / max(1, k * n):.2f} |")
        if v["both"] >= 0.95 * n and raced <= uniform / 3:
            meets.append(v["label"])
    spent, uniform = r["oracle"]["spent"], r["oracle"]["uniform"]
    floor = spent / max(1, uniform)
    lines.append(f"| an oracle that knows uniform's answer and stops every option of a decision at the first common "
                 f"prefix (a multiple of 8) that gives it: a floor for rules that stop options together | – | – | – | "
                 f"{n}/{n} (100%) | {spent}/{uniform} = {floor:.2f} | – |")
    goal = ("The goal (both verdicts at ≥ 95% of decisions, ≤ 1/3 of the option rollouts) is met "
            + ("by: " + "; ".join(meets) + "." if meets else "by no rule here."))
    late = r["late"]
    first, last = p["battles"]
    smaller = ""
    if (first, last) != DOCUMENTED or k != 64 or p["policy"] != "heuristic":
        run = result.run
        # the rollouts this run played (a cache may have held some battles already): what its CPU time paid for
        played = r.get("played", r["variants"][0]["uniform_rollouts"] + k * n if r["variants"] else 0)
        cost = ""
        if played:
            per = run.cpu_s / played
            cores = run.cpu_s / max(run.wall_s, 1e-9)
            cost = (f", about {per * DOCUMENTED_ROLLOUTS / 60:.0f} CPU minutes at the {1000 * per:.0f} ms a rollout "
                    f"this run's {played} cost, {per * DOCUMENTED_ROLLOUTS / cores / 60:.0f} minutes at the "
                    f"{cores:.2f} of a core it had")
        smaller = (f" **A smaller run than the documented one** (`--battles {DOCUMENTED[0]} {DOCUMENTED[1]}`, 66 "
                   f"decisions, heuristic rollouts at K = 64: {DOCUMENTED_ROLLOUTS} rollouts{cost}): the figures "
                   "docs/analysis.md and the findings below quote are that run's, in this page at commit "
                   f"{DOCUMENTED_AT} (2026-12-05).")
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}` (battles {first} to {last - 1}; it may be run in pieces into one cache). The "
        f"{p['policy']} policy plays every rollout; racing is run over the kept winners of uniform K = {k} (exact: "
        "rollout *n* of a task is the same battle however it is scheduled), so the counts do not depend on the "
        "machine's load. Where rollouts go: in a near-decided decision every option reads 0–2 wins of 64, and "
        "uniform's best among them is set by a rare late win (counted below), so agreeing with it on the best option "
        "takes most of the 64. Racing is selectable (`--sampling racing`); uniform stays the default." + smaller,
        "",
        harness.describe(result),
        "",
        f"{n} decisions of {len(r['battles'])} battles, {r['options']} options, {r['mistakes']} mistakes at uniform "
        f"K = {k}; batch {p['batch']}. Win probabilities (racing): largest gap to uniform K = {k} "
        f"{r['win_gap_max']:.3f}, widest interval {r['win_width_max']:.3f} (target {r['target_width']:.3f}). Of the "
        f"{late['cold']} options with no win in their first {late['first']} rollouts, {late['late']} won one of their "
        f"next {late['rest']}. {goal} An oracle that knows uniform's answer and stops a decision's options together "
        f"spends {floor:.2f} (the last row).",
        "",
        *lines,
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, nargs=2, default=[0, 22], metavar=("FIRST", "END"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/racing"), help="the kept winners, a file a battle")
    parser.add_argument("--policy", default="heuristic", help="the rollout policy (heuristic or sim:…)")
    parser.add_argument("--k", type=int, default=64, help="rollouts of every option (uniform K)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--against", type=Path, default=None,
                        help="another cache of the same battles (another policy) to compare verdicts with")
    args = parser.parse_args(argv)
    numbers = range(*args.battles)
    if args.against is not None:
        both = [n for n in numbers if cached(args.against, n).exists()]
        print(compare([(a, json.loads(cached(args.against, n).read_text()))
                       for a, n in zip(load(args.cache, both, args.policy, args.k), both)], args.k))
        return 0
    with harness.measure() as run:
        played = asyncio.run(collect(numbers, args.cache, args.processes, args.policy, args.k))
        results = {**report(load(args.cache, numbers, args.policy, args.k), args.k, args.batch), "played": played}
    harness.finish(NAME, argv, {"battles": args.battles, "cache": str(args.cache), "policy": args.policy, "k": args.k,
                                "processes": args.processes, "batch": args.batch}, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
