"""Play seeded random-vs-random battles on the embedded simulator and keep each side's own protocol stream.

The ``wolfeclick-v1`` golden data (``tests/data/llm_v1_*.json.gz``) pairs such streams with the prompt the reference
formatter printed for each decision point. This script makes the streams (and, with ``--scan``, says which battles
hold Transform and Trace events, the cases where the two poke-env versions track state differently):

    .venv/bin/python -m devkit.v1_streams --format gen4randombattle --seeds 1-200 --scan
    .venv/bin/python -m devkit.v1_streams --seeds 17,42 --out /tmp/streams.json
    .venv/bin/python -m devkit.v1_streams --format gen4ou --teams tests/data/v1_teams/gen4ou --seeds 1-50 --out s.json

Parity with poke-env 0.8.3's own tracking: write its texts with ``devkit/v1_reference.py`` (in an environment with
poke-env 0.8.3), then compare the profile's texts for the same streams with them:

    /tmp/pe08/bin/python devkit/v1_reference.py s.json ref.json
    .venv/bin/python -m devkit.v1_streams --streams s.json --compare ref.json

Each battle is ``{seed, p1: [chunk, ...], p2: [chunk, ...]}``: a chunk is a block of the side's view of the log
(its own exact HP) or one ``|request|{json}`` line, in the order the side received them. Choices are uniform over the
request's legal actions, drawn from a generator seeded by the battle seed, so a seed gives the same battle every run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from pathlib import Path
from typing import Any

from wolfeclick.game.actions import legal_actions
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.protocol import SIDES, derive_int, parse_chunk, split_update, start_lines

NAMES = {"p1": "Alice", "p2": "Bob"}


async def play_streams(process: SimProcess, format_id: str, seed: int, max_turns: int = 300,
                       teams: dict[str, str] | None = None) -> dict[str, Any]:
    """One battle, random legal choices on both sides (``teams``: packed, per side, for given-team formats);
    returns each side's stream."""
    rng = random.Random(derive_int(seed, "v1-streams"))
    streams: dict[str, list[str]] = {side: [] for side in SIDES}
    requests: dict[str, dict[str, Any]] = {}
    errors: dict[str, bool] = {side: False for side in SIDES}
    key = f"v1-{format_id}-{seed}"
    ended = False
    turn = 0

    def absorb(chunks: list[str]) -> None:
        nonlocal ended, turn
        for raw in chunks:
            chunk = parse_chunk(raw)
            if chunk.kind == "update":
                views = split_update(chunk.lines)
                for side in SIDES:
                    streams[side].append("\n".join(views[side]))
                for line in chunk.lines:
                    if line.startswith("|turn|"):
                        turn = int(line.split("|")[2])
            elif chunk.kind == "request" and chunk.side and chunk.request is not None:
                streams[chunk.side].append(chunk.text)
                requests[chunk.side] = chunk.request
            elif chunk.kind == "error" and chunk.side:
                errors[chunk.side] = True
            elif chunk.kind == "end":
                ended = True

    reply = await process.call("start", battle=key, format=format_id, lines=start_lines(format_id, seed, NAMES, teams))
    absorb(reply["out"])
    refused: dict[str, set[str]] = {side: set() for side in SIDES}
    while not ended and turn <= max_turns:
        lines = []
        for side in SIDES:
            request = requests.get(side)
            if not request or request.get("wait"):
                continue
            options = [a.command() for a in legal_actions(request) if a.command() not in refused[side]]
            lines.append(f">{side} {rng.choice(options) if options else 'default'}")
            requests.pop(side)
        if not lines:
            break
        for side in SIDES:
            errors[side] = False
        reply = await process.call("write", battle=key, lines=lines)
        absorb(reply["out"])
        for line in lines:
            side, command = line[1:3], line[4:]
            if errors[side]:
                refused[side].add(command)
                requests.setdefault(side, {})  # an [Invalid choice]: the old request stands (re-asked below)
            else:
                refused[side].clear()
        for side in SIDES:
            if requests.get(side) == {}:
                requests.pop(side)
    if not ended:
        await process.call("close", battle=key)
    return {"seed": seed, "p1": streams["p1"], "p2": streams["p2"]}


def scan(battle: dict[str, Any]) -> list[str]:
    """The Transform / Trace events in a battle's p1 stream (what makes a battle a drift case)."""
    found = []
    for chunk in battle["p1"]:
        for line in chunk.split("\n"):
            if line.startswith("|-transform|") or ("|-ability|" in line and "Trace" in line):
                found.append(line)
    return found


def compare(data: dict[str, Any], reference: dict[str, list[str]]) -> tuple[int, int, dict[str, list[int]]]:
    """(decision points, identical, {battle: the decision points that differ})."""
    from devkit.llm_fixtures import v1_messages  # the golden tests' own replay: the texts they check

    total = same = 0
    differing: dict[str, list[int]] = {}
    for battle in data["battles"]:
        key = f"{battle['seed']}-{battle['case']}" if "case" in battle else str(battle["seed"])
        try:
            ours = [user for user, _ in v1_messages(battle, data.get("format", "gen4randombattle"))]
        except AssertionError as exc:  # poke-env 0.16 itself failed on a request (seen after Mimic)
            print(f"  {key}: poke-env 0.16 failed: {str(exc)[:100]}")
            ours = []
        theirs = reference.get(key, [])
        if len(ours) != len(theirs):
            differing[key] = [-1]
        for index, (mine, want) in enumerate(zip(ours, theirs)):
            total += 1
            same += mine == want
            if mine != want:
                differing.setdefault(key, []).append(index)
    return total, same, differing


async def team_deal(args: argparse.Namespace, process: SimProcess) -> Any:
    from wolfeclick.battle.teams import TeamSources, prepare_deal

    return await prepare_deal(TeamSources(team1=args.team1, team2=args.team2, pool=args.teams), args.format, process)


def parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-")
            seeds.extend(range(int(low), int(high) + 1))
        elif part:
            seeds.append(int(part))
    return seeds


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--format", default="gen4randombattle")
    parser.add_argument("--seeds", default="1-20", help="e.g. 1-200 or 3,17,42")
    parser.add_argument("--scan", action="store_true", help="print the Transform/Trace events per battle")
    parser.add_argument("--out", type=Path, default=None, help="write the streams as JSON")
    parser.add_argument("--teams", type=Path, default=None, help="a team pool folder, for given-team formats")
    parser.add_argument("--team1", type=Path, default=None)
    parser.add_argument("--team2", type=Path, default=None)
    parser.add_argument("--streams", type=Path, default=None, help="read streams (from --out) instead of playing")
    parser.add_argument("--compare", type=Path, default=None,
                        help="compare the v1 prompts of the streams with devkit/v1_reference.py's output")
    args = parser.parse_args(argv)
    if args.streams is not None:
        data = json.loads(args.streams.read_text())
    else:
        data = {"format": args.format, "battles": await play_all(args)}
    if args.out:
        args.out.write_text(json.dumps(data))
    if args.compare is not None:
        total, same, differing = compare(data, json.loads(args.compare.read_text()))
        print(f"{same} of {total} decision points identical ({100.0 * same / max(total, 1):.3f}%)")
        for key, points in differing.items():
            print(f"  {key}: {len(points)} differ, first at {points[0]}")


async def play_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    process = SimProcess()
    await process.start()
    battles = []
    try:
        deal = await team_deal(args, process)
        for seed in parse_seeds(args.seeds):
            teams = {side: team.packed for side, team in deal.deal(seed).items()} if deal is not None else None
            battle = await play_streams(process, args.format, seed, teams=teams)
            battles.append(battle)
            if args.scan:
                events = scan(battle)
                if events:
                    print(seed, " ; ".join(events))
    finally:
        await process.close()
    return battles


if __name__ == "__main__":
    asyncio.run(main())
