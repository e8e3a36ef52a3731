"""``record`` and ``branch``: play battles on the embedded simulator, from the start or from a recorded decision, and save them."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS
from wolfeclick.battle.schema import MAX_TURNS
from wolfeclick.cli.ctrl_c import CtrlC
from wolfeclick.cli.options import (
    CONCURRENCY,
    COUNT,
    SEED,
    TURNS,
    add_llm_options,
    add_team_options,
    bounded_int,
    llm_options,
    team_sources,
)
from wolfeclick.paths import recordings_dir


def add_record_parser(commands: argparse._SubParsersAction) -> None:
    record = commands.add_parser("record", help="play seeded battles and write one recording per battle",
                                 description="Play battles on the embedded simulator; print each recording's path.")
    record.add_argument("--p1", required=True, help="policy spec for side p1 (`wolfeclick policies` lists them)")
    record.add_argument("--p2", required=True, help="policy spec for side p2")
    record.add_argument("--format", default=DEFAULT_FORMAT, help=f"Showdown format (default {DEFAULT_FORMAT})")
    record.add_argument("--seed", type=SEED, default=0, help="battle seed; battle i uses seed+i")
    record.add_argument("--n", type=COUNT, default=1, help="number of battles")
    record.add_argument("--concurrency", type=CONCURRENCY, default=1, help="battles in flight at once")
    record.add_argument("--max-turns", type=TURNS, default=DEFAULT_MAX_TURNS, help="stop a battle after this turn")
    record.add_argument("--out", type=Path, default=recordings_dir(), help="directory for the recordings")
    add_team_options(record)
    add_llm_options(record)


def cmd_record(args: argparse.Namespace) -> int:
    import contextlib

    from tqdm import tqdm

    from wolfeclick.battle.batch import BattleJob, run_jobs
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.battle.store import save_recording
    from wolfeclick.errors import StorageError

    if args.n < 1 or args.seed < 0:
        print("error: --n must be at least 1 and --seed non-negative", file=sys.stderr)
        return 2
    from wolfeclick.battle.teams import prepare_deal

    p1 = make_policy(args.p1, **llm_options(args))
    p2 = p1 if args.p2 == args.p1 else make_policy(args.p2, **llm_options(args))
    deal = asyncio.run(prepare_deal(team_sources(args), args.format))  # an illegal team: one line, nothing played
    jobs = [BattleJob(p1, p2, args.format, args.seed + i, args.max_turns,
                      teams=deal.infos(args.seed + i) if deal else None) for i in range(args.n)]
    failures = saved = stopped_in_flight = 0
    storage: StorageError | None = None
    interrupted = False
    lost: list = []  # recordings a failed save left in memory: tried again at the end, finished battles first

    async def go() -> None:
        # Ctrl-C or a failed save sets `stop`: the battles in flight end at their next decision point and are saved
        # `aborted` with their turns (where the disk still takes them); battles not started are skipped.
        nonlocal failures, saved, stopped_in_flight, storage, interrupted
        stop = asyncio.Event()
        with CtrlC(stop) as ctrl_c, tqdm(total=len(jobs), unit="battle", file=sys.stderr,
                                         disable=len(jobs) < 2 or not sys.stderr.isatty()) as bar:
            stream = run_jobs(jobs, concurrency=args.concurrency, stop=stop)
            async with contextlib.aclosing(stream):  # cleanup runs here, while the simulators still answer
                async for _, recording in stream:
                    was_stopped = stop.is_set()
                    if storage is not None:
                        lost.append((recording, was_stopped))  # the disk already refused one: finished ones first
                        continue
                    try:
                        path = await asyncio.to_thread(save_recording, recording, args.out)  # fsync off the loop
                    except StorageError as exc:
                        storage = exc
                        lost.append((recording, was_stopped))
                        stop.set()
                        continue
                    saved += 1
                    report(path, recording, was_stopped)
                    bar.update(1)
            interrupted = ctrl_c.pressed

    def report(path: Path, recording, was_stopped: bool) -> None:  # type: ignore[no-untyped-def]
        nonlocal failures, stopped_in_flight
        print(path, flush=True)
        if recording.result.reason == "aborted":
            failures += 1
            if was_stopped:
                stopped_in_flight += 1
            else:
                tqdm.write(f"warning: {recording.id} aborted: {recording.result.error}", file=sys.stderr)

    asyncio.run(go())
    if storage is not None:  # the finished battles are tried again first, then the stopped ones; one line, exit 1
        lost.sort(key=lambda item: (item[0].result.reason == "aborted", -len(item[0].turns)))
        unsaved = []
        for recording, was_stopped in lost:
            try:
                report(save_recording(recording, args.out), recording, was_stopped)
                saved += 1
            except StorageError:
                unsaved.append(recording)
        if unsaved:
            finished = [r.id for r in unsaved if r.result.reason != "aborted"]
            names = f": finished {', '.join(finished[:5])}{' …' if len(finished) > 5 else ''}" if finished else ""
            raise StorageError(f"{storage} ({len(unsaved)} battles not saved{names}; "
                               f"{len(jobs) - saved - len(unsaved)} not played)")
    if interrupted:
        print(f"interrupted: {saved} battles saved ({stopped_in_flight} of them stopped in flight, kept as aborted), "
              f"{len(jobs) - saved} not played", file=sys.stderr)
        return 130
    return 1 if failures else 0


def add_branch_parser(commands: argparse._SubParsersAction) -> None:
    branch = commands.add_parser("branch", help="replay a recording up to a decision point, then let policies play on",
                                 description="Replay RECORDING's own choices up to decision point --at (the simulator "
                                             "in exactly the state it was in), then let --p1/--p2 (default: the "
                                             "recorded policies) play on. Prints the new recording's path.")
    branch.add_argument("recording", type=Path)
    branch.add_argument("--at", type=bounded_int(0, MAX_TURNS), required=True, metavar="STEP",
                        help="decision index to take over at (0 = the first decision)")
    branch.add_argument("--p1", default=None, help="policy for p1 from STEP on (default: the recorded one)")
    branch.add_argument("--p2", default=None, help="policy for p2 from STEP on (default: the recorded one)")
    branch.add_argument("--out", type=Path, default=recordings_dir(), help="directory for the new recording")
    add_llm_options(branch)


def cmd_branch(args: argparse.Namespace) -> int:
    from wolfeclick.battle.branch import branch
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.battle.store import RecordingSaver, load_recording

    parent = load_recording(args.recording)
    policies = {side: make_policy(spec, **llm_options(args)) if spec else None
                for side, spec in (("p1", args.p1), ("p2", args.p2))}
    from wolfeclick.interop.public_rescore import INFERRED_STATE, is_public_import

    if is_public_import(parent):  # no seed or input log to replay: the battle goes on from an inferred state
        from wolfeclick.errors import InputError
        from wolfeclick.interop.takeover import take_over_public

        if any(policy is None for policy in policies.values()):
            raise InputError("a public replay's players are not known policies: give both --p1 and --p2")
        recording = asyncio.run(take_over_public(parent, args.at, policies))  # type: ignore[arg-type]
        print(f"{RecordingSaver(args.out).save(recording)} ({INFERRED_STATE})")
        return 1 if recording.result.reason == "aborted" else 0
    recording = asyncio.run(branch(parent, args.at, policies))
    print(RecordingSaver(args.out).save(recording))
    return 1 if recording.result.reason == "aborted" else 0
