"""``export --as value``: per decision, the state a side saw and the Monte-Carlo value of it (docs/analysis.md).

Targets for value heads, advantage estimates and offline RL, from the analyses stored beside the recordings
(``python -m wolfeclick analyse``). Each row has the state text (and prompt) the side saw, the side's win probability
from that state with its interval, and — where the analysis valued that decision's options — every option's value,
the played option's value and its advantage over the state's value. Every row has the same columns and types
(an ``options`` list, possibly empty; null numbers where nothing was computed), so ``datasets`` loads any mix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

from wolfeclick.analysis.schema import Analysis, load_analyses, pick_analysis
from wolfeclick.battle.schema import Recording, SideDecision
from wolfeclick.battle.store import load_recording, write_atomic
from wolfeclick.interop.export import ExportError, ExportFilter, ExportStats, prompt_of, wanted_sides
from wolfeclick.sides import Side


def analysis_for(path: Path, recording: Recording) -> Analysis | None:
    """The analysis stored beside ``path`` for ``recording``, if any."""
    found, _broken = load_analyses(Path(path).parent, recording.id)
    return pick_analysis(found)


def value_rows(recording: Recording, analysis: Analysis, sides: list[Side],
               prompt: Callable[[SideDecision], tuple[str, str]] = prompt_of) -> Iterator[dict[str, Any]]:
    """Pure: one row per analysed decision of ``sides``, in decision order, with the prompt ``export`` gives."""
    analysed = {decision.index: decision for decision in analysis.decisions}
    for turn in recording.turns:
        entry = analysed.get(turn.index)
        if entry is None:
            continue
        for side in sides:
            decision = turn.decisions.get(side)
            if decision is None:
                continue
            win = entry.win
            value, low, high = (win.value, win.low, win.high) if side == "p1" else \
                (round(1 - win.value, 6), round(1 - win.high, 6), round(1 - win.low, 6))
            table = entry.options.get(side)
            options: list[dict[str, Any]] = [
                {"action": o.action.action, "choice": o.action.choice, "value": o.estimate.value,
                 "low": o.estimate.low, "high": o.estimate.high, "rank": o.rank}
                for o in (table.options if table else [])]
            played = next((o for o in options if decision.action is not None
                           and (o["action"], o["choice"]) == (decision.action.action, decision.action.choice)), None)
            text, prompt_kind = prompt(decision)
            yield {
                "state": decision.state,
                "prompt": text,
                "prompt_kind": prompt_kind,
                "win_probability": value,
                "win_low": low,
                "win_high": high,
                "rollouts": win.rollouts,
                "options": options,
                "played_action": decision.action.action if decision.action else None,
                "played_choice": decision.action.choice if decision.action else None,
                "played_value": played["value"] if played else None,
                "advantage": round(played["value"] - value, 6) if played else None,
                "played_rank": played["rank"] if played else None,
                "battle_id": recording.id,
                "format": recording.format,
                "side": side,
                "policy": recording.players[side].policy,
                "turn": turn.turn,
                "index": turn.index,
                "analysis_policy": analysis.policy,
                "analysis_k": analysis.k,
                "analysis_seed": analysis.seed,
            }


def export_value_files(files: list[Path], out: Path, *, side: str, flt: ExportFilter,
                       progress: Callable[[Path], None] | None = None) -> ExportStats:
    """The value rows of every recording in ``files`` that has a stored analysis, written to ``out`` atomically;
    recordings without one are counted as skipped."""
    wanted = wanted_sides(side)
    stats = ExportStats()
    lines = []
    for path in files:
        recording = load_recording(path)
        if progress is not None:
            progress(path)
        stats.recordings += 1
        sides = [s for s in wanted if flt.side_ok(recording, s)]
        if not flt.battle_ok(recording) or not sides:
            continue
        analysis = analysis_for(path, recording)
        if analysis is None:
            stats.skip("recordings without an analysis (run `analyse` first)")
            continue
        stats.battles += 1
        for row in value_rows(recording, analysis, sides):
            stats.rows += 1
            lines.append(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    if not lines:
        raise ExportError(f"nothing to export: {stats.summary()}")
    write_atomic(out, "".join(lines))
    return stats
