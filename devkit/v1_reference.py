"""The ``wolfeclick-v1`` prompt as poke-env 0.8.3 tracked the battle: the expected texts of the v1 golden data.

The published checkpoints were trained on prompts written from poke-env 0.8.3's state. This script feeds each
battle's p1 stream (``devkit/v1_streams.py --out``) into a poke-env 0.8.3 ``Battle`` and writes, at each decision
point, the user message in the reference format (``docs/llm.md``) from that state alone: no emulation, 0.8's own
tracking. It reproduces the reference formatter's own text on all 671 decision points of
``tests/data/llm_v1_golden.json.gz`` and ``llm_v1_drift.json.gz``; ``v1_streams.py --compare`` measures the
project's profile against what it writes.

It needs poke-env 0.8.3, which this project does not install (it runs 0.16): a separate environment holding only
poke-env 0.8.3, which borrows its other dependencies from the project's ``.venv`` (the way the measurements in
``docs/llm.md`` were made):

    python3.11 -m venv /tmp/pe08 && /tmp/pe08/bin/pip install --no-deps poke-env==0.8.3
    .venv/bin/python -c 'import site; print(site.getsitepackages()[0])' \\
        > "$(/tmp/pe08/bin/python -c 'import site; print(site.getsitepackages()[0])')/project.pth"
    /tmp/pe08/bin/python devkit/v1_reference.py streams.json reference.json

Output: ``{"SEED": [user message, ...], ...}`` (``SEED-CASE`` for battles that carry a ``case``).
"""

from __future__ import annotations

import gzip
import json
import logging
import sys
from typing import Any

from poke_env.environment.battle import Battle  # poke-env 0.8.x

_QUIET = logging.getLogger("v1-reference")
_QUIET.setLevel(logging.CRITICAL)
_NOT_BATTLE = frozenset({"t:", "expire", "uhtmlchange", "win", "tie", "split", "request"})


def percent(fraction: float | None) -> float:
    return max(0.0, min(1.0, float(fraction))) * 100.0 if fraction is not None else 0.0


def status(mon: Any, none: str) -> str:
    return str(mon.status) if mon.status is not None else none


def speed_range(mon: Any) -> str:
    base = mon.base_stats.get("spe", 0)
    if base <= 0:
        return "Unknown"
    return f"{int((2 * base + 5) * 0.9)}-{int((2 * base + 31 + 63 + 5) * 1.1)}"


def stat_changes(mon: Any) -> str:
    parts = [f"{stat.capitalize()} {'+' if stage > 0 else ''}{stage}" for stat, stage in mon.boosts.items() if stage]
    return ", ".join(parts) if parts else "None"


def move_tag(move: Any) -> str:
    try:
        kind = move.type.name[0]
    except Exception:  # an id outside the move data: 0.8 could not type it either
        kind = "?"
    try:
        power = move.base_power or 0
    except Exception:
        power = 0
    return f"{move.id}({kind}{power})"


class History:
    """The reference's opponent history: by species, first-seen order, sticky moves, item and ability."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Any]] = {}

    def update(self, battle: Any) -> None:
        for mon in battle.opponent_team.values():
            if not mon.species:
                continue
            entry = self.seen.get(mon.species) or {"moves": [], "item": None, "ability": None}
            entry["hp"] = percent(mon.current_hp_fraction)
            entry["status"] = str(mon.status) if mon.status is not None else None
            entry["moves"] += [move for move in mon.moves if move not in entry["moves"]]
            entry["item"] = mon.item if mon.item is not None else entry["item"]
            entry["ability"] = mon.ability if mon.ability is not None else entry["ability"]
            self.seen[mon.species] = entry


def user_message(battle: Any, history: History) -> str:
    history.update(battle)
    lines = ["## Part A: Active Field"]
    own, opp = battle.active_pokemon, battle.opponent_active_pokemon
    if own is not None:
        lines += ["### Active Self", f"- Name: {own.species or 'Unknown'}", f"- HP: {percent(own.current_hp_fraction):.1f}%",
                  f"- Status: {status(own, 'Healthy')}", f"- Ability: {own.ability or 'Unknown'}",
                  f"- Item: {own.item or 'None'}", f"- Stat Modifiers: {stat_changes(own)}"]
    else:
        lines.append("### Active Self\n- None")
    if opp is not None:
        lines += ["### Active Opponent", f"- Name: {opp.species or 'Unknown'}", f"- HP: {percent(opp.current_hp_fraction):.1f}%",
                  f"- Status: {status(opp, 'Healthy')}", f"- Speed Range: {speed_range(opp)}"]
    else:
        lines.append("### Active Opponent\n- None")
    lines.append("\n## Part B: Full Self Roster")
    if not battle.team:
        lines.append("- [Unknown team]")
    for mon in battle.team.values():
        lines.append(f"- {mon.species or '?'} HP:{percent(mon.current_hp_fraction):.0f}% {status(mon, 'OK')} Item:{mon.item or '?'}")
        moves = list(mon.moves.values())
        lines.append("  Moves: " + " | ".join(move_tag(m) for m in moves) if moves else "  Moves: [unknown]")
    lines.append("\n## Part C: Opponent History")
    if not history.seen:
        lines.append("- No opponent Pokémon revealed yet.")
    for name, entry in history.seen.items():
        lines.append(f"- {name} | Last HP: {entry['hp']:.1f}% | Status: {entry['status'] or 'Healthy'}")
        if entry["moves"]:
            lines.append(f"  - Revealed moves: {', '.join(entry['moves'])}")
        if entry["item"]:
            lines.append(f"  - Revealed item: {entry['item']}")
        if entry["ability"]:
            lines.append(f"  - Revealed ability: {entry['ability']}")
    options = [("move", m.id) for m in battle.available_moves[:4]] + [("switch", m.species) for m in battle.available_switches[:5]]
    lines += ["", "You must choose exactly one action and output pure JSON with this schema:", "",
              '{"action": "move" | "switch", "choice": "Exact Name of Move or Pokemon"}', "", "Valid options for this state:"]
    lines += [f"- action: {kind!r}, choice: {choice!r}" for kind, choice in options]
    return "\n".join(lines)


def battle_messages(battle_data: dict[str, Any], format_id: str) -> list[str]:
    gen = int("".join(c for c in format_id[3:5] if c.isdigit()))
    battle = Battle(f"battle-{format_id}-{battle_data['seed']}", "Alice", _QUIET, gen=gen)
    history, found = History(), []
    for chunk in battle_data["p1"]:
        for line in chunk.split("\n"):
            if line.startswith("|request|"):
                request = json.loads(line[len("|request|"):] or "{}")
                if not request:
                    continue
                battle.parse_request(request)
                if not request.get("wait") and not request.get("teamPreview"):
                    try:
                        found.append(user_message(battle, history))
                    except Exception as exc:  # 0.8 itself failed here: no prompt the reference could have seen
                        found.append(f"REFERENCE-ERROR {exc!r}")
                continue
            parts = line.split("|")
            if not line.startswith("|") or len(parts) < 2 or parts[1] in _NOT_BATTLE:
                continue
            try:
                battle.parse_message(parts)
            except Exception:  # noqa: S112 - 0.8 skipped what it could not parse and went on, as its player did
                continue
    return found


def main(argv: list[str]) -> None:
    source, target = argv
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rt") as handle:
        data = json.load(handle)
    format_id = data.get("format", "gen4randombattle")
    out = {f"{b['seed']}-{b['case']}" if "case" in b else str(b["seed"]): battle_messages(b, format_id) for b in data["battles"]}
    with open(target, "w") as handle:
        json.dump(out, handle)


if __name__ == "__main__":
    main(sys.argv[1:])
