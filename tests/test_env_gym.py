"""``ShowdownEnv`` on the real simulator: Gymnasium's checker, seeded replays at any number of envs in flight,
recordings that open in the app, the −10 fallback, truncation, forfeits on close and garbage collection, and a
dead simulator that fails ``step`` in one line instead of hanging."""

from __future__ import annotations

import gc
import json
import random
import threading
import time
from pathlib import Path

import pytest
from gymnasium.utils.env_checker import check_env

from wolfeclick.battle.store import load_recording
from wolfeclick.env import EnvError, ShowdownEnv, SimService
from wolfeclick.ui.library import Library

FORMAT = "gen9randombattle"


@pytest.fixture(scope="module")
def service():
    service = SimService(1)
    yield service
    service.close()


def same(info: dict) -> str:
    """The info of a step, but where its recording was saved (tests save each run to its own folder)."""
    return json.dumps({k: v for k, v in info.items() if k != "recording_path"}, sort_keys=True,
                      default=lambda array: array.tolist())  # the action mask is an array


def play(env: ShowdownEnv, seed: int, pick_seed: int) -> list[tuple]:
    """A whole episode with a seeded random agent; every step's observation, reward, flags and info."""
    rng = random.Random(pick_seed)
    obs, info = env.reset(seed=seed)
    trajectory = [(obs, same(info))]
    while True:
        action = rng.randrange(len(info["legal_actions"]))
        obs, reward, terminated, truncated, info = env.step(action)
        trajectory.append((obs, reward, terminated, truncated, same(info)))
        if terminated or truncated:
            return trajectory


def test_check_env_passes(service):
    env = ShowdownEnv("random", format=FORMAT, recordings=False, service=service)
    check_env(env, skip_render_check=True)
    env.close()


def test_seeded_episode_replays_identically_at_any_number_in_flight(service, tmp_path):
    alone = play(ShowdownEnv("heuristic", format=FORMAT, recordings=tmp_path / "a", service=service), 21, 5)
    results: dict[int, list[tuple]] = {}

    def worker(slot: int) -> None:
        env = ShowdownEnv("heuristic", format=FORMAT, recordings=tmp_path / f"b{slot}", service=service)
        results[slot] = play(env, 21 if slot < 2 else 22, 5)
        env.close()

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results[0] == alone and results[1] == alone
    assert results[2] != alone  # another seed is another battle
    assert alone[-1][2] is True and alone[-1][3] is False  # terminated, not truncated
    assert json.loads(alone[-1][-1])["reward"]["outcome"] in (10.0, -10.0, 0.0)

    recording = load_recording(next((tmp_path / "a").glob("*.json")))
    again = load_recording(next((tmp_path / "b0").glob("*.json")))
    assert recording.log == again.log and recording.inputlog == again.inputlog
    # the episode is a normal recording: one agent decision per step, marked as training, opens in the app
    assert recording.source.kind == "training"
    assert recording.players["p1"].policy == "env:agent" and recording.players["p2"].policy == "heuristic"
    steps = len(alone) - 1
    assert sum(1 for t in recording.turns if "p1" in t.decisions) == steps
    shaped = sum(json.loads(step[-1])["reward"]["shaped"] for step in alone[1:])
    assert shaped == pytest.approx(recording.reward_totals()["p1"]["shaped"], abs=1e-3)
    library = Library(tmp_path / "a")
    assert [info.id for info in library.list()] == [recording.id]
    html = library.view(recording.id).render(len(recording.turns) - 1)
    assert "env:agent" in html


def test_text_actions_parse_like_generate_mode_and_illegal_ones_cost_ten(service, tmp_path):
    env = ShowdownEnv("random", format=FORMAT, recordings=tmp_path, service=service)
    obs, info = env.reset(seed=4)
    assert "Valid options for this state:" in obs  # the wolfeclick-v1 user message
    answer = json.loads(info["legal_actions"][0])
    sloppy = f"I pick <b>this</b>: {{\"Choice\": \"{answer['choice'].upper()}\", \"ACTION\": \"{answer['action']}\"}}"
    _, reward, _, _, info1 = env.step(sloppy)
    assert info1["illegal"] is False and info1["action"] == info["legal_actions"][0]
    _, reward, _, _, info2 = env.step('{"action": "move", "choice": "splash dance"}')
    assert info2["illegal"] is True and "not a legal action" in info2["illegal_reason"]
    env.step(0)  # settles the illegal decision's reward
    _, _, _, _, info3 = env.step(0)
    settled = [info1, info2, info3]
    assert any(i["reward"]["components"].get("illegal") == -10.0 for i in settled[1:])
    env.close()
    recording = load_recording(next(tmp_path.glob("*.json")))
    decisions = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert decisions[0].raw_output == sloppy and not decisions[0].illegal
    assert decisions[1].illegal and decisions[1].raw_output.startswith('{"action": "move"')
    assert decisions[1].reward.components["illegal"] == -10.0
    assert recording.result.reason == "forfeit" and recording.result.winner == "p2"  # closed mid-battle


def test_turn_limit_truncates(service, tmp_path):
    env = ShowdownEnv("random", format=FORMAT, max_turns=3, recordings=tmp_path, service=service)
    trajectory = play(env, 8, 1)
    last = trajectory[-1]
    assert last[3] is True and last[2] is False
    assert json.loads(last[-1])["result"]["reason"] == "turn_limit"
    with pytest.raises(EnvError, match="battle is over"):
        env.step(0)


def test_garbage_collected_env_forfeits_and_frees_its_slot(service, tmp_path):
    env = ShowdownEnv("random", format=FORMAT, recordings=tmp_path, service=service)
    env.reset(seed=9)
    env.step(0)
    del env
    gc.collect()
    deadline = time.monotonic() + 300  # a hang guard only: the finalizer's forfeit lands when the loop gets to it
    while not list(tmp_path.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    recording = load_recording(next(tmp_path.glob("*.json")))
    assert recording.result.reason == "forfeit" and "closed" in recording.result.error


def test_bad_arguments_are_one_line_errors(service):
    env = ShowdownEnv("random", format=FORMAT, recordings=False, service=service)
    with pytest.raises(EnvError, match="call reset"):
        env.step(0)
    with pytest.raises(ValueError, match="unknown"):
        ShowdownEnv("nobody", recordings=False, service=service)
    obs, info = env.reset(seed=1)
    _, _, _, _, info = env.step(99)  # an index out of range names no legal action: the fallback, flagged
    assert info["illegal"] is True and "index 99" in info["illegal_reason"]
    env.close()


def test_an_episode_can_start_from_decision_k_of_a_recording(service, tmp_path):
    env = ShowdownEnv("heuristic", format=FORMAT, recordings=tmp_path / "parent", service=service)
    play(env, 17, 2)
    env.close()
    parent = load_recording(next((tmp_path / "parent").glob("*.json")))
    k = next(t.index for t in parent.turns if t.index >= 4 and "p1" in t.decisions)
    branched = ShowdownEnv("heuristic", format="gen1randombattle", recordings=tmp_path / "branch", service=service)
    obs, info = branched.reset(options={"recording": next((tmp_path / "parent").glob("*.json")), "at": k})
    assert obs == parent.turns[k].decisions["p1"].policy_info["observation"]  # exactly what the agent saw there
    assert branched.format == FORMAT and info["battle_seed"] == parent.seed
    done = False
    while not done:
        _, _, terminated, truncated, info = branched.step(0)
        done = terminated or truncated
    child = load_recording(Path(info["recording_path"]))
    assert child.source.kind == "training" and child.source.parent == parent.id and child.source.branch_step == k
    assert [t.events for t in child.turns[:k]] == [t.events for t in parent.turns[:k]]
    branched.close()


def test_a_horizon_truncates_after_h_decisions_with_the_shaped_reward_over_them(service, tmp_path):
    env = ShowdownEnv("heuristic", format=FORMAT, recordings=tmp_path, service=service, horizon=3)
    obs, info = env.reset(seed=13)
    keys = {key: type(value) for key, value in info.items()}
    steps, total = [], 0.0
    while True:
        obs, reward, terminated, truncated, info = env.step(0)
        assert {key: type(value) for key, value in info.items()} == keys  # stable keys and types (vector envs)
        steps.append((terminated, truncated, info["cut"]))
        total += reward
        if terminated or truncated:
            break
    assert steps == [(False, False, False)] * 2 + [(False, True, True)]  # cut at H decisions: truncated, not terminated
    assert "Valid options for this state:" in obs and info["legal_actions"]  # the state at the cut, to bootstrap from
    recording = load_recording(Path(info["recording_path"]))
    mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert len(mine) == 3 and recording.result.reason == "forfeit" and info["result"]["reason"] == "forfeit"
    assert total == pytest.approx(sum(d.reward.total for d in mine), abs=1e-3)  # every decision's reward, no −10
    assert info["reward"]["outcome"] == 0.0 and sorted(info["settled_decisions"])[-1] == recording.turns[-1].index
    with pytest.raises(EnvError, match="cut at its horizon of 3 decisions: call reset"):
        env.step(0)
    _, info = env.reset(seed=13, options={"horizon": None})  # the option lifts it for this and later episodes
    assert info["cut"] is False
    for _ in range(4):
        _, _, terminated, truncated, info = env.step(0)
    assert not truncated and not info["cut"]
    env.close()
