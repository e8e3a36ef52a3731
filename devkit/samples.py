"""Recordings to test and measure with: the committed samples, a hostile one (HTML in every free-text field), a
long one made by repeating a real battle, and a seeded training episode played to its end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from devkit import ROOT

SAMPLE_NAMES = ("gen4randombattle-s1-heuristic-vs-maxdamage", "gen4randombattle-s1-heuristic-vs-random",
                "gen9randombattle-s1-heuristic-vs-maxdamage", "gen9randombattle-s1-heuristic-vs-random")
SAMPLES = [ROOT / "recordings" / f"{name}.json" for name in SAMPLE_NAMES]
"""The committed samples by name: the recordings folder is also where a developer's own battles land (`play`,
`serve-env`), and a glob took those too (400 of them copied into every test app, one picked as "the" sample)."""
SAMPLE_ID = "gen9randombattle-s1-heuristic-vs-random"
HOSTILE_ID = "hostile-recording"
XSS = '<script>window.__pwned=1</script><img src=x id="pwned" onerror="window.__pwned=2">${7*7}'


def sample_path() -> Path:
    path = ROOT / "recordings" / f"{SAMPLE_ID}.json"
    return path if path.exists() else SAMPLES[0]


def sample_data() -> dict:
    return json.loads(sample_path().read_text(encoding="utf-8"))


def hostile_data() -> dict:
    """A valid recording whose every free-text field holds HTML/script."""
    data = sample_data()
    data["id"] = HOSTILE_ID
    for side in ("p1", "p2"):
        data["players"][side]["name"] = f"{side}{XSS}"
        data["players"][side]["policy"] = f"{side}{XSS}"
    data["log"] = [line.replace("Frosmoth", "Frosmoth" + XSS) for line in data["log"]] + [f"|html|{XSS}", f"|raw|{XSS}"]
    data["format"] = "gen9randombattle" + XSS
    data["result"]["error"] = XSS
    for turn in data["turns"]:
        turn["events"] = [line.replace("Frosmoth", "Frosmoth" + XSS) for line in turn["events"]] + [f"|-message|{XSS}"]
        for snap in turn["snapshot"].values():
            for mon in snap["team"]:
                mon["species"] = mon["species"] + XSS
            if snap["active"]:
                snap["active"] = snap["active"] + XSS
            snap["active_status"] = XSS if snap["active_status"] is None else snap["active_status"]
        for decision in turn["decisions"].values():
            decision["state"] = "</pre></details>" + XSS + decision["state"]
            decision["raw_output"] = "</pre>" + XSS
            decision["illegal"] = True
            decision["illegal_reason"] = XSS
            decision["command"] = XSS
            decision["rejected"] = [XSS]
            decision["policy_info"] = {"candidates": [{"action": "move", "choice": XSS, "logprob": -1.0}],
                                       "note": XSS, "prompt": XSS}
            decision["reward"]["components"][XSS] = 1.0
    return data


def long_recording(replay_id: str, turns: int = 300, base_path: Path | None = None) -> dict:
    """A valid recording of ``turns`` game turns, made by repeating a real battle's decision points (gen4
    heuristic vs random, seed 1, unless ``base_path``): what a long replay looks like to the viewer."""
    base_path = base_path or ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"
    base = json.loads(base_path.read_text(encoding="utf-8"))
    body = base["turns"][1:] or base["turns"]
    out = [json.loads(json.dumps(base["turns"][0]))]
    turn_no, previous_source = out[0]["turn"], out[0]["turn"]
    while turn_no < turns:
        for record in body:
            if record["turn"] != previous_source:  # decision points of one source turn stay in one turn
                turn_no += 1
            previous_source = record["turn"]
            if turn_no > turns:
                break
            copy = json.loads(json.dumps(record))
            copy["index"], copy["turn"] = len(out), turn_no
            copy["events"] = [f"|turn|{turn_no}" if e.startswith("|turn|") else e for e in copy["events"]]
            out.append(copy)
    turn_no = out[-1]["turn"]
    data = dict(base)
    data["id"] = replay_id
    data["turns"] = out
    data["log"] = [line for record in out for line in record["events"]] + ["|", f"|win|{base['players']['p1']['name']}"]
    data["result"] = {"winner": "p1", "reason": "win", "turns": turn_no, "error": None}
    return data


def hostile_bytes() -> bytes:
    return json.dumps(hostile_data()).encode()


def play_random_episode(env: Any, seed: int) -> Path:
    """Play one ``ShowdownEnv`` episode (``action="discrete"``) to its end, each action drawn from the legal ones by a
    generator seeded with ``seed``; the path its recording was saved to."""
    import numpy as np

    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = terminated or truncated
    return Path(info["recording_path"])

