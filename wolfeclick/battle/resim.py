"""Re-simulate a recording from its input log and check that the simulator says the same thing again."""

from __future__ import annotations

from dataclasses import dataclass

from wolfeclick.battle.schema import Recording
from wolfeclick.sim.process import SimProcess
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


async def resimulate(recording: Recording) -> ResimResult:
    if not recording.inputlog:
        return ResimResult(False, "recording has no input log to re-simulate")
    process = SimProcess()
    await process.start()
    try:
        reply = await process.call("resim", lines=recording.inputlog)
    finally:
        await process.close()
    return compare_logs(recording.log, spectator_log(reply["out"]))
