"""Write the foreign-format test fixtures in tests/data/interop/ from battles played here on the embedded simulator.

    .venv/bin/python -m devkit.make_interop_fixtures [--out tests/data/interop]

Each fixture is written by this project from its own battles, following the field lists in issue 12 (the
OpenEnv-WolfeClick ``record_battle.py`` log and ``replay_battle.json``; Showdown's replay JSON and protocol log) and
issue 26 (a Showdown server's battle log with its input log, a saved replay page, a log without ``|tier|``, and a
doubles and a triples log played on the embedded simulator with every side choosing ``default``).
No file of anyone else is copied. The agent side records the reference's state markdown (this project's
``wolfeclick-v1`` profile reproduces it) and the reference's option names; the events each turn keeps are the
recorded spectator lines of that battle turn, split on ``|`` the way poke-env's observations held them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import Any

from devkit.server_logs import resim_output, server_log
from wolfeclick.battle.policy_specs import make_policy
from wolfeclick.battle.resim import spectator_log
from wolfeclick.battle.runner import play_battle
from wolfeclick.battle.schema import Recording
from wolfeclick.game.prompts import WolfeclickV1, v1_choice, v1_options, v1_state
from wolfeclick.policies.base import Decision, Observation

ROOT = Path(__file__).resolve().parents[1]

XSS = '<script>window.__pwned=1</script><img src=x id="pwned" onerror="window.__pwned=2">'


class Capturing:
    """A baseline that also notes, per decision, what the reference's agent would have been shown."""

    blocking = False

    def __init__(self, spec: str) -> None:
        self.inner = make_policy(spec)
        self.spec = spec
        self.profile = WolfeclickV1()
        self.seen: list[dict[str, Any]] = []

    def metadata(self) -> dict[str, Any]:
        return self.inner.metadata()

    def decide(self, observation: Observation) -> Decision:
        battle = observation.battle
        state = v1_state(battle, self.profile.history(battle))
        options = [{"action": c.action.kind, "choice": c.choice}
                   for c in v1_options(list(observation.legal_actions), battle)]
        decision = self.inner.decide(observation)
        chosen = ({"action": decision.action.kind, "choice": v1_choice(decision.action, battle)}
                  if decision.action is not None else {"raw": "no action"})
        self.seen.append({"battle_turn": battle.turn, "state": state, "options": options, "chosen": chosen})
        return decision


def turn_events(log: list[str]) -> dict[int, list[str]]:
    """Battle turn N → the lines after ``|turn|N`` up to and including ``|turn|N+1`` (turn 0: the preamble)."""
    out: dict[int, list[str]] = {0: []}
    current = 0
    for line in log:
        out[current].append(line)
        match = re.match(r"^\|turn\|(\d+)$", line)
        if match:
            current = int(match.group(1))
            out[current] = []
    return out


def record_battle_log(recording: Recording, seen: list[dict[str, Any]], model: str) -> dict[str, Any]:
    events = turn_events(recording.log)
    p1 = [t for t in recording.turns if "p1" in t.decisions]
    assert len(p1) == len(seen), (len(p1), len(seen))
    turns, total = [], 0.0
    for step, (record, note) in enumerate(zip(p1, seen), start=1):
        decision = record.decisions["p1"]
        reward = decision.reward.total + decision.reward.outcome
        total += reward
        lines = events.get(note["battle_turn"], [])
        tokens = [line.split("|") for line in lines]
        opponent = next(({"type": t[1], "choice": t[3].split(",")[0], "source": t[2], "confidence": "logged"}
                         for t in tokens if len(t) > 3 and t[1] in ("move", "switch") and t[2].startswith("p2")),
                        None)
        nxt = seen[step]["state"] if step < len(seen) else ""
        turns.append({
            "turn": step, "battle_turn": note["battle_turn"], "state_markdown": note["state"],
            "post_state_markdown": nxt, "valid_actions": note["options"], "chosen_action": note["chosen"],
            "opponent_action": opponent, "showdown_event_tokens": tokens,
            "showdown_events": [" | ".join(p for p in t if p) for t in tokens if any(t)],
            "reward": round(reward, 4), "cumulative_reward": round(total, 4),
            "action_was_illegal": decision.illegal, "done": step == len(seen),
            "done_reason": "battle_finished" if step == len(seen) else None,
        })
    won = recording.result.winner == "p1"
    outcome = "won" if won else ("lost" if recording.result.winner == "p2" else "unknown")
    return {
        "model": model, "format": recording.format, "outcome": outcome,
        "battle_tag": f"battle-{recording.format}-fixture{recording.seed}",
        "room_path": f"/battle-{recording.format}-fixture{recording.seed}", "natural_finish": True,
        "final_reason": "battle_finished", "battle_finished": True, "total_reward": round(total, 4),
        "total_turns": len(turns), "turns": turns,
    }


def _active(markdown: str, heading: str) -> dict[str, Any]:
    match = re.search(rf"### {heading}\n- Name: (.+?)\n- HP: ([\d.]+)%\n- Status: (.+?)\n", markdown)
    if not match:
        return {"name": "unknown", "hp": None, "status": "unknown"}
    return {"name": match.group(1).strip(), "hp": float(match.group(2)), "status": match.group(3).strip()}


def replay_battle(log: dict[str, Any]) -> dict[str, Any]:
    """The viewer file, from the field list: actives before/after, actions, rewards, commentary, events."""
    turns, player, opponent = [], {}, {}
    for turn in log["turns"]:
        before = {"player": _active(turn["state_markdown"], "Active Self"),
                  "opponent": _active(turn["state_markdown"], "Active Opponent")}
        after = {"player": _active(turn["post_state_markdown"], "Active Self"),
                 "opponent": _active(turn["post_state_markdown"], "Active Opponent")}
        player.setdefault(before["player"]["name"], {"name": before["player"]["name"]})
        for mon in (before["opponent"], after["opponent"]):
            if mon["name"] != "unknown":
                opponent.setdefault(mon["name"], {"name": mon["name"]})
        commentary = [f"{e.split(' | ')[1]} used {e.split(' | ')[2]}." for e in turn["showdown_events"]
                      if e.startswith("move | ") and e.count(" | ") >= 2]
        turns.append({
            "turn": turn["turn"], "battle_turn": turn["battle_turn"],
            "player_active_before": before["player"], "opponent_active_before": before["opponent"],
            "player_action": turn["chosen_action"], "opponent_action": turn["opponent_action"],
            "player_active_after": after["player"], "opponent_active_after": after["opponent"],
            "reward": turn["reward"], "cumulative_reward": turn["cumulative_reward"], "commentary": commentary,
            "showdown_events": turn["showdown_events"], "valid_actions": turn["valid_actions"],
        })
    meta = {"title": "OpenEnv-WolfeClick Replay", **{k: log[k] for k in ("model", "format", "outcome")},
            "natural_finish": log["natural_finish"], "final_reason": log["final_reason"],
            "battle_tag": log["battle_tag"], "room_path": log["room_path"], "total_turns": log["total_turns"],
            "total_reward": log["total_reward"]}
    return {"meta": meta, "teams": {"player": list(player.values()), "opponent": list(opponent.values())},
            "turns": turns}


def human_room(log: list[str], hostile: bool) -> list[str]:
    """The recorded log as a human battle room would have served it: joins, chat, timers, ``|html|`` notices."""
    out = ["|j|☆Alice", "|j|☆Bob", "|t:|1764579600"]
    for line in log:
        out.append(line)
        if line.startswith("|turn|"):
            out.append(f"|t:|{1764579600 + int(line.split('|')[2]) * 30}")
        if line == "|turn|2":
            out += ["|c|☆Alice|gl hf", "|c|☆Bob|you too", "|inactive|Battle timer is ON: inactive players will "
                    "automatically lose when time's up. (requested by Bob)"]
            if hostile:
                out += [f"|html|<div class=\"broadcast-blue\">{XSS}</div>", f"|c|☆Bob|{XSS}", f"|raw|{XSS}",
                        f"|uhtml|notice|{XSS}"]
    return out + ["|c|☆Alice|gg", "|l|☆Bob"]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "interop")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    agent = Capturing("heuristic")
    opponent = make_policy("random")
    recording = await play_battle(agent, opponent, format_id="gen4randombattle", seed=3)
    record = record_battle_log(recording, agent.seen, model="heuristic (a WolfeClick Arena baseline, fixture)")
    write(args.out / "record_battle.json", record)
    write(args.out / "replay_battle.json", replay_battle(record))

    other = await play_battle(make_policy("maxdamage"), make_policy("heuristic"),
                              format_id="gen9randombattle", seed=5)
    room = renamed(other, {"p1": "Alice", "p2": "Bob"})
    write(args.out / "showdown_replay.json", {
        "id": "gen9randombattle-2000000005", "formatid": "gen9randombattle", "format": "[Gen 9] Random Battle",
        "players": ["Alice", "Bob"], "log": "\n".join(human_room(room, hostile=False)) + "\n",
        "uploadtime": 1764580000, "views": 3, "rating": None, "private": 0, "password": None,
    })
    (args.out / "showdown_hostile.log").write_text("\n".join(human_room(room, hostile=True)) + "\n",
                                                   encoding="utf-8")
    (args.out / "showdown_tierless.log").write_text(
        "\n".join(line for line in room if not line.startswith("|tier|")) + "\n", encoding="utf-8")
    (args.out / "showdown_replay.html").write_text(replay_page("gen9randombattle-2000000005", "[Gen 9] Random Battle",
                                                               human_room(room, hostile=True)), encoding="utf-8")

    served = await play_battle(make_policy("heuristic"), make_policy("random"), format_id="gen9randombattle",
                               seed=7)
    write(args.out / "showdown_server.json", await server_log(served))
    for name, fmt, team in (("showdown_doubles.log", "gen9randomdoublesbattle", None),
                            ("showdown_triples.log", "gen6triplescustomgame", SIMPLE_TEAM)):
        (args.out / name).write_text("\n".join(await default_battle(fmt, team)) + "\n", encoding="utf-8")
    print(f"wrote 9 fixtures to {args.out} ({len(recording.turns)}, {len(other.turns)} and {len(served.turns)} "
          "decision points)")


SIMPLE_TEAM = "]".join(f"{species}|||{ability}|{moves}|||||||" for species, ability, moves in (
    ("Pikachu", "static", "thunderbolt,quickattack"), ("Eevee", "runaway", "tackle,bite"),
    ("Bulbasaur", "overgrow", "vinewhip,tackle"), ("Squirtle", "torrent", "watergun,tackle"),
    ("Charmander", "blaze", "ember,scratch"), ("Pidgey", "keeneye", "gust,tackle")))
"""A packed team for a custom-game format (no validator in a re-simulation)."""


async def default_battle(fmt: str, team: str | None) -> list[str]:
    """The spectator log of a battle in ``fmt`` (doubles, triples: the runner plays singles only) where both sides
    send ``default`` at every request, fed as one input log to the simulator's ``resim``."""
    lines = [">start " + json.dumps({"formatid": fmt, "seed": [1, 2, 3, 4]})]
    for side, name, seed in (("p1", "Alice", [5, 6, 7, 8]), ("p2", "Bob", [9, 10, 11, 12])):
        lines.append(f">player {side} " + json.dumps({"name": name, "seed": seed, **({"team": team} if team else {})}))
    lines += [">p1 default", ">p2 default"] * 200  # a choice sent while a side waits is refused and changes nothing
    return spectator_log(await resim_output(lines))


def replay_page(replay_id: str, tier: str, log: list[str]) -> str:
    """The page Showdown's client saves ("Download replay"): the log in a ``battle-log-data`` script block, every
    slash escaped, then the replay viewer's loader script."""
    body = "\n".join(log).replace("/", "\\/")
    return (
        "<!DOCTYPE html>\n<meta charset=\"utf-8\" />\n<!-- version 1 -->\n"
        f"<title>{tier} replay: Alice vs. Bob</title>\n"
        "<style>\nhtml,body {font-family:Verdana, sans-serif;font-size:10pt;margin:0;padding:0;}\n</style>\n"
        "<div class=\"wrapper replay-wrapper\" style=\"max-width:1180px;margin:0 auto\">\n"
        f"<input type=\"hidden\" name=\"replayid\" value=\"{replay_id}\" />\n"
        "<div class=\"battle\"></div><div class=\"battle-log\"></div><div class=\"replay-controls\"></div>"
        "<div class=\"replay-controls-2\"></div>\n"
        f"<h1 style=\"font-weight:normal;text-align:center\"><strong>{tier}</strong><br />Alice vs. Bob</h1>\n"
        f"<script type=\"text/plain\" class=\"battle-log-data\">{body}</script>\n</div>\n"
        "<script>\nlet daily = Math.floor(Date.now()/1000/60/60/24);document.write('<script "
        "src=\"https://play.pokemonshowdown.com/js/replay-embed.js?version'+daily+'\"></'+'script>');\n</script>\n"
    )


def renamed(recording: Recording, names: dict[str, str]) -> list[str]:
    """The log with the players renamed (as humans on a server would be named)."""
    out = []
    for line in recording.log:
        for side, name in names.items():
            old = recording.players[side].name
            if line.startswith(f"|player|{side}|"):
                line = line.replace(f"|player|{side}|{old}|", f"|player|{side}|{name}|")
            elif line == f"|win|{old}":
                line = f"|win|{name}"
        out.append(line)
    return out


def write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
