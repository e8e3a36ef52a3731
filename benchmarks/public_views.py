"""How close is the player's view inferred from a public log to what the player saw? (issue 63)

    .venv/bin/python -m benchmarks.public_views [--battles 100] [--formats gen4randombattle gen9randombattle]
        [--seed 1] [--concurrency 4] [--cache DIR]

Plays ``--battles`` battles per format here (``heuristic`` against ``random``, then ``maxdamage``, alternating), each
side wrapped so that every decision also keeps the true ``wolfeclick-v1`` prompt and the true request. Then each
battle is stripped to its public protocol log (the recording's spectator lines), imported
(``interop.showdown.from_public_log``), and each side's view inferred (``interop.views.player_views``). Compared
with the truth:

- own-team set fields, over the Pokémon the log showed: each true move in the inferred set (per move), the item,
  the ability (and the tera type in gen 9), both over all of them and over the unrevealed ones only;
- the fraction of decisions whose inferred v1 prompt (the user text: state and options) equals the true one byte for
  byte, and the same per part (Part A self / opponent, Part B, Part C, the options).

Recordings are kept in ``--cache`` (default /tmp/bench_public_views), so a second run only compares. Prints each
format's figures as JSON as it goes; the result renders the section of docs/benchmarks.md (docs/interop.md,
*Accuracy against the truth*, reads it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.game.actions import to_id
from wolfeclick.game.prompts import WolfeclickV1
from wolfeclick.game.sets import candidates
from wolfeclick.interop.showdown import from_public_log
from wolfeclick.interop.views import own_team, player_views, revealed_team, ruled_out_items
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.policies.registry import default_registry
from wolfeclick.sim.process import SimPool
from wolfeclick.sim.setdata import load_book

NAME = "public_views"
HEADING = "## Public logs: the player's view inferred, against the truth (issue 63)"
PARTS = ("self", "opponent", "B", "C", "options")


class Truth:
    """A policy that plays as ``inner`` and keeps, in its decision's info, the true v1 prompt and request."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.blocking = False
        self.v1 = WolfeclickV1()

    def metadata(self) -> dict[str, Any]:
        return dict(self.inner.metadata())

    def decide(self, observation: Observation) -> Decision:
        decision = self.inner.decide(observation)
        prompt = self.v1.build(observation)
        decision.info = {**decision.info, "v1_user": prompt.messages[-1]["content"], "request": observation.request}
        return decision


async def record(fmt: str, seeds: list[int], cache: Path, concurrency: int) -> list[Path]:
    registry = default_registry()
    paths = [cache / f"{fmt}-{seed}.json" for seed in seeds]
    todo = [(seed, path) for seed, path in zip(seeds, paths) if not path.is_file()]
    slots = asyncio.Semaphore(concurrency)
    async with SimPool(1) as pool:
        async def one(seed: int, path: Path) -> None:
            async with slots:
                foe = "random" if seed % 2 else "maxdamage"
                recording = await play_battle(Truth(registry.build("heuristic")), Truth(registry.build(foe)),
                                              format_id=fmt, seed=seed, pool=pool)
                path.write_text(recording.model_dump_json(by_alias=True), encoding="utf-8")

        await asyncio.gather(*(one(seed, path) for seed, path in todo))
    return paths


def parts(text: str) -> dict[str, str]:
    head, rest = text.split("\n\n## Part B", 1)
    roster, rest = rest.split("\n\n## Part C", 1)
    history, options = rest.split("\n\nYou must choose", 1)
    own, opponent = head.split("### Active Opponent", 1)
    return {"self": own, "opponent": opponent, "B": roster, "C": history, "options": options}


def unorder(name: str, text: str) -> str:
    """A part with what a public log cannot order sorted: the roster's Pokémon and each one's moves, the options."""
    lines = text.split("\n")
    if name == "options":
        return "\n".join(sorted(lines))
    if name == "B":
        blocks: list[list[str]] = []
        current: list[str] = []
        for line in lines[1:]:
            if line.startswith("- ") and current:
                blocks.append(current)
                current = []
            if line.startswith("  Moves: "):
                line = "  Moves: " + " | ".join(sorted(line[len("  Moves: "):].split(" | ")))
            current.append(line)
        blocks.append(current)
        return "\n".join(["\n".join(block) for block in sorted(blocks)])
    return text


def _move(move: str) -> str:
    return "hiddenpower" if move.startswith("hiddenpower") else move


def compare(path: Path, book: Any, tally: dict[str, Any]) -> None:
    original = Recording.model_validate_json(path.read_text(encoding="utf-8"))
    imported = from_public_log(list(original.log), fmt=original.format, recording_id="bench-1", detail="bench")
    started = time.perf_counter()
    views = player_views(imported, book)
    tally["seconds"] += time.perf_counter() - started
    truth: dict[Any, list[Any]] = {}
    for turn in original.turns:
        for side, decision in turn.decisions.items():
            truth.setdefault(side, []).append(decision)
    mine: dict[str, list[Any]] = {}
    for view in views:
        mine.setdefault(view.side, []).append(view)
    for side, decisions in truth.items():
        inferred = mine.get(side, [])
        if len(inferred) != len(decisions):
            tally["unaligned"] += len(decisions)
            continue
        for decision, view in zip(decisions, inferred):
            tally["decisions"] += 1
            true_text = decision.policy_info["v1_user"]
            tally["prompt_equal"] += true_text == view.prompt
            tally["exact_marked"] += view.exact
            tally["exact_marked_and_equal"] += view.exact and true_text == view.prompt
            true_parts, my_parts = parts(true_text), parts(view.prompt)
            for name in PARTS:
                tally["parts"][name] += true_parts[name] == my_parts[name]
            unordered = [unorder(name, true_parts[name]) == unorder(name, my_parts[name]) for name in PARTS]
            tally["unordered"] += all(unordered)
            for name, same in zip(PARTS, unordered):
                tally["parts_unordered"][name] += same
            taken = decision.action
            shown = imported.turns[view.index].decisions[side].action  # None: it could not act (sleep, a faint…)
            tally["actions"] += taken is not None and shown is not None
            tally["action_equal"] += taken is not None and shown is not None and view.action is not None \
                and taken.action == view.action.kind and to_id(taken.choice) == to_id(view.action.name)
        # the sets: the truth from the side's first request (the team as it started: items not yet used or lost)
        request = decisions[0].policy_info["request"]
        true_sets = {f"{side}: {entry['ident'].split(': ', 1)[1]}": entry
                     for entry in request["side"]["pokemon"]}
        seen = revealed_team(list(original.log), original.format, side,  # type: ignore[arg-type]
                             {s: original.players[s].name for s in ("p1", "p2")})
        excluded = ruled_out_items(list(original.log), side)  # type: ignore[arg-type]
        team = own_team(book, seen, int(original.format[3]), excluded)
        tally["mons"] += len(true_sets)
        tally["mons_seen"] += len(team)
        for mon, revealed in zip(team, seen):
            entry = true_sets.get(mon.key)
            if entry is None:
                continue
            true_moves = {_move(to_id(m)) for m in entry["moves"]}
            mine_moves = {_move(m) for m in mon.moves}
            used = {_move(m) for m in revealed.revealed.moves}
            for move in true_moves:
                key = "revealed" if move in used else "hidden"
                tally["moves"][key][0] += move in mine_moves
                tally["moves"][key][1] += 1
            # what the guess would score if the set data's posterior were the truth: each guessed unrevealed move's
            # probability of being in the set, over the sets consistent with what was revealed (the ceiling of any
            # guess from this information: the likeliest moves maximise it)
            marginal = move_marginals(book, revealed, excluded.get(mon.key, set()))
            for move in mon.moves:
                if _move(move) not in used:
                    tally["moves_expected"][0] += marginal.get(_move(move), 0.0)
                    tally["moves_expected"][1] += 1
            fields = {"item": (to_id(entry.get("item") or ""), mon.set.item, revealed.revealed.item),
                      "ability": (to_id(entry.get("baseAbility") or ""), mon.set.ability, revealed.revealed.ability)}
            if "teraType" in entry:
                fields["tera"] = (to_id(entry["teraType"]), to_id(mon.set.tera_type), revealed.revealed.tera_type)
            for name, (true, guess, shown) in fields.items():
                key = "revealed" if shown is not None else "hidden"
                tally[name][key][0] += true == guess
                tally[name][key][1] += 1


def move_marginals(book: Any, seen: Any, excluded: set[str]) -> dict[str, float]:
    """Each move's probability of being in the set of ``seen`` (a ``SeenMon``), over the consistent sets (items the
    log rules out left out, as ``own_team`` leaves them)."""
    found = candidates(book, seen.revealed)
    if seen.revealed.item is None and excluded:
        kept = [(c, p) for c, p in found if c.item not in excluded]
        total = sum(p for _, p in kept)
        found = [(c, p / total) for c, p in kept] if kept and total > 0 else found
    marginal: dict[str, float] = {}
    for candidate, p in found:
        for move in {_move(m) for m in candidate.moves}:
            marginal[move] = marginal.get(move, 0.0) + p
    return marginal


def rate(pair: list[int]) -> float | None:
    return round(pair[0] / pair[1], 4) if pair[1] else None


def summary(tally: dict[str, Any]) -> dict[str, Any]:
    n = tally["decisions"]
    out: dict[str, Any] = {"battles": tally["battles"], "decisions": n, "unaligned_decisions": tally["unaligned"],
                           "prompt_byte_equal": round(tally["prompt_equal"] / n, 4) if n else None,
                           "marked_exact": tally["exact_marked"],
                           "marked_exact_and_equal": tally["exact_marked_and_equal"],
                           "parts_equal": {k: round(v / n, 4) for k, v in tally["parts"].items()} if n else {},
                           "prompt_equal_unordered": round(tally["unordered"] / n, 4) if n else None,
                           "parts_equal_unordered": {k: round(v / n, 4) for k, v in tally["parts_unordered"].items()}
                           if n else {},
                           "action_equal": rate([tally["action_equal"], tally["actions"]]),
                           "own_pokemon_seen": rate([tally["mons_seen"], tally["mons"]]),
                           "ms_per_battle": round(1000 * tally["seconds"] / max(1, tally["battles"]), 1)}
    if tally["moves_expected"][1]:
        out["moves_unrevealed_expected"] = round(tally["moves_expected"][0] / tally["moves_expected"][1], 4)
    for name in ("moves", "item", "ability", "tera"):
        both = [tally[name]["revealed"][0] + tally[name]["hidden"][0],
                tally[name]["revealed"][1] + tally[name]["hidden"][1]]
        if both[1]:
            out[name] = {"all": rate(both), "unrevealed": rate(tally[name]["hidden"]),
                         "unrevealed_share": rate([tally[name]["hidden"][1], both[1]])}
    return out


def measure(battles: int, formats: list[str], seed: int, concurrency: int, cache: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for fmt in formats:
        started = time.perf_counter()
        paths = asyncio.run(record(fmt, list(range(seed, seed + battles)), cache, concurrency))
        recorded = time.perf_counter() - started
        book = asyncio.run(load_book(fmt))
        tally: dict[str, Any] = {"battles": 0, "decisions": 0, "unaligned": 0, "prompt_equal": 0, "exact_marked": 0,
                                 "exact_marked_and_equal": 0, "parts": dict.fromkeys(PARTS, 0), "actions": 0,
                                 "unordered": 0, "parts_unordered": dict.fromkeys(PARTS, 0),
                                 "action_equal": 0, "mons": 0, "mons_seen": 0, "seconds": 0.0,
                                 "moves_expected": [0.0, 0],
                                 **{name: {"revealed": [0, 0], "hidden": [0, 0]}
                                    for name in ("moves", "item", "ability", "tera")}}
        for path in paths:
            tally["battles"] += 1
            compare(path, book, tally)
        results[fmt] = {**summary(tally), "record_seconds": round(recorded, 1)}
        print(json.dumps({fmt: results[fmt]}), flush=True)
    return {"formats": results}


def render(result: harness.Result) -> str:
    formats = result.results["formats"]

    def pct(value: float | None, digits: int = 1) -> str:
        return "—" if value is None else f"{value * 100:.{digits}f}%"

    def field(r: dict[str, Any], name: str) -> str:
        f = r.get(name)
        if not f:
            return "—"
        return f"{pct(f['all'])} ({pct(f['unrevealed'])}) [{pct(f['unrevealed_share'], 0)}]"

    def timing(r: dict[str, Any]) -> str:
        ms = r.get("ms_per_battle")
        return f"{r['record_seconds']:.0f} s / " + ("–" if ms is None else f"{ms:.0f} ms")

    def row(label: str, cell: Any) -> str:
        return f"| {label} | " + " | ".join(cell(formats[fmt]) for fmt in formats) + " |"

    return "\n".join([
        HEADING, "",
        f"`{result.command}`: battles played here (heuristic against random or maxdamage), each side wrapped so "
        "every decision also keeps the true `wolfeclick-v1` prompt and request; each battle stripped to its public "
        "protocol log, imported (`from_public_log`) and both sides' views inferred (`player_views`), then compared. "
        "Set fields are counted over the own Pokémon the log showed; \"unrevealed\" is over the fields the log did "
        "not show (the share of them in brackets). What the figures mean: docs/interop.md, *Accuracy against the "
        "truth*.", "",
        harness.describe(result), "",
        "| | " + " | ".join(formats) + " |", "| --- |" + " --- |" * len(formats),
        row("battles / decisions compared", lambda r: f"{r['battles']} / {r['decisions']:,}"),
        row("own Pokémon the log showed", lambda r: pct(r["own_pokemon_seen"])),
        row("moves right (unrevealed ones) [unrevealed share]", lambda r: field(r, "moves")),
        row("item right (unrevealed) [share]", lambda r: field(r, "item")),
        row("ability right (unrevealed) [share]", lambda r: field(r, "ability")),
        row("tera type right", lambda r: pct(r["tera"]["all"]) if r.get("tera") else "—"),
        row("v1 prompt byte for byte", lambda r: pct(r["prompt_byte_equal"])),
        row("… with team order, move order and option order ignored", lambda r: pct(r["prompt_equal_unordered"])),
        row("Part A, own active (HP one decimal, status, ability, item)", lambda r: pct(r["parts_equal"]["self"])),
        row("Part A, active opponent", lambda r: pct(r["parts_equal"]["opponent"])),
        row("Part B, own roster (as is / order ignored)",
            lambda r: f"{pct(r['parts_equal']['B'])} / {pct(r['parts_equal_unordered']['B'])}"),
        row("Part C, opponent history", lambda r: pct(r["parts_equal"]["C"])),
        row("options (as is / order ignored)",
            lambda r: f"{pct(r['parts_equal']['options'])} / {pct(r['parts_equal_unordered']['options'])}"),
        row("action taken = the one played (where the log shows it)", lambda r: pct(r["action_equal"])),
        row("rows marked exact (nothing inferred)", lambda r: str(r["marked_exact"])),
        row("recording the battles / inferring both views, a battle", timing),
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the whole docstring, as before the move
    parser.add_argument("--battles", type=int, default=100)
    parser.add_argument("--formats", nargs="+", default=["gen4randombattle", "gen9randombattle"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/bench_public_views"))
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    with harness.measure() as run:
        results = measure(args.battles, args.formats, args.seed, args.concurrency, args.cache)
    params = {"battles": args.battles, "formats": args.formats, "seed": args.seed, "concurrency": args.concurrency}
    harness.finish(NAME, argv, params, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
