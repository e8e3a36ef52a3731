"""A listed action the simulator refuses is no longer invisible: the step says so in ``info`` (``refused_action``:
the answer that was refused; ``played_instead``: what the agent's seat sent instead, ``""`` when the agent is asked
again), the refused action is masked out and no longer listed for that decision, and the refused step does not
count towards the horizon (a decision is what the simulator accepted).

Seed 15 of gen9randombattle: the agent's first switch on turn 1 is refused by a trap the opponent has not revealed
yet (found by playing "always switch" over seeds 1-15)."""

from __future__ import annotations

import numpy as np

from wolfeclick.env import ShowdownEnv, SimService
from wolfeclick.game.discrete import ACTION_NAMES, resolve

FORMAT = "gen9randombattle"
SEED = 15


def first_switch(env: ShowdownEnv) -> int:
    slots = [int(a) for a in np.flatnonzero(env.action_masks()) if ACTION_NAMES[a].startswith("switch")]
    assert slots, "no switch listed"
    return slots[0]


def test_a_refused_switch_is_flagged_and_masked_out_for_that_decision(tmp_path):
    service = SimService(1)
    env = ShowdownEnv("random", format=FORMAT, recordings=tmp_path, service=service, action="discrete")
    try:
        _, info = env.reset(seed=SEED)
        assert info["refused_action"] == "" and info["played_instead"] == ""
        turn, listed = info["turn"], list(info["legal_actions"])
        slot = first_switch(env)
        observation = env.observation_data
        legal, _ = resolve(slot, observation.request, observation.allowed())
        answer = next(c.text for c in env.candidates if c.action == legal)
        _, reward, terminated, truncated, info = env.step(slot)
        assert not (terminated or truncated) and reward == 0.0 and info["settled_decisions"] == []
        assert info["refused_action"] == answer and info["played_instead"] == ""  # the agent is asked again
        assert info["illegal"] is False and info["turn"] == turn
        assert info["action_mask"][slot] == 0 and not env.action_masks()[slot]
        assert answer in listed and answer not in info["legal_actions"]
        assert env.steps == 0  # not a decision: the horizon counts what the simulator accepted
        move = int(np.flatnonzero(env.action_masks())[0])
        _, _, _, _, info = env.step(move)
        assert info["refused_action"] == "" and info["settled_decisions"] == [0]
        env.close()
        recording = env.last_end.recording
        first = recording.turns[0].decisions["p1"]
        assert first.rejected and first.command.startswith("move")  # the recording keeps the refusal too
    finally:
        env.close()
        service.close()


def test_a_refused_step_does_not_use_up_the_horizon():
    service = SimService(1)
    env = ShowdownEnv("random", format=FORMAT, recordings=False, service=service, action="discrete", horizon=2)
    try:
        env.reset(seed=SEED)
        _, _, _, truncated, info = env.step(first_switch(env))
        assert info["refused_action"] and not truncated
        _, _, _, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert not truncated and not info["cut"]
        _, _, _, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        assert truncated and info["cut"]
    finally:
        env.close()
        service.close()
