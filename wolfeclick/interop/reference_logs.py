"""OpenEnv-WolfeClick's own files: a ``record_battle.py`` log and the ``replay_battle.json`` its Space viewer plays.

Both follow one agent (seat p1 in the reference's runs; p2 when its logged opponent actions say so) through a battle
against an unknown opponent. What they hold maps onto the agent's decisions: the state markdown it saw (record log
only), the legal actions, its action and whether the reference flagged it illegal, and the reference's own reward
(kept as given, under the component ``reference_reward``: the reference did not break it down). The protocol log is
rebuilt from the events each turn kept, so the battle view and the snapshots come from the same public replay the
Showdown importer uses; the lead switch-ins before turn 1 were never kept by the reference and stay missing. The
reference's early logs kept no events at all: their log stays empty, each decision's turn is its step number and the
snapshots show the actives and HP its ``state_markdown`` names (a log without even those is refused in one line).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from wolfeclick.battle.schema import Recording
from wolfeclick.interop.public import (
    ImportFormatError,
    checked_format,
    clean_log,
    format_id,
    imported_id,
    imported_versions,
    last_turn,
    now,
    player_names,
    replay_public,
    turn_cuts,
    validated,
)
from wolfeclick.sides import Side, other

RECORD_FORMAT = "openenv-wolfeclick record_battle"
REPLAY_FORMAT = "openenv-wolfeclick replay_battle"
_ACTIONS = ("move", "switch", "default")


def looks_like_record(raw: Any) -> bool:
    return isinstance(raw, dict) and "schema" not in raw and "turns" in raw and "meta" not in raw \
        and bool({"battle_tag", "total_turns", "natural_finish", "final_reason", "model"} & set(raw))


def looks_like_replay(raw: Any) -> bool:
    return isinstance(raw, dict) and "schema" not in raw and "turns" in raw and isinstance(raw.get("meta"), dict)


# --------------------------------------------------------------------------------------------- field checks
def _get(obj: dict[str, Any], key: str, kinds: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
    """``obj[key]`` if it has one of ``kinds`` (None allowed when a default is given); else one-line error."""
    if key not in obj or obj[key] is None:
        if default is ...:
            raise ImportFormatError(f"{where}: missing field '{key}'")
        return default
    value = obj[key]
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise ImportFormatError(f"{where}: field '{key}' has the wrong type (bool)")
    if not isinstance(value, kinds):
        raise ImportFormatError(f"{where}: field '{key}' has the wrong type ({type(value).__name__})")
    return value


def _action(value: Any) -> tuple[dict[str, str] | None, str | None]:
    """(ActionRecord dict or None, the raw text): ``{action, choice}`` or ``{raw}`` as the reference wrote them."""
    if isinstance(value, dict):
        if value.get("action") in _ACTIONS and isinstance(value.get("choice"), str):
            return {"action": value["action"], "choice": value["choice"]}, json.dumps(value, ensure_ascii=False)
        if isinstance(value.get("raw"), str):
            return None, value["raw"]
        return None, json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        return None, value
    return None, None


def _legal(values: list[Any]) -> list[dict[str, str]]:
    return [{"action": v["action"], "choice": v["choice"]} for v in values
            if isinstance(v, dict) and v.get("action") in _ACTIONS[:2] and isinstance(v.get("choice"), str)]


def _reward(value: Any) -> dict[str, Any]:
    value = float(value or 0.0)
    return {"total": round(value, 4) + 0.0, "components": {"reference_reward": round(value, 4) + 0.0}, "outcome": 0.0}


def _policy(model: str | None) -> str:
    """``preset:runN`` when the model text names a published adapter, else the model text (or '')."""
    from wolfeclick.policies.registry import default_registry

    return default_registry().spec_naming(model) or model or ""


def _agent_side(turns: list[dict[str, Any]], key: str) -> Side:
    """p1, unless the logged opponent actions come from p1."""
    for turn in turns:
        other = turn.get(key)
        if isinstance(other, dict) and isinstance(other.get("source"), str):
            return "p2" if other["source"].startswith("p1") else "p1"
    return "p1"


# --------------------------------------------------------------------------------------------- rebuilt log
def _log_from_turns(turns: list[dict[str, Any]], lines_of: Any) -> tuple[list[str], int]:
    """The protocol log from each turn's kept events (one copy per battle turn: the longest), in turn order."""
    by_turn: dict[int, list[str]] = {}
    order: list[int] = []
    for turn in turns:
        lines = lines_of(turn)
        battle_turn = turn.get("battle_turn") if isinstance(turn.get("battle_turn"), int) else None
        key = battle_turn if battle_turn is not None else -1 - len(order)
        if key not in by_turn:
            order.append(key)
            by_turn[key] = lines
        elif len(lines) > len(by_turn[key]):
            by_turn[key] = lines
    raw = [line for key in order for line in by_turn[key]]
    return clean_log(raw)


def _token_lines(turn: dict[str, Any]) -> list[str]:
    tokens = turn.get("showdown_event_tokens")
    if not isinstance(tokens, list):
        return []
    out = []
    for event in tokens:
        if isinstance(event, list) and event:
            parts = [str(part) for part in event]
            out.append("|".join(parts) if parts[0] == "" else "|" + "|".join(parts))
    return out


def _rendered_lines(turn: dict[str, Any]) -> list[str]:
    """``move | p1a: X | Surf | p2a: Y`` (the reference's rendering; empty tokens were dropped) → a protocol line."""
    events = turn.get("showdown_events")
    if not isinstance(events, list):
        return []
    return ["|" + "|".join(part.strip() for part in event.split(" | ")) for event in events if isinstance(event, str)]


def _positions(log: list[str], battle_turns: list[int], side: Side) -> list[int]:
    """Where in ``log`` each decision was made: after ``|turn|N``; a second decision in one turn (a replacement
    after a faint) at the side's first switch after ``|upkeep|``."""
    cuts = turn_cuts(log)
    positions: list[int] = []
    previous_turn = None
    for battle_turn in battle_turns:
        if battle_turn == previous_turn and positions:
            start = positions[-1]
            end = cuts.get(battle_turn + 1, len(log) + 1) - 1
            upkeep = next((i for i in range(start, end) if log[i].startswith("|upkeep")), None)
            switch = next((i for i in range(upkeep or start, end) if log[i].startswith(f"|switch|{side}")), None)
            positions.append(switch if switch is not None else max(start, end))
        else:
            positions.append(max(positions[-1] if positions else 0,
                                 cuts.get(battle_turn, positions[-1] if positions else 0)))
        previous_turn = battle_turn
    return positions


_ACTIVE = re.compile(r"### Active (Self|Opponent)\n- Name: ([^\n|]{1,60})\n- HP: ([0-9]{1,3}(?:\.[0-9]+)?)%"
                     r"(?:\n- Status: ([A-Za-z]{3}))?")
_STATUSES = frozenset({"brn", "par", "slp", "frz", "psn", "tox"})
EARLY_NOTE = ("no event tokens (an early reference log): no protocol log; each decision's turn is its step's 'turn' "
              "(the file keeps no battle turn), the actives and their HP in the snapshots are read from its "
              "state_markdown")


def _state_lines(turns: list[dict[str, Any]], side: Side) -> list[list[str]] | None:
    """Tracker-only lines per step, from the actives its ``state_markdown`` names (``### Active Self`` / ``### Active
    Opponent``: name, HP %, status), for an early log that kept no events; None when no step names them."""
    steps: list[list[str]] = []
    for turn in turns:
        lines = []
        for who, name, hp, status in _ACTIVE.findall(str(turn.get("state_markdown") or "")):
            seat = side if who == "Self" else other(side)
            percent = round(float(hp))
            lines.append(f"|switch|{seat}a: {name}|{name}|{f'{percent}/100' if percent else '0 fnt'}")
            if status.lower() in _STATUSES and percent:
                lines.append(f"|-status|{seat}a: {name}|{status.lower()}")
        steps.append(lines)
    return steps if any(steps) else None


def _build(*, data: bytes, prefix: str, detail: str, fmt: str, tag: str | None, model: str | None, outcome: Any,
           finished: bool, final_reason: Any, turns: list[dict[str, Any]], log: list[str], dropped: int,
           decision_of: Any, side: Side, total_turns: Any = None) -> Recording:
    opponent = other(side)
    early = _state_lines(turns, side) if not log else None
    turn_key = "turn" if early else "battle_turn"  # an early log kept only the step number (else its place)
    battle_turns = [t[turn_key] if isinstance(t.get(turn_key), int) and t[turn_key] >= 0 else k + 1 if early else 0
                    for k, t in enumerate(turns)]
    names = player_names(log)
    names.setdefault(side, "agent")
    names.setdefault(opponent, "opponent")
    if early is not None:
        tracker_log = [line for lines in early for line in lines]
        positions = [sum(len(lines) for lines in early[:k + 1]) for k in range(len(early))]
        public = replay_public(tracker_log, fmt, names, positions)
        public = [replace(point, position=0) for point in public]  # the recording's own log stays empty
    else:
        positions = _positions(log, battle_turns, side)
        public = replay_public(log, fmt, names, positions)
    records = []
    previous = 0
    for k, (turn, battle_turn, point) in enumerate(zip(turns, battle_turns, public)):
        records.append({"index": k, "turn": battle_turn, "deciding": [side], "decisions": {side: decision_of(turn)},
                        "events": log[previous:point.position], "snapshot": point.snapshot})
        previous = max(previous, point.position)
    winner = {"won": side, "win": side, "lost": opponent, "loss": opponent}.get(str(outcome).lower())
    reason = "win" if winner else ("tie" if finished else "aborted")
    error = None if winner or finished else f"the reference run stopped before the battle ended ({final_reason})"
    note = EARLY_NOTE if early is not None else "log rebuilt from the events each turn kept"
    if dropped:
        note += f"; {dropped} chat/markup/timer lines dropped"
    imported = {"format": detail, "notes": note}
    return validated({
        "schema": "wolfeclick.recording/1", "id": imported_id(prefix, data, tag), "created": now(), "format": fmt,
        "seed": None,
        "players": {side: {"name": names[side], "policy": _policy(model),
                           "metadata": {**({"model": model} if model else {}), "import": imported}},
                    opponent: {"name": names[opponent], "policy": "", "metadata": {"import": imported}}},
        "result": {"winner": winner, "reason": reason,
                   "turns": max([last_turn(log), *battle_turns,
                                 *([total_turns] if early and isinstance(total_turns, int)
                                   and 0 <= total_turns <= 1000 else [])]),
                   "error": error[:300] if error else None},
        "versions": imported_versions().model_dump(), "log": log, "inputlog": [], "turns": records,
        "source": {"kind": "imported", "detail": detail},
    }, detail)


# --------------------------------------------------------------------------------------------- the two readers
def read_record_battle(raw: dict[str, Any], data: bytes) -> Recording:
    """A ``record_battle.py`` log → recording."""
    where = RECORD_FORMAT
    fmt = checked_format(format_id(_get(raw, "format", str, where, "")), where)
    turns = _get(raw, "turns", list, where)
    for n, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise ImportFormatError(f"{where}: turns[{n}] is not an object")
        _get(turn, "state_markdown", str, f"{where} turns[{n}]", "")
        _get(turn, "valid_actions", list, f"{where} turns[{n}]", [])
        _get(turn, "reward", (int, float), f"{where} turns[{n}]", 0.0)
        _get(turn, "battle_turn", int, f"{where} turns[{n}]", 0)
    side = _agent_side(turns, "opponent_action")
    log, dropped = _log_from_turns(turns, _token_lines)
    if not log:  # a log that kept the rendered events only
        log, dropped = _log_from_turns(turns, _rendered_lines)
    if not log and turns and _state_lines(turns, side) is None:
        raise ImportFormatError(f"{where}: no event tokens (an early reference log) and no state_markdown naming the "
                                "actives: nothing to show of the battle")

    def decision(turn: dict[str, Any]) -> dict[str, Any]:
        action, raw_text = _action(turn.get("chosen_action"))
        illegal = bool(turn.get("action_was_illegal"))
        info = {key: turn[key] for key in ("opponent_action", "cumulative_reward", "done", "done_reason")
                if turn.get(key) is not None}
        if isinstance(turn.get("post_state_markdown"), str):
            info["post_state"] = turn["post_state_markdown"]
        info["reference_step"] = turn.get("turn")
        return {"state": turn.get("state_markdown") or "", "legal_actions": _legal(turn.get("valid_actions") or []),
                "action": action, "command": "", "raw_output": raw_text, "illegal": illegal,
                "illegal_reason": "the reference flagged this action illegal (its fallback was played)"
                if illegal else None,
                "latency_ms": None, "reward": _reward(turn.get("reward")), "policy_info": info}

    return _build(data=data, prefix="openenv-record", detail=RECORD_FORMAT, fmt=fmt,
                  tag=_get(raw, "battle_tag", str, where, None),
                  model=_get(raw, "model", str, where, None), outcome=raw.get("outcome"),
                  finished=bool(raw.get("battle_finished")), final_reason=raw.get("final_reason"), turns=turns,
                  log=log, dropped=dropped, decision_of=decision, side=side, total_turns=raw.get("total_turns"))


def read_replay_battle(raw: dict[str, Any], data: bytes) -> Recording:
    """A ``replay_battle.json`` → recording (no state markdown: the viewer file never had it)."""
    where = REPLAY_FORMAT
    meta = _get(raw, "meta", dict, where)
    fmt = checked_format(format_id(_get(meta, "format", str, f"{where} meta", "")), where)
    turns = _get(raw, "turns", list, where)
    for n, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise ImportFormatError(f"{where}: turns[{n}] is not an object")
        _get(turn, "valid_actions", list, f"{where} turns[{n}]", [])
        _get(turn, "reward", (int, float), f"{where} turns[{n}]", 0.0)
        _get(turn, "battle_turn", int, f"{where} turns[{n}]", 0)
        _get(turn, "showdown_events", list, f"{where} turns[{n}]", [])
    side = _agent_side(turns, "opponent_action")
    log, dropped = _log_from_turns(turns, _rendered_lines)

    def decision(turn: dict[str, Any]) -> dict[str, Any]:
        action, raw_text = _action(turn.get("player_action"))
        info = {key: turn[key] for key in ("opponent_action", "cumulative_reward", "commentary",
                                           "player_active_before", "player_active_after",
                                           "opponent_active_before", "opponent_active_after")
                if turn.get(key) is not None}
        info["reference_step"] = turn.get("turn")
        return {"state": "", "legal_actions": _legal(turn.get("valid_actions") or []), "action": action,
                "command": "", "raw_output": raw_text, "latency_ms": None, "reward": _reward(turn.get("reward")),
                "policy_info": info}

    return _build(data=data, prefix="openenv-replay", detail=REPLAY_FORMAT, fmt=fmt,
                  tag=_get(meta, "battle_tag", str, where, None),
                  model=_get(meta, "model", str, where, None), outcome=meta.get("outcome"),
                  finished=bool(meta.get("natural_finish")), final_reason=meta.get("final_reason"), turns=turns,
                  log=log, dropped=dropped, decision_of=decision, side=side)
