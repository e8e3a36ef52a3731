"""Racing against uniform K (issue 48, item 1): the same verdicts at a fraction of the rollouts?

    .venv/bin/python scripts/bench_racing.py collect --battles 0 4 --cache /tmp/racing   # repeat for 4 8, 8 10
    .venv/bin/python scripts/bench_racing.py report --cache /tmp/racing [--batch 8] [--doc]
    .venv/bin/python scripts/bench_racing.py live [--processes 2] [--doc]

``collect`` plays seeded gen9randombattle battles (p1 random or maxdamage, so that there are mistakes to find,
against heuristic p2), picks three p1 decisions of each, and plays K = 64 rollouts (heuristic both sides) of the
decision's win probability and of every legal option, keeping each rollout's winner in order. Rollout *n* of a
task is the same battle however the analysis schedules it (shared luck, seeded policies; tested byte for byte), so
``report`` can run racing's rule (``wolfeclick.analysis.core.race`` and ``settle``, the very functions the analysis
awaits) over those kept winners and get exactly what a live racing analysis gets, and compares its best option,
mistake verdict and win probability with uniform K = 64. ``live`` times one decision's options and one battle's
win-probability pass with racing on the real simulator.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.benchdoc import write_section  # noqa: E402
from wolfeclick.analysis.core import _Player, _Task, estimate, option_table, race, settle  # noqa: E402
from wolfeclick.analysis.racing import uniform_width  # noqa: E402
from wolfeclick.analysis.rollout import Outcome  # noqa: E402
from wolfeclick.arena.stats import Z95  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.runner import play_battle  # noqa: E402
from wolfeclick.sim.process import SimPool  # noqa: E402

K = 64
HEADING = "## Analysis by racing against uniform K = 64: verdicts and rollouts (issue 48)"


async def battle(number: int):  # noqa: ANN201
    p1 = "random" if number % 2 == 0 else "maxdamage"
    return await play_battle(make_policy(p1), make_policy("heuristic"), format_id="gen9randombattle",
                             seed=100 + number)


def picks(recording) -> list[int]:  # noqa: ANN001
    """Three p1 decisions with a choice to make, spread over the battle."""
    steps = [t.index for t in recording.turns if "p1" in t.decisions and len(t.decisions["p1"].legal_actions) > 1]
    return sorted({steps[int(len(steps) * f)] for f in (0.2, 0.5, 0.8)}) if steps else []


async def collect(first: int, last: int, cache: Path, processes: int, spec: str = "heuristic") -> None:
    from wolfeclick.analysis.sim_rollout import rollout_policy

    cache.mkdir(parents=True, exist_ok=True)
    policy = rollout_policy(spec)
    async with SimPool(processes) as pool:
        for number in range(first, last):
            recording = await battle(number)
            steps = picks(recording)
            player = _Player(recording, policy, [recording.turns[s] for s in steps], 1, pool, 16, lambda n: None,
                             None, True, True)
            started = time.perf_counter()
            rows = []
            for step in steps:
                actions = recording.turns[step].decisions["p1"].legal_actions
                tasks = [_Task(step)] + [_Task(step, "p1", a) for a in actions]
                done = await asyncio.gather(*[player.many(t, range(K)) for t in tasks])
                rows.append({"step": step, "played": recording.turns[step].decisions["p1"].action.model_dump(),
                             "actions": [a.model_dump() for a in actions],
                             "win": [o.winner for o in done[0]], "options": [[o.winner for o in d] for d in done[1:]]})
            await player.close()
            (cache / f"battle-{number}.json").write_text(json.dumps({"id": recording.id, "decisions": rows}))
            print(f"battle {number}: {len(steps)} decisions, {time.perf_counter() - started:.0f} s, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)


def _outcomes(winners: list[str | None]) -> list[Outcome]:
    return [Outcome(w, "", []) for w in winners]


async def replay(row: dict, batch: int, margin: float = 0.15, spread: float | None = None,  # type: ignore[type-arg]
                 z: float = Z95) -> dict:
    """Racing over the kept winners, against uniform K over all of them."""
    from wolfeclick.battle.schema import ActionRecord

    actions = [ActionRecord(**a) for a in row["actions"]]
    played = ActionRecord(**row["played"])
    kept = [_outcomes(o) for o in row["options"]]

    async def fetch(i: int, numbers: range) -> list[Outcome]:
        return [kept[i][n] for n in numbers]

    raced, live = await race(fetch, len(actions), "p1", K, batch, margin if spread is None else spread, z)
    uniform = option_table("p1", [(a, estimate(o, "p1")) for a, o in zip(actions, kept)], played, margin)
    early = [a for a, o, alive in zip(actions, raced, live) if not alive and len(o) < K]
    racing = option_table("p1", [(a, estimate(o, "p1")) for a, o in zip(actions, raced)], played, margin, early)
    win_all = _outcomes(row["win"])

    async def fetch_win(numbers: range) -> list[Outcome]:
        return [win_all[n] for n in numbers]

    win = await settle(fetch_win, K, batch, uniform_width(K))
    top = uniform.options[0].estimate
    near = {(o.action.action, o.action.choice) for o in uniform.options if o.estimate.high >= top.low}
    return {"same_best": uniform.options[0].action == racing.options[0].action,
            "near_best": (racing.options[0].action.action, racing.options[0].action.choice) in near,
            "same_mistake": uniform.mistake == racing.mistake, "mistake": uniform.mistake,
            "options": len(actions), "uniform_rollouts": K * len(actions),
            "racing_rollouts": sum(len(o) for o in raced), "win_rollouts": len(win),
            "win_gap": abs(estimate(win, "p1").value - estimate(win_all, "p1").value),
            "win_width": (lambda e: e.high - e.low)(estimate(win, "p1"))}


def late_wins(rows: list[dict]) -> str:  # type: ignore[type-arg]
    """How often an option with no win in its first 16 rollouts wins one of its next 48: how settled a 0 of 16 is."""
    cold = [o for row in rows for o in row["options"] if not any(w == "p1" for w in o[:16])]
    late = sum(any(w == "p1" for w in o[16:]) for o in cold)
    return f"Of the {len(cold)} options with no win in their first 16 rollouts, {late} won one of their next 48."


def oracle_prefix(row: dict) -> tuple[int, int]:  # type: ignore[type-arg]
    """The fewest rollouts any rule that stops all of a decision's options together (in steps of 8) could spend and
    still give uniform K's best option and verdict: it knows the answer, so no real rule spends less. Returns
    (rollouts, uniform's)."""
    from wolfeclick.battle.schema import ActionRecord

    actions = [ActionRecord(**a) for a in row["actions"]]
    played = ActionRecord(**row["played"])

    def answer(n: int) -> tuple:  # type: ignore[type-arg]
        table = option_table("p1", [(a, estimate(_outcomes(o[:n]), "p1")) for a, o in zip(actions, row["options"])],
                             played, 0.15)
        return table.options[0].action, table.mistake

    full = answer(K)
    first = next(n for n in range(8, K + 1, 8) if answer(n) == full)
    return first * len(actions), K * len(actions)


VARIANTS = ((None, Z95, "the analysis' rule: 95% intervals, the race ends in a band as wide as the margin"),
            (0.0, Z95, "95% intervals, no band"),
            (0.2, Z95, "95% intervals, band 0.2"),
            (0.3, Z95, "95% intervals, band 0.3"),
            (0.25, 1.0, "aggressive: 68% intervals stop options, band 0.25"))


def report(cache: Path, batch: int) -> str:
    rows = [row for path in sorted(cache.glob("battle-*.json")) for row in json.loads(path.read_text())["decisions"]]
    lines = ["| racing rule | same best option | best within uniform's best interval | same mistake verdict | both "
             "(same best and verdict) | option rollouts vs uniform K = 64 | win-probability rollouts vs uniform |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    summary = ""
    meets = []  # the rules that meet issue 48's goal: both verdicts at >= 95% of decisions, <= 1/3 of the rollouts
    for spread, z, label in VARIANTS:
        results = [asyncio.run(replay(row, batch, spread=spread, z=z)) for row in rows]
        n = len(results)
        best = sum(r["same_best"] for r in results)
        verdict = sum(r["same_mistake"] for r in results)
        both = sum(r["same_best"] and r["same_mistake"] for r in results)
        uniform = sum(r["uniform_rollouts"] for r in results)
        raced = sum(r["racing_rollouts"] for r in results)
        win = sum(r["win_rollouts"] for r in results)
        near = sum(r["near_best"] for r in results)
        lines.append(f"| {label} | {best}/{n} ({100 * best / n:.0f}%) | {near}/{n} | {verdict}/{n} "
                     f"({100 * verdict / n:.0f}%) | "
                     f"{both}/{n} ({100 * both / n:.0f}%) | {raced}/{uniform} = {raced / uniform:.2f} | "
                     f"{win}/{K * n} = {win / (K * n):.2f} |")
        if both >= 0.95 * n and raced <= uniform / 3:
            meets.append(label)
        if spread is None:
            summary = (f"{n} decisions of {len({path for path in cache.glob('battle-*.json')})} battles, "
                       f"{sum(r['options'] for r in results)} options, {sum(r['mistake'] for r in results)} "
                       f"mistakes at uniform K = {K}; batch {batch}. Win probabilities (racing): largest gap to "
                       f"uniform K = {K} {max(r['win_gap'] for r in results):.3f}, widest interval "
                       f"{max(r['win_width'] for r in results):.3f} (target {uniform_width(K):.3f}). "
                       + late_wins(rows))
    spent, uniform = (sum(col) for col in zip(*(oracle_prefix(row) for row in rows)))
    lines.append(f"| an oracle that knows uniform's answer and stops every option of a decision at the first common "
                 f"prefix (a multiple of 8) that gives it: a floor for rules that stop options together | – | – | – | "
                 f"{len(rows)}/{len(rows)} (100%) | {spent}/{uniform} = {spent / uniform:.2f} | – |")
    goal = (f"The goal (both verdicts at ≥ 95% of decisions, ≤ 1/3 of the option rollouts) is met by: "
            f"{'; '.join(meets)}." if meets else "The goal (both verdicts at ≥ 95% of decisions, ≤ 1/3 of the option "
            "rollouts) is met by no rule here.")
    return (summary + f" {goal} An oracle that knows uniform's answer and stops a decision's options together "
            f"spends {spent / uniform:.2f} (the last row).\n\n" + "\n".join(lines))


LIVE_HEADING = "## Analysis by racing, timed: one battle's win probabilities and one decision's options"


async def live(processes: int, decisions: int) -> str:
    """Time racing (and uniform K where affordable) on one ~30-decision battle, Python and simulator policies."""
    from scripts.bench_analysis import _sim_cpu, middle_step, pick_battle
    from scripts.benchdoc import machine_busy, other_work, other_work_note
    from wolfeclick.analysis.core import analyse
    from wolfeclick.analysis.sim_rollout import rollout_policy

    recording = await pick_battle(decisions)
    step = middle_step(recording)
    load = open("/proc/loadavg").read().split()[0]
    busy0, own0, started0, own_children = machine_busy(), time.process_time(), time.perf_counter(), 0.0
    rows = ["| rollout policy | sampling | measure | rollouts | wall | CPU: Python + simulators | CPU per rollout | "
            "load (1 min) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    runs = [("heuristic", "racing", False), ("sim:heuristic", "racing", False), ("sim:heuristic", "uniform", False),
            ("heuristic", "racing", True), ("heuristic", "uniform", True), ("sim:heuristic", "racing", True),
            ("sim:heuristic", "uniform", True)]
    async with SimPool(processes) as pool:
        for spec, sampling, options in runs:
            policy = rollout_policy(spec)
            extra = {"options": ("p1",), "at": [step], "steps": [step]} if options else {}
            started, cpu, sim = time.perf_counter(), time.process_time(), _sim_cpu(pool)
            analysis = await analyse(recording, policy, pool=pool, k=K, seed=1, sampling=sampling, **extra)
            wall = time.perf_counter() - started
            cpu, sim = time.process_time() - cpu, _sim_cpu(pool) - sim
            used = sum(d.win.rollouts + sum(o.estimate.rollouts for t in d.options.values() for o in t.options)
                       for d in analysis.decisions)
            what = (f"options of decision {step} ({len(recording.turns[step].decisions['p1'].legal_actions)}) and "
                    "its win probability" if options else f"win-probability pass, {len(recording.turns)} decisions")
            own_children += sim
            rows.append(f"| {spec} | {sampling} | {what} | {used} | {wall:.1f} s | {cpu:.1f} + {sim:.1f} s | "
                        f"{1000 * (cpu + sim) / used:.0f} ms | {os.getloadavg()[0]:.1f} |")
            print(rows[-1], flush=True)
    end, other = other_work(busy0, own0, own_children, started0)
    return (f"{LIVE_HEADING}\n\n`.venv/bin/python scripts/bench_racing.py live --processes {processes}` on "
            f"{os.cpu_count()} cores: the seeded gen9randombattle heuristic-vs-maxdamage battle of "
            f"{len(recording.turns)} decisions that `bench_analysis.py` uses, K = {K} (racing: the most any estimate "
            f"gets; batch 8; win probabilities stop at the width uniform K = {K} gives at one half, "
            f"{uniform_width(K):.3f}). {other_work_note((load, end), other)}. "
            "The rollout counts are exact, and the CPU seconds (this process, and the simulator processes from "
            "/proc) are the load-independent cost; with both cores free a pass takes about half its CPU seconds.\n\n"
            + "\n".join(rows) + "\n")


def compare(cache: Path, other: Path) -> str:
    """Two rollout policies' uniform-K verdicts at the same decisions: best option, mistake, win probability."""
    from wolfeclick.battle.schema import ActionRecord

    same_best = same_mistake = n = 0
    gaps = []
    for path in sorted(cache.glob("battle-*.json")):
        there = other / path.name
        if not there.exists():
            continue
        for mine, theirs in zip(json.loads(path.read_text())["decisions"], json.loads(there.read_text())["decisions"]):
            actions = [ActionRecord(**a) for a in mine["actions"]]
            played = ActionRecord(**mine["played"])
            tables = [option_table("p1", [(a, estimate(_outcomes(o), "p1")) for a, o in zip(actions, row["options"])],
                                   played, 0.15) for row in (mine, theirs)]
            same_best += tables[0].options[0].action == tables[1].options[0].action
            same_mistake += tables[0].mistake == tables[1].mistake
            gaps.append(abs(estimate(_outcomes(mine["win"]), "p1").value - estimate(_outcomes(theirs["win"]), "p1").value))
            n += 1
    return (f"{n} decisions, uniform K = {K}: same best option {same_best}/{n}, same mistake verdict "
            f"{same_mistake}/{n}, win probability differs by {sum(gaps) / max(1, n):.3f} on average "
            f"(largest {max(gaps, default=0):.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["collect", "report", "live"])
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--policy", default="heuristic", help="collect: the rollout policy (heuristic or sim:…)")
    parser.add_argument("--against", type=Path, default=None,
                        help="report: another cache of the same decisions (another policy) to compare with")
    parser.add_argument("--battles", type=int, nargs=2, default=[0, 10])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/racing"))
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--doc", action="store_true")
    args = parser.parse_args()
    if args.what == "collect":
        asyncio.run(collect(*args.battles, args.cache, args.processes, args.policy))
        return
    if args.what == "live":
        text = asyncio.run(live(args.processes, args.decisions))
        print(text)
        if args.doc:
            write_section(LIVE_HEADING, text)
        return
    line = compare(args.cache, args.against) if args.against else report(args.cache, args.batch)
    print(line, f"(load {os.getloadavg()[0]:.2f})")
    if args.doc and not args.against:
        write_section(HEADING, f"{HEADING}\n\n`.venv/bin/python scripts/bench_racing.py collect --battles 0 22` "
                      "(it may be run in pieces into one cache), then `report --doc`. The heuristic plays every "
                      "rollout; racing is run over the kept winners of uniform K = 64 (exact: rollout *n* of a task "
                      "is the same battle however it is scheduled). The counts do not depend on the machine's load "
                      f"(load average {os.getloadavg()[0]:.1f} when this was written). Where rollouts go: in a "
                      "near-decided decision every option reads 0–2 wins of 64, and uniform's best among them is set "
                      "by a rare late win (counted below), so agreeing with it on the best option takes most of the "
                      "64. Racing is selectable (`--sampling racing`); uniform stays the default."
                      f"\n\n{line}\n")


if __name__ == "__main__":
    main()
