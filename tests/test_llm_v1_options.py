"""Every option the ``wolfeclick-v1`` prompt lists, answered verbatim as the reference's JSON, parses back to that
action in both parser modes: checked at every decision point of seeded random battles on the real simulator (both
sides), and for Hidden Power in every generation that has it (gen 2–7)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest

from wolfeclick.battle.runner import play_battle
from wolfeclick.game.actions import PARSER_MODES, parse_action
from wolfeclick.game.prompts import WolfeclickV1
from wolfeclick.policies.base import Decision, Observation


class ListedOptionsChecker:
    """Plays a random legal action; before that, answers every listed option verbatim and parses it back."""

    blocking = False

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.profile = WolfeclickV1()
        self.seen: Counter[str] = Counter()
        self.failures: list[str] = []

    def metadata(self) -> dict[str, Any]:
        return {"kind": "test"}

    def decide(self, observation: Observation) -> Decision:
        prompt = self.profile.build(observation)
        listed = [(c.action, c.choice) for c in prompt.candidates]
        user = prompt.messages[1]["content"]
        self.seen["decisions"] += 1
        for candidate in prompt.candidates:
            self.seen["options"] += 1
            if candidate.action.id == "hiddenpower":
                self.seen["hiddenpower"] += 1
            # the answer is the reference's json.dumps of the listed option, and the option is in the prompt
            assert candidate.text == json.dumps({"action": candidate.action.kind, "choice": candidate.choice})
            assert f"- action: {candidate.action.kind!r}, choice: {candidate.choice!r}" in user
            for mode in PARSER_MODES:
                parsed = parse_action(candidate.text, list(observation.legal_actions), mode=mode, listed=listed)
                if parsed.action != candidate.action:
                    self.failures.append(f"{observation.format} turn {observation.turn} {mode}: {candidate.text} "
                                         f"-> {parsed.action} ({parsed.reason})")
        return Decision(action=observation.rng.choice(list(observation.legal_actions)))


def play(format_id: str, seeds: list[int], max_turns: int = 400) -> Counter[str]:
    checkers = []

    async def run() -> None:
        for seed in seeds:
            p1, p2 = ListedOptionsChecker("check-a"), ListedOptionsChecker("check-b")
            await play_battle(p1, p2, format_id=format_id, seed=seed, max_turns=max_turns)
            checkers.extend([p1, p2])

    asyncio.run(run())
    failures = [f for c in checkers for f in c.failures]
    assert not failures, "\n".join(failures[:10])
    return sum((c.seen for c in checkers), Counter())


def test_every_listed_option_parses_back_in_gen4_battles() -> None:
    seen = play("gen4randombattle", list(range(1, 11)))
    assert seen["decisions"] > 500 and seen["options"] > 3000
    assert seen["hiddenpower"] > 50  # Hidden Power is an option at about one gen4 decision point in ten


@pytest.mark.parametrize("gen", [2, 3, 4, 5, 6, 7])
def test_listed_hidden_power_parses_back_in_every_generation_that_has_it(gen: int) -> None:
    seen = play(f"gen{gen}randombattle", [1, 2], max_turns=30)
    assert seen["hiddenpower"] > 0, f"no Hidden Power option in gen{gen} battles 1-2"
