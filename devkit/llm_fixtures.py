"""Helpers for the LLM tests: the tiny offline Qwen3 checkpoint of ``wolfeclick.llm.tiny`` (a base, a tokenizer
with a chat template, two LoRA adapters; see its docstring), a fake warm Hub cache, golden battles and their v1
prompts. The fixtures built from them (``tiny_checkpoint``, ``tiny_tool_checkpoint``, ``hub_cache``) are in
``tests/conftest.py``.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import random
import shutil
from pathlib import Path

from devkit import ROOT

logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from wolfeclick.battle.tracker import SideTracker  # noqa: E402
from wolfeclick.game.actions import legal_actions  # noqa: E402
from wolfeclick.game.prompts import WolfeclickV1  # noqa: E402
from wolfeclick.llm.checkpoint_specs import PRESET_BASE, PRESET_REPO  # noqa: E402
from wolfeclick.llm.tiny import (  # noqa: E402,F401  (re-exported for the tests that import them from here)
    CHAT_TEMPLATE,
    SPECIAL_TOKENS,
    build_tiny_checkpoint,
    build_tokenizer,
    tool_chat_template,
)
from wolfeclick.policies.base import Observation  # noqa: E402

# ------------------------------------------------------------------------------------------- a warm Hub cache

SHAS = {"base": "1" * 40, "grpo-qwen3-4b-run1": "a" * 40, "grpo-qwen3-4b-run3": "c" * 40}


def fake_hub_cache(root: Path, tiny: Path) -> Path:
    """A Hugging Face cache holding the preset repos, filled with the tiny checkpoint (so presets load offline)."""
    def snapshot(repo: str, ref: str, sha: str, source: Path) -> None:
        folder = root / f"models--{repo.replace('/', '--')}"
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / ref).write_text(sha)
        target = folder / "snapshots" / sha
        target.mkdir(parents=True, exist_ok=True)
        for item in source.iterdir():
            if item.is_file():
                shutil.copy(item, target / item.name)

    snapshot(PRESET_BASE, "main", SHAS["base"], tiny)
    snapshot(PRESET_REPO, "grpo-qwen3-4b-run1", SHAS["grpo-qwen3-4b-run1"], tiny / "adapters" / "a")
    snapshot(PRESET_REPO, "grpo-qwen3-4b-run3", SHAS["grpo-qwen3-4b-run3"], tiny / "adapters" / "b")
    return root


# ------------------------------------------------------------------------------------------- battle states

GOLDEN = ROOT / "tests" / "data" / "llm_v1_golden.json.gz"
"""Six real gen4 random battles (p1 streams) with the reference formatter's user message per decision point."""


def golden_battles() -> list[dict]:
    """``[{seed, p1: [stream chunks], expected: [user message per decision point]}]``."""
    with gzip.open(GOLDEN, "rt") as handle:
        return json.load(handle)["battles"]


NOTEBOOK_TEAM = [  # species, level, hp, item, ability, moves (the notebook's first turn)
    ("Hitmonchan", 88, 251, "leftovers", "ironfist", ["closecombat", "rapidspin", "icepunch", "machpunch"]),
    ("Garchomp", 76, 262, "leftovers", "roughskin", ["earthquake", "substitute", "dragonclaw", "swordsdance"]),
    ("Rapidash", 86, 246, "leftovers", "flashfire", ["flareblitz", "morningsun", "willowisp", "megahorn"]),
    ("Palkia", 73, 258, "lustrousorb", "pressure", ["thunderwave", "spacialrend", "fireblast", "hydropump"]),
    ("Vigoroth", 86, 282, "leftovers", "vitalspirit", ["nightslash", "slackoff", "suckerpunch", "return"]),
    ("Sandslash", 86, 254, "leftovers", "sandveil", ["earthquake", "substitute", "swordsdance", "stoneedge"]),
]


def observation(tracker: SideTracker, request: dict) -> Observation:
    """The observation p1 would get from this tracker and request (empty project state, seeded rng)."""
    return Observation("p1", tracker.battle.turn, "gen4randombattle", tracker.battle, request,
                       legal_actions(request), "", random.Random(0))


def notebook_state() -> tuple[SideTracker, dict]:
    """The first turn of the rollout prompt trainer.ipynb printed: hitmonchan (and team) vs dugtrio."""
    tracker = SideTracker("nb", "p1", "Alice", "gen4randombattle")
    request = {
        "active": [{"moves": [{"move": m, "id": m, "pp": 16, "maxpp": 16, "target": "normal", "disabled": False}
                              for m in NOTEBOOK_TEAM[0][5]]}],
        "side": {"name": "Alice", "id": "p1", "pokemon": [
            {"ident": f"p1: {s}", "details": f"{s}, L{lv}, M", "condition": f"{hp}/{hp}", "active": i == 0,
             "stats": {"atk": 200, "def": 200, "spa": 200, "spd": 200, "spe": 200}, "moves": moves,
             "baseAbility": ability, "item": item, "pokeball": "pokeball"}
            for i, (s, lv, hp, item, ability, moves) in enumerate(NOTEBOOK_TEAM)]},
        "rqid": 1,
    }
    tracker.feed(["|player|p1|Alice||", "|player|p2|Bob||", "|gen|4", "|start",
                  "|switch|p1a: Hitmonchan|Hitmonchan, L88, M|251/251", "|switch|p2a: Dugtrio|Dugtrio, L86, M|100/100",
                  "|turn|1"])
    tracker.feed_request(request)
    return tracker, request


def v1_messages(battle: dict, format_id: str = "gen4randombattle") -> list[tuple[str, list]]:
    """Replay a battle's p1 stream into a tracker; at each decision point, the v1 user message and candidates
    (also ``devkit/v1_streams.py --compare``'s)."""
    tracker = SideTracker(str(battle["seed"]), "p1", "Alice", format_id)
    profile = WolfeclickV1()
    found = []
    for chunk in battle["p1"]:
        for line in chunk.split("\n"):
            if not line.startswith("|request|"):
                tracker.feed([line])
                continue
            request = json.loads(line[len("|request|"):] or "{}")
            if not request:
                continue
            tracker.feed_request(request)
            if request.get("wait") or request.get("teamPreview"):
                continue
            prompt = profile.build(observation(tracker, request))
            found.append((prompt.messages[1]["content"], prompt.candidates))
    return found
