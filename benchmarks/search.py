"""How strong is ``search`` at each level, and what does a decision cost? (issue 61)

    .venv/bin/python -m benchmarks.search [--pairs 4] [--formats gen9randombattle gen4randombattle]
        [--levels 1 2 3] [--against heuristic below] [--first 0] [--seats p1 p2]

For each format: ``search?level=L`` against ``heuristic`` and against the level below (``--against``), in paired
battles (each seed played twice, the seats swapped; ``--first`` skips the first seeds, so a long benchmark can be run
in pieces). One battle at a time, so a decision's time is its own: the search's simulator and the battle's share
the machine with nothing else of this benchmark's. A run's result holds a row a pairing (the scores, the search's
time per decision, the command, the machine's load); the section pools every run's rows (``POOLED``): each
pairing's score rate with its 95% Wilson interval over all its battles, and the time per decision (mean, median,
90th percentile, over the decisions where it had more than one option). The runs before this module existed were
made by ``scripts/bench_search.py`` (the same code) and are one result under ``benchmarks/results/`` (its note
says so).
"""

from __future__ import annotations

import asyncio
import re
import resource
import statistics
import sys
import time
from dataclasses import asdict
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.analysis import search as search_module
from wolfeclick.arena.stats import wilson_interval
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SimPool

NAME = "search"
HEADING = "## Search: strength per level against heuristic and against the level below (issue 61)"
POOLED = True
"""Run in pieces: the section pools every run's rows (``harness.pooled``)."""
FORMATS = ("gen9randombattle", "gen4randombattle")
SEED_BASE = 610_000
"""Seeds the ladder is not built from (its own start elsewhere)."""
FIRST_LEVELS = {1: {"worlds": 1, "rollouts": 2, "horizon": 1}, 2: {"worlds": 2, "rollouts": 6, "horizon": 2},
                3: {"worlds": 4, "rollouts": 16, "horizon": 4}}
"""What each level was before runs recorded it (the rows without ``budgets``): levels 2 and 3 changed on
2026-12-06 (HP-only value, no terastallizing, fewer worlds and rollouts); level 1 did not."""


BASELINES_FIXED = "2026-12-06 22:06 UTC"
"""When the baselines began to play poke-env's own choice (c29b847, landed in af1d6d6): before it, about one of
their decisions in thirty was a seeded random legal action (docs/search.md), so a run against ``heuristic`` before
this time played a weaker opponent and is not pooled with the runs after it."""


def budget_of(spec: str, row: dict[str, Any]) -> dict[str, Any] | None:
    """The budget a ``search?level=N`` spec played with in ``row`` (None for any other policy)."""
    if not spec.startswith("search?level="):
        return None
    level = int(spec.split("=")[1])
    recorded = (row.get("budgets") or {}).get(spec)
    defaults = {"value": "hp", "tera": False, "policy": "heuristic", "foe_policy": "heuristic"}
    if recorded is not None:
        return {**defaults, **recorded}  # runs before a field existed played its default
    return {**FIRST_LEVELS[level], **defaults}


def label(spec: str, row: dict[str, Any]) -> str:
    """``spec`` as the report names it: as is when it played today's level, else with the budget it had."""
    budget = budget_of(spec, row)
    if budget is None:
        if spec in ("heuristic", "maxdamage") and row.get("when", BASELINES_FIXED) < BASELINES_FIXED:
            return f"{spec} (before c29b847: its seeded fallbacks)"
        return spec
    level = int(spec.split("=")[1])
    if budget == asdict(search_module.LEVELS[level]):
        return spec
    rollouts = budget["policy"] if budget["policy"] == budget["foe_policy"] else \
        f"{budget['policy']} (own) / {budget['foe_policy']} (foe)"
    return (f"{spec} (before: {budget['worlds']} worlds × {budget['rollouts']} rollouts, horizon "
            f"{budget['horizon']}, {budget['value']} value{', tera' if budget['tera'] else ''}, sim:{rollouts} "
            "rollouts)")


def searched_ms(recording: Recording, side: str) -> list[float]:
    """The latency of each decision of ``side`` where the search had more than one option."""
    return [float(t.decisions[side].latency_ms or 0.0) for t in recording.turns
            if side in t.decisions and isinstance((t.decisions[side].policy_info or {}).get("search"), dict)]


def search_cpu() -> tuple[float, float]:
    """CPU seconds the search has used so far: its own simulators' (worlds and rollouts) and its event-loop thread's
    (sampling, building requests, reading replies); 0 before its first decision."""
    python, simulators = search_module._ENGINE.cpu()
    return simulators, python


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def pairing(pool: SimPool, fmt: str, a: str, b: str, pairs: int, times: dict[str, list[float]],
                  first: int = 0, cpu: list[tuple[float, float]] | None = None,
                  seats: tuple[str, ...] = ("p1", "p2")) -> list[float]:
    """``a``'s score in each of ``2 * pairs`` battles against ``b``, seeds shared by each pair, seats swapped;
    ``cpu`` gets the search's CPU seconds of each battle (its simulators', its Python thread's)."""
    scores = []
    for n in range(first, first + pairs):
        for seat in seats:
            policies = (make_policy(a), make_policy(b)) if seat == "p1" else (make_policy(b), make_policy(a))
            before = search_cpu()
            recording = await play_battle(*policies, format_id=fmt, seed=SEED_BASE + n, process=pool.pick())
            if cpu is not None:
                after = search_cpu()
                cpu.append((after[0] - before[0], after[1] - before[1]))
            winner = recording.result.winner
            scores.append(1.0 if winner == seat else 0.5 if winner is None else 0.0)
            print(f"  {fmt} seed {SEED_BASE + n} {a} as {seat} v {b}: {scores[-1]}", file=sys.stderr, flush=True)
            for side, spec in zip(("p1", "p2"), (recording.players["p1"].policy, recording.players["p2"].policy)):
                times.setdefault(spec, []).extend(searched_ms(recording, side))
    return scores


def score_cell(scores: list[float]) -> str:
    low, high = wilson_interval(sum(scores), len(scores))
    return f"{sum(scores) / len(scores):.2f} [{low:.2f}, {high:.2f}]"


def time_cell(ms: list[float]) -> str:
    if not ms:
        return "–"
    p90 = harness.percentile(ms, 0.9)
    return f"{statistics.mean(ms) / 1000:.2f} / {statistics.median(ms) / 1000:.2f} / {p90 / 1000:.2f} s ({len(ms)})"


async def run(formats: list[str], levels: list[int], against: list[str], pairs: int, first: int,
              command: str, seats: tuple[str, ...] = ("p1", "p2")) -> list[dict[str, Any]]:
    """Every pairing's row (printed as it ends)."""
    rows: list[dict[str, Any]] = []
    async with SimPool(1) as pool:
        for fmt in formats:
            for level in levels:
                a = f"search?level={level}"
                opponents = (["heuristic"] if "heuristic" in against else []) + \
                    ([f"search?level={level - 1}"] if "below" in against and level > 1 else [])
                for b in opponents:
                    load = open("/proc/loadavg").read().split()[0]
                    busy0, own0, children0, started = harness.machine_busy(), time.process_time(), children_cpu(), \
                        time.perf_counter()
                    sims0 = pool.cpu() + search_cpu()[0]  # the simulators live on: not reaped children yet
                    times: dict[str, list[float]] = {}
                    cpu: list[tuple[float, float]] = []
                    scores = await pairing(pool, fmt, a, b, pairs, times, first, cpu, seats)
                    end, other = harness.other_work(busy0, own0, children_cpu() - children0 + pool.cpu()
                                                    + search_cpu()[0] - sims0, started)
                    alone = not b.startswith("search")  # two searches share the simulators: no CPU of either's own
                    row = {"format": fmt, "a": a, "b": b, "first": first, "seats": list(seats), "scores": scores,
                           "wall_s": round(time.perf_counter() - started, 1), "times_ms": times,
                           "search_cpu_s": round(sum(c[0] for c in cpu), 2) if alone else None,
                           "search_py_cpu_s": round(sum(c[1] for c in cpu), 2) if alone else None,
                           "search_simulators": search_module.SIMULATORS,
                           "budgets": {spec: asdict(search_module.LEVELS[int(spec.split("=")[1])])
                                       for spec in (a, b) if spec.startswith("search?level=")},
                           "load": [load, end], "other_work": round(other, 2), "command": command,
                           "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
                    rows.append(row)
                    print(f"{fmt} {a} v {b}: {score_cell(scores)} ({len(scores)} battles, "
                          f"{row['wall_s']} s, other work {other:.2f} cores)", flush=True)
    return rows


def seed_range(row: dict[str, Any]) -> str:
    seats = row.get("seats", ["p1", "p2"])
    last = SEED_BASE + row["first"] + len(row["scores"]) // len(seats) - 1
    where = "" if len(seats) == 2 else f" ({row['a']} as {seats[0]} only)"
    first = SEED_BASE + row["first"]
    return (f"{first}" if last == first else f"{first}–{last}") + where


def report(rows: list[dict[str, Any]], cores: int | None) -> str:
    """The section's tables, pooled from every run's ``rows``, after its first two lines (heading, commands)."""
    pairings: dict[tuple[str, str, str], list[float]] = {}
    times: dict[tuple[str, str], list[float]] = {}
    walls: dict[tuple[str, str, str], list[float]] = {}
    rows = [{**row, "a": label(row["a"], row), "b": label(row["b"], row),
             "times_ms": {label(spec, row): ms for spec, ms in row["times_ms"].items()}} for row in rows]
    for row in rows:
        pairings.setdefault((row["format"], row["a"], row["b"]), []).extend(row["scores"])
        for spec, ms in row["times_ms"].items():
            times.setdefault((row["format"], spec), []).extend(ms)
            engine = str(row.get("search_simulators", 1)) + (" (world in each)" if row.get("world_copies") else "")
            walls.setdefault((row["format"], spec, engine), []).extend(ms)
    table = ["| format | pairing (first scores) | battles | score rate [95%] |", "| --- | --- | --- | --- |"]
    table += [f"| {fmt} | {a} v {b} | {len(scores)} | {score_cell(scores)} |"
              for (fmt, a, b), scores in sorted(pairings.items())]
    cpu: dict[tuple[str, str, str], list[float]] = {}  # simulators' seconds, decisions; Python's seconds, decisions
    for row in rows:
        if row.get("search_cpu_s") is not None and row["times_ms"].get(row["a"]) and not row.get("world_copies"):
            spent = cpu.setdefault((row["format"], row["a"], str(row.get("search_simulators", 1))), [0.0] * 4)
            spent[0] += row["search_cpu_s"]
            spent[1] += len(row["times_ms"][row["a"]])
            if row.get("search_py_cpu_s") is not None:
                spent[2] += row["search_py_cpu_s"]
                spent[3] += len(row["times_ms"][row["a"]])

    def cpu_cell(fmt: str, spec: str, engine: str) -> str:
        spent = cpu.get((fmt, spec, engine), [0.0, 0.0, 0.0, 0.0])
        if not spent[1]:
            return "–"
        sims = spent[0] / spent[1]
        if not spent[3]:
            return f"{sims:.2f} s + not measured"
        python = spent[2] / spent[3]
        return f"{sims:.2f} + {python:.3f} = **{sims + python:.2f} s** ({spent[3]:.0f})"

    timing = ["| format | policy | simulators | wall per decision: mean / median / p90 (decisions) | the search's CPU "
              "per decision: simulators + Python = total (decisions with Python measured; against heuristic) |",
              "| --- | --- | --- | --- | --- |"]
    timing += [f"| {fmt} | {spec} | {n} | {time_cell(ms)} | {cpu_cell(fmt, spec, n)} |"
               for (fmt, spec, n), ms in sorted(walls.items()) if ms]
    runs = ["| run (ended) | pairing | seeds | battles | wall | load average (start → end) | other work (cores) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    runs += [f"| {row['when']} | {row['format']} {row['a']} v {row['b']} | {seed_range(row)} | "
             f"{len(row['scores'])} | {row['wall_s']:.0f} s | "
             f"{row['load'][0]} → {row['load'][1]} | {row['other_work']:.2f} |" for row in rows]
    goals = ["| goal (issue 61) | format | measured | verdict |", "| --- | --- | --- | --- |"]
    for fmt in sorted({row["format"] for row in rows}):
        top = max((int(a.split("=")[1]) for f, a, b in pairings if f == fmt and b == "heuristic" and "(" not in a),
                  default=None)
        if top is not None:
            scores = pairings[(fmt, f"search?level={top}", "heuristic")]
            low, _ = wilson_interval(sum(scores), len(scores))
            rate = sum(scores) / len(scores)
            verdict = "met" if rate >= 0.85 and low > 0.80 else "not shown" if len(scores) < 200 else "missed"
            goals.append(f"| level {top} beats heuristic ≥ 85%, interval above 80%, ≥ 200 battles | {fmt} | "
                         f"{score_cell(scores)} over {len(scores)} | {verdict}"
                         + (" (too few battles)" if len(scores) < 200 else "") + " |")
        for (f, a, b), scores in sorted(pairings.items()):
            if f == fmt and b.startswith("search") and "(" not in a + b:
                low, _ = wilson_interval(sum(scores), len(scores))
                few = len(scores) < 200
                verdict = ("not shown (interval above ½, but too few battles)" if few and low > 0.5 else
                           "not shown (too few battles)" if few else "met" if low > 0.5 else "missed")
                goals.append(f"| {a} beats {b} | {fmt} | {score_cell(scores)} over {len(scores)} | {verdict} |")
        for level, limit in ((1, 0.2), (top, 2.0)):
            spec = f"search?level={level}"
            if level is None or not times.get((fmt, spec)):
                continue
            newest = max(n for f, s, n in walls if f == fmt and s == spec and "(" not in n)
            median = statistics.median(walls[(fmt, spec, newest)]) / 1000
            spent = cpu.get((fmt, spec, newest), [0.0, 0.0, 0.0, 0.0])
            total = spent[0] / spent[1] + (spent[2] / spent[3] if spent[3] else 0.0) if spent[1] else None
            per = (f"; CPU {total:.2f} s a decision" + ("" if spent[3] else " (its simulators')")) \
                if total is not None else ""
            if median <= limit:
                verdict = "met"
            elif total is not None and total <= limit:
                verdict = "met in CPU (what a decision takes with a free core); wall here over it (shared machine)"
            else:
                verdict = "missed"
            goals.append(f"| level {level} decides in ≤ {limit:g} s | {fmt} | median wall {median:.2f} s with "
                         f"{newest} simulator(s){per} | {verdict} |")
    return (f"on {cores} cores, one battle at a time; each seed played twice with the seats swapped. "
            "The runs below were made in pieces (each under 10 minutes) and are pooled here.\n\n"
            + "\n".join(table) + "\n\n" + "\n".join(timing) + "\n\n"
            + "A decision's wall time is what the runner measured around `decide` (*simulators*: how many simulator "
            "processes the search spread its worlds and rollouts over; the runs before 12:05 UTC had one; *world in each*: the "
            "level-1 runs of 12:59-13:08 UTC, whose one world was built in both processes, left out of the CPU). Its CPU "
            "is what does not depend on the machine's load: its simulators' (Node: building worlds, playing "
            "rollouts) plus its Python event-loop thread's (sampling, building requests, reading replies; measured "
            "from 12:05 UTC on), per decision, in the pairings against `heuristic` only (two searches share the "
            "simulators). With a free core a decision takes about that CPU in wall time (less with two free cores: "
            "the rollouts run in two processes at once); here the search got a fraction of one (other work "
            "below).\n\n"
            + "The runs of level 3 from 15:16 UTC on 2026-12-06 ran two at a time, one per format, each "
            "with its own two simulators: their wall time (and likely their CPU) per decision is higher than one at "
            "a time would be. So did the runs of levels 2 and 3 with `sim:simple` rollouts (from 18:00 UTC), with a "
            "level-2-against-level-1 run beside them (three at a time), on a machine loaded by other work.\n\n"
            + "\n".join(goals) + "\n\n" + "\n".join(runs) + "\n\n"
            "Other work: the machine's busy CPU less this benchmark's own processes', in cores, over each run; the "
            "runs that ended before 09:47 UTC counted the benchmark's own two simulators in it too (at most about "
            "one core between them).")


def render_pool(results: list[harness.Result]) -> str:
    """The section from every run so far (``results``, oldest first): the commands, the machine, the tables."""
    rows = [row for result in results for row in result.results["rows"]]
    commands = sorted({re.sub(r"--first \d+", "--first F", re.sub(r"--pairs \d+", "--pairs P",
                                                                   row["command"].split(" --seats")[0]))
                       for row in rows})
    newest = results[-1]
    return (f"{HEADING}\n\n"
            "`.venv/bin/python -m benchmarks.search --pairs P --first F --formats … --levels … --against … "
            "[--seats …]` runs a piece; every run's rows are pooled below. The pieces were run as:\n\n"
            + "\n".join(f"`{c}`" for c in commands)
            + "\n\n(`scripts/bench_search.py` is this benchmark before it moved here: the same code and options.)\n\n"
            + f"{harness.describe(newest)} (The newest piece; every piece's load and other work are in the table of "
            "runs below.)\n\n"
            + report(rows, newest.machine.get("cores")))


def render(result: harness.Result) -> str:
    """One run's rows alone (the section pools every run: ``render_pool``)."""
    return render_pool([result])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4, help="seeds per pairing (each played twice)")
    parser.add_argument("--first", type=int, default=0, help="skip this many seeds (to run a benchmark in pieces)")
    parser.add_argument("--formats", nargs="+", default=list(FORMATS))
    parser.add_argument("--levels", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--against", nargs="+", choices=("heuristic", "below"), default=["heuristic", "below"])
    parser.add_argument("--seats", nargs="+", choices=("p1", "p2"), default=["p1", "p2"],
                        help="the seats the first policy takes (one: half a pair, to fit a slow pairing in a run)")
    args = parser.parse_args(argv)
    command = (".venv/bin/python -m benchmarks.search --pairs {} --first {} --formats {} --levels {} --against {} "
               "--seats {}".format(args.pairs, args.first, " ".join(args.formats), " ".join(map(str, args.levels)),
                                   " ".join(args.against), " ".join(args.seats)))
    with harness.measure() as measured:
        rows = asyncio.run(run(args.formats, args.levels, args.against, args.pairs, args.first, command,
                               tuple(args.seats)))
    harness.finish(NAME, argv, {"pairs": args.pairs, "first": args.first, "formats": args.formats,
                                "levels": args.levels, "against": args.against, "seats": args.seats},
                   {"rows": rows}, measured, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
