"""Prompt profiles. ``wolfeclick-v1`` must give, for the same battle state, the very text the published checkpoints
were trained on: checked against a prompt printed in the reference's training notebook and against 400 decision
points of six real gen4 random battles whose expected texts come from the reference formatter itself (run on the
poke-env 0.8.3 it used; see docs/llm.md for how ``tests/data/llm_v1_golden.json.gz`` was made)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from devkit.llm_fixtures import golden_battles, notebook_state, observation, v1_messages
from wolfeclick.errors import InputError
from wolfeclick.game.actions import PARSER_MODES, parse_action
from wolfeclick.game.prompts import V1_SYSTEM_PROMPT, ArenaV1, WolfeclickV1, make_profile
from wolfeclick.llm.chat import chat_prompt

# The system prompt of trainer.ipynb / watch_battle.ipynb / record_battle.py, character for character.
REFERENCE_SYSTEM = (
    'You are a competitive Pokemon battler. Analyse the battle state below and choose exactly one action. You MUST '
    'output ONLY a single JSON object \u2014 no explanation, no markdown fences, just the raw JSON.\n'
    '{"action": "move" | "switch", "choice": "Exact Name of Move or Pokemon"}'
)

# The user message of the rollout row that trainer.ipynb printed ("sample row: …", GRPO run 3, a real battle).
NOTEBOOK_USER = (
    "## Part A: Active Field\n### Active Self\n- Name: hitmonchan\n- HP: 100.0%\n- Status: Healthy\n"
    "- Ability: ironfist\n- Item: leftovers\n- Stat Modifiers: None\n### Active Opponent\n- Name: dugtrio\n"
    "- HP: 100.0%\n- Status: Healthy\n- Speed Range: 220-372\n\n## Part B: Full Self Roster\n"
    "- hitmonchan HP:100% OK Item:leftovers\n  Moves: closecombat(F120) | rapidspin(N20) | icepunch(I75) | "
    "machpunch(F40)\n- garchomp HP:100% OK Item:leftovers\n  Moves: earthquake(G100) | substitute(N0) | "
    "dragonclaw(D80) | swordsdance(N0)\n- rapidash HP:100% OK Item:leftovers\n  Moves: flareblitz(F120) | "
    "morningsun(N0) | willowisp(F0) | megahorn(B120)\n- palkia HP:100% OK Item:lustrousorb\n  Moves: "
    "thunderwave(E0) | spacialrend(D100) | fireblast(F120) | hydropump(W120)\n- vigoroth HP:100% OK Item:leftovers\n"
    "  Moves: nightslash(D70) | slackoff(N0) | suckerpunch(D80) | return(N0)\n- sandslash HP:100% OK "
    "Item:leftovers\n  Moves: earthquake(G100) | substitute(N0) | swordsdance(N0) | stoneedge(R100)\n\n"
    "## Part C: Opponent History\n- dugtrio | Last HP: 100.0% | Status: Healthy\n  - Revealed item: unknown_item\n\n"
    "You must choose exactly one action and output pure JSON with this schema:\n\n"
    '{"action": "move" | "switch", "choice": "Exact Name of Move or Pokemon"}\n\n'
    "Valid options for this state:\n- action: 'move', choice: 'closecombat'\n- action: 'move', choice: 'rapidspin'\n"
    "- action: 'move', choice: 'icepunch'\n- action: 'move', choice: 'machpunch'\n"
    "- action: 'switch', choice: 'garchomp'\n- action: 'switch', choice: 'rapidash'\n"
    "- action: 'switch', choice: 'palkia'\n- action: 'switch', choice: 'vigoroth'\n"
    "- action: 'switch', choice: 'sandslash'"
)

def test_v1_reproduces_the_training_notebook_prompt() -> None:
    tracker, request = notebook_state()
    prompt = WolfeclickV1().build(observation(tracker, request))
    assert prompt.messages == [{"role": "system", "content": REFERENCE_SYSTEM},
                               {"role": "user", "content": NOTEBOOK_USER}]
    assert V1_SYSTEM_PROMPT == REFERENCE_SYSTEM
    assert [c.text for c in prompt.candidates][:2] == ['{"action": "move", "choice": "closecombat"}',
                                                       '{"action": "move", "choice": "rapidspin"}']
    assert prompt.candidates[4].text == '{"action": "switch", "choice": "garchomp"}'


def test_v1_chat_template_text(tiny_checkpoint) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_checkpoint))
    tracker, request = notebook_state()
    prompt = chat_prompt(WolfeclickV1(), tokenizer, observation(tracker, request))
    # the tiny template renders a system + user chat as Qwen3-4B-Instruct-2507's does (no thinking block)
    assert prompt.text == (f"<|im_start|>system\n{REFERENCE_SYSTEM}<|im_end|>\n<|im_start|>user\n{NOTEBOOK_USER}"
                           "<|im_end|>\n<|im_start|>assistant\n")


DRIFT = Path(__file__).parent / "data" / "llm_v1_drift.json.gz"
"""Gen4 battles where Transform and Trace made the earlier v1 emulation drift (issue 9, cases a-d), laid out like the
golden battles plus ``case``, ``what`` and ``old_differs_at`` (the decision points the earlier emulation got wrong).
Streams from ``devkit/v1_streams.py``; expected texts from the reference formatter on poke-env 0.8.3."""


def drift_battles() -> list[dict]:
    with gzip.open(DRIFT, "rt") as handle:
        return json.load(handle)["battles"]


@pytest.mark.parametrize("battle", golden_battles(), ids=lambda b: f"seed{b['seed']}")
def test_v1_matches_the_reference_formatter_on_real_battles(battle) -> None:
    found = v1_messages(battle)
    assert len(found) == len(battle["expected"]) and len(found) > 20
    for checked, ((user, candidates), want) in enumerate(zip(found, battle["expected"])):
        assert user == want, f"decision {checked} differs"
        # every listed option is a candidate, and its answer text is the reference's json.dumps of it
        listed = [line for line in want.splitlines() if line.startswith("- action: ")]
        assert [f"- action: {c.action.kind!r}, choice: {c.choice!r}" for c in candidates] == listed
        assert all(json.loads(c.text) == {"action": c.action.kind, "choice": c.choice} for c in candidates)


@pytest.mark.parametrize("battle", drift_battles(), ids=lambda b: f"{b['case']}-seed{b['seed']}")
def test_v1_after_transform_and_trace_matches_the_reference(battle) -> None:
    """Issue 9 (a)-(d): battles where Transform and Trace made the earlier emulation drift from the reference."""
    found = [user for user, _ in v1_messages(battle)]
    assert len(found) == len(battle["expected"])
    assert battle["old_differs_at"], "a drift case must have been a drift"
    for index in battle["old_differs_at"] + list(range(len(found))):
        assert found[index] == battle["expected"][index], f"{battle['case']}: decision {index} differs"


FIDELITY = Path(__file__).parent / "data" / "llm_v1_fidelity.json.gz"
"""Gen4 battles for issue 30, laid out like the drift battles: abilities revealed by immunities and forme changes
after a Transform or Trace (A), poke-env 0.8's four-move window (B), our own transformed Ditto's Hidden Power and
Return (C), and a status cured silently by Healing Wish. Expected texts from ``devkit/v1_reference.py`` (poke-env
0.8.3's state, written in the reference format; it reproduces every expected text of the two files above)."""


GIVEN_TEAMS = Path(__file__).parent / "data" / "llm_v1_given_teams.json.gz"
"""Issue 30 with given teams (gen4ubers, ``tests/data/v1_teams/gen4ubers``): Worry Seed, gen 4's Skill Swap, Mimic,
Sketch, our own Mew and Porygon2 transforming, and an ability event before a U-turn's wait request; same layout,
each battle cut eight decision points after its first drift (the U-turn case later, where it happens)."""


def fidelity_battles() -> list[dict]:
    battles = []
    for path in (FIDELITY, GIVEN_TEAMS):
        with gzip.open(path, "rt") as handle:
            battles += json.load(handle)["battles"]
    return battles


@pytest.mark.parametrize("battle", fidelity_battles(), ids=lambda b: f"{b['case']}-seed{b['seed']}")
def test_v1_reads_abilities_moves_and_statuses_as_poke_env_0_8_did(battle) -> None:
    """Issue 30: each battle was a drift before; every decision point, text and listed options, matches now, and each
    listed option is what both parsers read back from its answer (so score and generate mode use the trained ids)."""
    found = v1_messages(battle)
    assert len(found) == len(battle["expected"])
    assert battle["old_differs_at"], "a drift case must have been a drift"
    for index in battle["old_differs_at"] + list(range(len(found))):
        user, candidates = found[index]
        assert user == battle["expected"][index], f"{battle['case']}: decision {index} differs"
        listed = [(c.action, c.choice) for c in candidates]
        legal = [c.action for c in candidates]
        for candidate in candidates:
            for mode in PARSER_MODES:
                assert parse_action(candidate.text, legal, mode=mode, listed=listed).action == candidate.action


def test_v1_keeps_one_history_per_battle() -> None:
    profile = WolfeclickV1()
    first, request = notebook_state()
    second, _ = notebook_state()
    assert profile.history(first.battle) is profile.history(first.battle)
    assert profile.history(first.battle) is not profile.history(second.battle)


def test_arena_profile_uses_the_project_state() -> None:
    tracker, request = notebook_state()
    obs = observation(tracker, request)
    obs.state = "## Part A: Active Field\n(state)\n"
    prompt = ArenaV1().build(obs)
    user = prompt.messages[1]["content"]
    assert user.startswith("## Part A: Active Field\n(state)") and "## Legal actions" in user
    assert [c.text for c in prompt.candidates][0] == '{"action": "move", "choice": "closecombat"}'
    assert all(c.text in user for c in prompt.candidates)


def test_profile_names() -> None:
    assert make_profile("v1").name == make_profile("wolfeclick-v1").name == "wolfeclick-v1"
    assert make_profile(None).name == make_profile("default").name == "arena-v1"
    with pytest.raises(InputError, match="unknown prompt profile"):
        make_profile("nope")
