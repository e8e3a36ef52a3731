"""Showdown-server-shaped battle logs, written here from battles played here (for tests, fixtures and the bench).

A Showdown server writes one JSON file per battle (``room-battle.ts`` ``logBattle``): the simulator's ``end`` data
(``winner``, ``seed``, ``turns``, ``p1``, ``p2``, ``p1team``, ``p2team``, ``score``, ``inputLog``) plus ``log`` (the
room's omniscient log, ``getLog(-1)``: exact HP, joins, timers, chat, rating lines), ``p1rating``/``p2rating``,
``endType``, ``timestamp``, ``roomid`` and ``format``. Its input log has the server's ``>version`` lines and the
``avatar`` and ``rating`` options the server passes. ``server_log`` builds exactly that from a recording: the
battle is re-run on the embedded simulator from the recording's input log, renamed to the given players.
"""

from __future__ import annotations

import json
from typing import Any

from wolfeclick.battle.schema import Recording
from wolfeclick.interop.serverlog import omniscient_log
from wolfeclick.sim.process import SimProcess

AVATARS = {"p1": "265", "p2": "ethan"}
RATINGS = {"p1": 1523, "p2": 1498}


def renamed_input(inputlog: list[str], names: dict[str, str]) -> list[str]:
    """The input log with the players renamed (the battle itself does not depend on names)."""
    out = []
    for line in inputlog:
        if line.startswith(">player "):
            side = line[8:10]
            options = json.loads(line[11:])
            options["name"] = names[side]
            line = f">player {side} " + json.dumps(options, separators=(",", ":"))
        out.append(line)
    return out


def server_input(inputlog: list[str]) -> list[str]:
    """What a server's input log holds for the same battle: its build lines and the avatar/rating options."""
    out = [">version 6d5b9ddd1cdb64e01b54d9e2e0f3b8ee0e6f6f35", ">version-origin 6d5b9ddd1cdb64e01b54d9e2e0f3b8ee0e6f6f35"]
    for line in inputlog:
        if line.startswith(">player "):
            side = line[8:10]
            options = json.loads(line[11:])
            line = f">player {side} " + json.dumps({"name": options["name"], "avatar": AVATARS[side],
                                                     **{k: v for k, v in options.items() if k != "name"},
                                                     "rating": RATINGS[side]}, separators=(",", ":"))
        out.append(line)
    return out


def room_log(log: list[str], names: dict[str, str]) -> list[str]:
    """The simulator's omniscient lines as a server room keeps them: a timestamp, joins, the room's avatars and
    ratings on ``|player|``, turn timers, chat, and the rating lines it adds at the end."""
    out = [f"|j|☆{names['p1']}", f"|j|☆{names['p2']}", "|t:|1764579600"]
    for line in log:
        if line.startswith("|t:|"):
            continue  # the simulator's wall-clock stamps: ours below keep the file the same from run to run
        if line.startswith("|player|"):
            side = line.split("|")[2]
            line = f"|player|{side}|{names[side]}|{AVATARS[side]}|{RATINGS[side]}"
        out.append(line)
        if line.startswith("|turn|"):
            out.append(f"|t:|{1764579600 + int(line.split('|')[2]) * 30}")
        if line == "|turn|2":
            out += [f"|c|☆{names['p1']}|gl hf", "|inactive|Battle timer is ON: inactive players will automatically "
                    f"lose when time's up. (requested by {names['p2']})"]
    return out + [f"|raw|{names['p1']}'s rating: 1523 &rarr; <strong>1540</strong><br />(+17 for winning)",
                  f"|l|☆{names['p2']}"]


async def resim_output(lines: list[str], process: SimProcess | None = None) -> list[str]:
    """Every chunk the simulator says when fed ``lines`` as one input log (on ``process``, else a fresh one)."""
    if process is not None:
        return (await process.call("resim", lines=lines))["out"]
    process = SimProcess()
    await process.start()
    try:
        return (await process.call("resim", lines=lines))["out"]
    finally:
        await process.close()


async def server_log(recording: Recording, names: dict[str, str] | None = None,
                     inputlog: list[str] | None = None, battle_id: str = "gen9randombattle-2100000001",
                     process: SimProcess | None = None) -> dict[str, Any]:
    """A server's battle log of ``recording`` (or of ``inputlog``, its input log changed), players ``names``;
    ``process`` re-runs it (else a simulator is started for it)."""
    names = names or {"p1": "Alice", "p2": "Bob"}
    lines = renamed_input(inputlog if inputlog is not None else recording.inputlog, names)
    out = await resim_output(lines, process)
    end = next((json.loads(chunk.split("\n", 1)[1]) for chunk in out if chunk.startswith("end\n")), {})
    log = room_log(omniscient_log(out), names)
    fmt = recording.format
    winner = end.get("winner", "")
    return {
        "winner": winner, "seed": end.get("seed"), "turns": end.get("turns"),
        "p1": names["p1"], "p2": names["p2"],
        "p1team": end.get("p1team", []), "p2team": end.get("p2team", []), "score": end.get("score", [0, 0]),
        "inputLog": server_input(lines), "log": log,
        "p1rating": {"entryid": "1", "userid": names["p1"].lower(), "w": "3", "l": "2", "t": "0", "gxe": 61.2,
                     "r": 1523.4, "rd": 84.1, "elo": RATINGS["p1"], "oldelo": 1501},
        "p2rating": {"entryid": "2", "userid": names["p2"].lower(), "w": "1", "l": "1", "t": "0", "gxe": 48.0,
                     "r": 1498.0, "rd": 101.2, "elo": RATINGS["p2"], "oldelo": 1520},
        "endType": "normal", "timestamp": "Mon Dec 01 2025 09:00:00 GMT+0000 (Coordinated Universal Time)",
        "roomid": f"battle-{battle_id}", "format": fmt, "id": battle_id,
    }
