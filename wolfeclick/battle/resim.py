"""Re-simulate a recording from its input log and check that the simulator says the same thing again."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from wolfeclick.battle.schema import Recording
from wolfeclick.digits import ascii_int
from wolfeclick.sides import SIDES
from wolfeclick.sim.process import SimProcess, SimulatorError
from wolfeclick.sim.protocol import is_timestamp, parse_chunk, split_update


@dataclass(frozen=True)
class ResimResult:
    ok: bool
    message: str


def spectator_log(chunks: list[str]) -> list[str]:
    """The spectator lines of a run's output, as recordings keep them (no timestamps, no blank entries)."""
    lines: list[str] = []
    for raw in chunks:
        chunk = parse_chunk(raw)
        if chunk.kind == "update":
            lines.extend(line for line in split_update(chunk.lines)["spectator"] if line and not is_timestamp(line))
    return lines


def compare_logs(recorded: list[str], replayed: list[str]) -> ResimResult:
    """Equal logs, or the first line where they part."""
    for number, (want, got) in enumerate(zip(recorded, replayed), start=1):
        if want != got:
            return ResimResult(False, f"line {number} differs: recorded {want!r}, simulator now says {got!r}")
    if len(replayed) != len(recorded):
        return ResimResult(False, f"simulator produced {len(replayed)} lines; recording has {len(recorded)}")
    return ResimResult(True, f"identical: {len(recorded)} protocol lines")


_FORCED_STRUGGLE = re.compile(r">(p[1-4]) move struggle")


def replayable(inputlog: list[str]) -> list[str]:
    """The input log as the simulator can read it back.

    When every move is disabled in a way the request does not show (all of them imprisoned), the simulator turns
    the side's ``move N`` into Struggle and writes ``move struggle`` in its input log, a choice it then refuses on
    replay (the request names no such move). Any move index gives that same forced Struggle, so ``move 1`` stands
    for it; a Struggle the request lists (no PP left) is move 1 too.
    """
    return [f">{match.group(1)} move 1" if (match := _FORCED_STRUGGLE.fullmatch(line)) else line for line in inputlog]


DEFAULT_RESIM_TIMEOUT = 60.0
"""Seconds a re-simulation may take: a 300-turn battle takes well under one; a stuck simulator is killed."""


async def resimulate(recording: Recording, timeout: float = DEFAULT_RESIM_TIMEOUT) -> ResimResult:
    """Feed the input log to a fresh simulator (through the door: refused lines never reach it) and compare.

    A refused input log or a simulator still busy after ``timeout`` seconds (then killed) is a failed result with
    one line, never a hang.
    """
    if recording.source.kind == "ladder":
        return ResimResult(False, "a battle played on a server (source: ladder): the server chose its seed and kept "
                                  "the input log, so it can be replayed in the viewer but not re-simulated")
    if not recording.inputlog:
        return ResimResult(False, "recording has no input log to re-simulate")
    process = SimProcess()
    await process.start()
    try:
        reply = await asyncio.wait_for(process.call("resim", lines=replayable(recording.inputlog)), timeout)
    except asyncio.TimeoutError:
        process.kill()
        return ResimResult(False, f"the simulator did not finish within {timeout:g} s and was stopped")
    except SimulatorError as exc:
        return ResimResult(False, str(exc))
    finally:
        await process.close()
    return compare_logs(recording.log, spectator_log(reply["out"]))


def result_of_log(log: list[str]) -> tuple[str | None, int, bool]:
    """(winning side or None, last turn number, whether the battle ended) as a spectator log says them."""
    names: dict[str, str] = {}
    winner, turn, ended = None, 0, False
    for line in log:
        parts = line.split("|")
        if len(parts) < 3:
            if line == "|tie":
                ended = True
            continue
        if parts[1] == "player" and len(parts) > 3 and parts[2] in SIDES:
            names.setdefault(parts[3], parts[2])
        elif parts[1] == "turn":
            turn = ascii_int(parts[2], 7) or turn
        elif parts[1] == "win":
            winner, ended = names.get(parts[2]), True
        elif parts[1] == "tie":
            ended = True
    return winner, turn, ended


def result_matches(recording: Recording) -> str | None:
    """Why the recorded result is not the one its own log tells (winner, ending, turns), or None when it is."""
    winner, turn, ended = result_of_log(recording.log)
    result = recording.result
    if result.winner != winner:
        return f"its result names {result.winner or 'no winner'}, its log {winner or 'no winner'}"
    if ended != (result.reason in ("win", "tie", "forfeit")):
        return f"its result says {result.reason}, but its log {'ends' if ended else 'does not end'} the battle"
    if result.turns not in (turn, turn + 1):
        return f"its result says {result.turns} turns, its log {turn}"
    return None


async def reproduces(recording: Recording, timeout: float = DEFAULT_RESIM_TIMEOUT) -> ResimResult:
    """Whether a recording's input log, re-simulated, gives its log again and its log gives its result: what an
    upload must show before its result counts (`docs/leaderboard.md`)."""
    done = await resimulate(recording, timeout)
    if not done.ok:
        return done
    why = result_matches(recording)
    return ResimResult(False, why) if why else ResimResult(True, f"{done.message}; the result matches")
