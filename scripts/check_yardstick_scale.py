"""Does the gauntlet read the shipped ladder's scale back? (issue 61, "Scale")

For each rung named (default ``maxdamage`` and ``heuristic``) and each format the shipped table rates, run the
gauntlet (``wolfeclick gauntlet``'s library call: adaptive rungs, seat-swapped pairs, stop at ``--width`` or
``--max-battles``) on a seed whose battles the ladder did not play (checked: no battle seed of any step is one of
the ladder's), and compare the rating it finds with the rung's shipped interval. Prints a Markdown table; ``--write``
puts it in docs/yardstick.md (its section "## Does the gauntlet read the scale back?"). Every battle goes to a
fresh temporary results folder, removed at the end. Exit 1 when a rating falls outside its rung's interval.

    nice -n 10 .venv/bin/python -m scripts.check_yardstick_scale --seed 1 --concurrency 2 --write
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from scripts.benchdoc import machine_busy, other_work, write_section  # noqa: E402

HEADING = "## Does the gauntlet read the scale back?"
DOC = ROOT / "docs" / "yardstick.md"


def main() -> int:
    from wolfeclick.arena.gauntlet import ladder_seeds, run_gauntlet, step_seed
    from wolfeclick.arena.intervals import rating_text
    from wolfeclick.arena.schedule import pair_seeds
    from wolfeclick.arena.yardstick import load_ladder
    from wolfeclick.arena.yardstick_plan import DEFAULT_MAX_BATTLES, DEFAULT_WIDTH

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rungs", default="maxdamage,heuristic")
    parser.add_argument("--formats", default=None, help="comma-separated (default: every format of the table)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--width", type=float, default=DEFAULT_WIDTH)
    parser.add_argument("--max-battles", type=int, default=DEFAULT_MAX_BATTLES)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a `timeout` still removes the temporary results

    ladder = load_ladder()
    rows = []
    busy0, own0, started = machine_busy(), time.process_time(), time.perf_counter()
    load0 = open("/proc/loadavg").read().split()[0]
    inside_all = True
    with tempfile.TemporaryDirectory(prefix="yardstick-scale-") as tmp:
        for format_id, table in ladder.formats.items():
            if args.formats and format_id not in args.formats.split(","):
                continue
            shipped = {r.spec: r for r in table.rungs}
            for spec in args.rungs.split(","):
                t0 = time.perf_counter()
                result = asyncio.run(run_gauntlet(spec, ladder, format_id, Path(tmp), width=args.width,
                                                  max_battles=args.max_battles, seed=args.seed,
                                                  concurrency=args.concurrency, keep_recordings=False))
                wall = time.perf_counter() - t0
                played = {s for k, step in enumerate(result.steps)
                          for s in pair_seeds(step_seed(args.seed, k), step.battles // 2)}
                overlap = len(played & ladder_seeds(table))
                rung = shipped[spec]
                low = rung.low if rung.low is not None else float("-inf")
                high = rung.high if rung.high is not None else float("inf")
                inside = low <= result.estimate.rating <= high
                inside_all &= inside and overlap == 0
                opponents = ", ".join(f"{r} ×{n}" for r, (n, _) in sorted(result.record.items()))
                rows.append(f"| {format_id} | {spec} | {rating_text(rung.rating, low, high, rung.open)} | "
                            f"{result.estimate.text()} | {result.estimate.battles} ({opponents}) | "
                            f"{'yes' if inside else '**no**'} | {overlap} | {wall:.0f} s |")
                print(rows[-1], flush=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    load1, other = other_work(busy0, own0, children.ru_utime + children.ru_stime, started)
    text = "\n".join([
        HEADING, "",
        "`python -m scripts.check_yardstick_scale` runs the gauntlet (`wolfeclick gauntlet`) of rungs of the shipped "
        f"reference ladder on gauntlet seed {args.seed} (none of its battle seeds is one of the ladder's: column "
        "'shared seeds'), width {width:g}, cap {cap}, and compares the rating it finds with the rung's shipped "
        "95% interval. The gauntlet never plays the rung itself, so it rates it against the others.".format(
            width=args.width, cap=args.max_battles), "",
        "| format | rung | shipped rating [95%] | gauntlet rating [95%] | battles (against) | inside | shared seeds "
        "| wall |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |", *rows, "",
        f"Machine: 2 cores, shared; load average {load0} at the start and {load1} at the end, other work "
        f"{other:.2f} of a core on average (the machine's busy CPU less this script's and its simulators'). "
        f"Command: `nice -n 10 .venv/bin/python -m scripts.check_yardstick_scale --seed "
        f"{args.seed} --concurrency {args.concurrency} --rungs {args.rungs}"
        f"{' --formats ' + args.formats if args.formats else ''}"
        f"{f' --width {args.width:g}' if args.width != DEFAULT_WIDTH else ''}"
        f"{f' --max-battles {args.max_battles}' if args.max_battles != DEFAULT_MAX_BATTLES else ''}`. "
        f"Simulator {ladder.simulator}, {ladder.poke_env}.",
    ])
    print(text)
    if args.write:
        write_section(HEADING, text, DOC)
    return 0 if inside_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
