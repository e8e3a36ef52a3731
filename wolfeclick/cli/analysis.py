"""``rescore`` and ``analyse``: ask a policy, or rollouts, about every decision of recorded battles."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from wolfeclick.battle.schema import MAX_SEED, MAX_TURNS, Recording
from wolfeclick.cli.options import CONCURRENCY, add_llm_options, bounded_int, llm_options
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.sides import SIDES


def add_rescore_parser(commands: argparse._SubParsersAction) -> None:
    rescore = commands.add_parser("rescore", help="ask a policy what it would have done at every recorded decision",
                                  description="Replay each recording from its own choices and ask --policy at every "
                                              "decision of --side; writes <out>/rescores/<id>/<policy>-<side>.json and "
                                              "prints agreement with the recorded choices.")
    rescore.add_argument("recordings", nargs="+", type=Path, help="recording files, or folders of them")
    rescore.add_argument("--policy", required=True, help="the policy spec to ask (e.g. preset:run3, llm:/path)")
    rescore.add_argument("--side", choices=list(SIDES), required=True)
    rescore.add_argument("--out", type=Path, default=None, help="recordings folder to store rescores in "
                                                                "(default: each recording's own folder)")
    rescore.add_argument("--concurrency", type=CONCURRENCY, default=8, help="recordings replayed at once")
    add_llm_options(rescore)


def cmd_rescore(args: argparse.Namespace) -> int:
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.battle.rescore import Rescore, agreement_by_turn, rescore_many, save_rescore
    from wolfeclick.battle.store import load_recording, recording_files

    paths = recording_files(args.recordings)
    recordings = [load_recording(path) for path in paths]
    folders = {recording.id: (args.out or path.parent) for recording, path in zip(recordings, paths)}
    policy = make_policy(args.policy, **llm_options(args))

    from wolfeclick.errors import InputError
    from wolfeclick.interop.public_rescore import INFERRED_STATE, is_public_import, rescore_public

    public = {r.id for r in recordings if is_public_import(r)}  # no input log to replay: from the inferred view
    results: list[object] = list(asyncio.run(rescore_many([r for r in recordings if r.id not in public], policy,
                                                       args.side, concurrency=args.concurrency)))
    if public:
        from wolfeclick.sim.setdata import load_book

        def inferred(recording: Any) -> object:
            try:
                return rescore_public(recording, policy, args.side, asyncio.run(load_book(recording.format)))
            except InputError as exc:  # a format without set data: its own team cannot be completed
                return f"{recording.id}: {exc}"

        results = [inferred(r) if r.id in public else results.pop(0) for r in recordings]
    done: list[Rescore] = []
    for recording, result in zip(recordings, results):
        if not isinstance(result, Rescore):
            print(f"error: {result}", file=sys.stderr)
            continue
        done.append(result)
        path = save_rescore(result, folders[recording.id])
        agreement = f"{result.agreement:.1%}" if result.agreement is not None else "n/a"
        label = f" ({INFERRED_STATE})" if recording.id in public else ""
        print(f"{path}: {len(result.decisions)} decisions, agreement {agreement}{label}")
    decisions = [d for r in done for d in r.decisions]
    if decisions:
        overall = sum(d.agree for d in decisions) / len(decisions)
        print(f"overall: {policy.spec} agrees with the recorded {args.side} choices at {overall:.1%} of "
              f"{len(decisions)} decisions in {len(done)} recordings")
        by_turn = agreement_by_turn(done)
        print("by turn: " + ", ".join(f"{turn}:{share:.0%}" for turn, share in by_turn.items()))
    return 0 if len(done) == len(recordings) else 1


DEFAULT_SAMPLING = "uniform"
"""How ``analyse`` spends its rollouts unless told (issue 48: racing becomes the default once measured to agree)."""


def add_analyse_parser(commands: argparse._SubParsersAction) -> None:
    analyse = commands.add_parser(
        "analyse", help="win probability at every decision of recorded battles, option values, turning points",
        description="From the true simulator state at each decision of each recording (it sees both teams), play K "
                    "continuations with --policy on both sides, each with fresh luck from --seed; with --options, "
                    "also value every legal action of that side's decisions. Writes "
                    "<out>/analyses/<id>/<policy>-k<K>-s<seed>.json and prints one line per battle (docs/analysis.md).")
    analyse.add_argument("recordings", nargs="+", type=Path, help="recording files, or folders of them")
    analyse.add_argument("--k", type=bounded_int(1, 100_000), default=64, help="rollouts per estimate (default 64)")
    analyse.add_argument("--policy", default="heuristic",
                         help="the rollout policy spec, for both sides (default: %(default)s); sim:random, "
                              "sim:maxdamage or sim:heuristic decide inside the simulator (docs/analysis.md)")
    analyse.add_argument("--options", choices=["p1", "p2", "both"], default=None,
                         help="value every legal action at each decision of this side (or both)")
    analyse.add_argument("--at", type=bounded_int(0, MAX_TURNS), action="append", default=None, metavar="STEP",
                         help="with --options: only at these decision indices (repeatable)")
    analyse.add_argument("--seed", type=bounded_int(0, MAX_SEED), default=0, help="the analysis seed (default 0)")
    analyse.add_argument("--margin", type=float, default=0.15,
                         help="the least loss in win probability that makes a mistake (default 0.15)")
    analyse.add_argument("--out", type=Path, default=None, help="recordings folder to store analyses in "
                                                                "(default: each recording's own folder)")
    analyse.add_argument("--concurrency", type=CONCURRENCY, default=16, help="rollouts in flight at once")
    analyse.add_argument("--processes", type=bounded_int(1, 64), default=None,
                         help="simulator processes (default: one per core, as for record)")
    analyse.add_argument("--replay-prefix", action="store_true",
                         help="replay each rollout's prefix instead of copying the decision (slower; same numbers)")
    analyse.add_argument("--engine", choices=["local", "ray"], default="local",
                         help="where rollouts run: this machine's simulators, or Ray workers (same numbers)")
    analyse.add_argument("--address", default=None,
                         help="with --engine ray: the cluster to join (default: start a local Ray instance)")
    analyse.add_argument("--sampling", choices=["racing", "uniform"], default=None,
                         help="racing: rounds of --batch rollouts, options clearly below the best stop early and win "
                              "probabilities stop at the precision of uniform K; uniform: K rollouts for every "
                              f"estimate (default {DEFAULT_SAMPLING}; uniform with --engine ray; docs/analysis.md)")
    analyse.add_argument("--batch", type=bounded_int(1, 1000), default=8,
                         help="with --sampling racing: rollouts per live estimate per round (default 8)")
    add_llm_options(analyse)


def cmd_analyse(args: argparse.Namespace) -> int:
    import contextlib

    from tqdm import tqdm

    from wolfeclick.analysis.core import analyse, summary_line
    from wolfeclick.analysis.schema import save_analysis
    from wolfeclick.battle.store import load_recording, recording_files
    from wolfeclick.sim.process import SimPool

    if not 0.0 <= args.margin <= 1.0:
        raise InputError(f"--margin must lie between 0 and 1, got {args.margin}")
    if args.at and not args.options:
        raise InputError("--at says where to value options; give --options p1|p2|both too")
    paths = recording_files(args.recordings)
    recordings = [load_recording(path) for path in paths]
    from wolfeclick.analysis.sim_rollout import is_sim_spec, rollout_policy

    if is_sim_spec(args.policy) and args.engine == "ray":
        raise InputError(f"{args.policy.strip()[:40]} plays inside this machine's simulators only: use --engine local")
    if args.engine == "ray":  # before building it: a refused checkpoint is not loaded here first
        from wolfeclick.analysis.ray_rollouts import check_ray_rollouts

        check_ray_rollouts(args.policy)
    policy = rollout_policy(args.policy, **llm_options(args))
    sides = {"p1": ("p1",), "p2": ("p2",), "both": SIDES, None: ()}[args.options]

    if args.address and args.engine != "ray":
        raise InputError("--address is for --engine ray")
    sampling = args.sampling or ("uniform" if args.engine == "ray" else DEFAULT_SAMPLING)
    from wolfeclick.interop.public_rescore import INFERRED_STATE, is_public_import

    public = {r.id for r in recordings if is_public_import(r)}  # no input log: from an inferred state
    if public and args.engine == "ray":
        raise InputError(f"{sorted(public)[0]} is a public replay: its analysis starts from an inferred state, "
                         "on the local engine only (--engine local)")
    if public and sides:
        raise InputError(f"{sorted(public)[0]} is a public replay: its decisions hold no legal actions to value; "
                         "analyse it without --options")

    async def worlds_of(recording: Recording) -> Any:
        if recording.id not in public:
            return None
        from wolfeclick.interop.takeover import InferredWorlds
        from wolfeclick.sim.setdata import load_book

        return InferredWorlds(recording, await load_book(recording.format), args.seed)

    async def run() -> int:
        failed = 0
        async with (SimPool(args.processes) if args.engine == "local" else contextlib.nullcontext()) as pool:
            for recording, path in zip(recordings, paths):
                bar = tqdm(unit="rollout", file=sys.stderr, desc=recording.id[:40], leave=False,
                           disable=not sys.stderr.isatty())

                def progress(done: int, total: int, bar: tqdm = bar) -> None:
                    bar.total = total
                    bar.update(done - bar.n)

                try:
                    analysis = await analyse(recording, policy, pool=pool, k=args.k, seed=args.seed, options=sides,
                                             at=args.at, margin=args.margin, concurrency=args.concurrency,
                                             fork=not args.replay_prefix, progress=progress,
                                             engine=args.engine, address=args.address, sampling=sampling,
                                             batch=args.batch, worlds=await worlds_of(recording))
                except WolfeClickError as exc:
                    bar.close()
                    print(f"error: {path}: {exc}", file=sys.stderr)
                    failed += 1
                    continue
                bar.close()
                saved = save_analysis(analysis, args.out or path.parent)
                inferred = f" ({INFERRED_STATE})" if recording.id in public else ""
                print(f"{summary_line(analysis, recording)} ({saved}){inferred}", flush=True)
        return 1 if failed else 0

    if args.engine == "ray":  # one Ray instance (or connection) for every battle's rollouts
        from wolfeclick.extras import require

        require("ray", "analyse --engine ray")
        import ray

        from wolfeclick.arena.engines.ray_engine import RayEngine

        own = RayEngine(args.address)._connect()
        try:
            return asyncio.run(run())
        finally:
            if own:
                ray.shutdown()
    return asyncio.run(run())
