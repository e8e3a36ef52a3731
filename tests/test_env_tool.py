"""``ShowdownToolEnv``: a battle played by tool calls, and a real TRL ``GRPOTrainer`` run on the tiny offline Qwen3
with ``environment_factory`` (CPU, one step), whose rollouts end up as recordings."""

from __future__ import annotations

import functools
import inspect
import json
import os
from pathlib import Path

import pytest

from wolfeclick.battle.store import load_recording
from wolfeclick.battle.teams import TeamSources
from wolfeclick.env import ShowdownEnv, ShowdownToolEnv, reward_func
from wolfeclick.env.tool_env import (
    CHANGES_HEADER,
    TOKEN_METRIC,
    budgeted_factory,
    changed_text,
    decision_tokens,
    finish,
    prompt_keeping_reward_func,
)
from wolfeclick.errors import InputError

FORMAT = "gen9randombattle"


def first_option(env: ShowdownToolEnv) -> tuple[str, str]:
    action, choice = env._options()[0]
    return action.kind, choice


def test_a_whole_battle_by_tool_calls(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path, max_turns=300)
    text = env.reset(seed=5, format=FORMAT, opponent="heuristic", prompt=[{"role": "user", "content": "x"}])
    assert "Valid options for this state:" in text and "move(name)" in text
    with pytest.raises(ValueError, match=r"move\('splash'\) is not a legal action now. Legal: "):
        env.move("splash")
    assert env.illegal_calls == 1
    calls = 0
    while not env.done:
        kind, choice = first_option(env)
        result = env.move(choice) if kind == "move" else env.switch(choice)
        calls += 1
        assert isinstance(result, str) and result
    assert env.result["reason"] == "win" and result.startswith("The battle is over")
    with pytest.raises(ValueError, match="battle is over"):
        env.move("anything")
    recording = load_recording(env.recording_path)
    assert recording.source.kind == "training" and recording.players["p2"].policy == "heuristic"
    mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert len(mine) == calls and not any(d.illegal for d in mine)  # a refused tool call is never played
    expected = sum(d.reward.total + d.reward.outcome for d in mine)
    assert reward_func([env]) == [pytest.approx(expected, abs=1e-3)]


def test_reward_func_ends_unfinished_rollouts_as_forfeits(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path)
    env.reset(seed=6, format=FORMAT)
    kind, choice = first_option(env)
    env.move(choice) if kind == "move" else env.switch(choice)
    [reward] = reward_func([env])
    assert env.done and env.result["reason"] == "forfeit" and env.result["winner"] == "p2"
    recording = load_recording(env.recording_path)
    shaped = sum(t.decisions["p1"].reward.total for t in recording.turns if "p1" in t.decisions)
    assert reward == pytest.approx(shaped - 10.0, abs=1e-3)
    assert reward_func([env]) == [reward]  # reading it again changes nothing


def test_tools_have_trl_schemas():
    from transformers.utils import get_json_schema

    public = [name for name, _ in inspect.getmembers(ShowdownToolEnv, inspect.isfunction) if not name.startswith("_")]
    assert sorted(public) == ["move", "reset", "switch"]  # TRL makes every public method but reset a tool
    move = get_json_schema(ShowdownToolEnv.move)["function"]
    assert move["name"] == "move" and move["parameters"]["required"] == ["name"]
    assert "valid options" in move["parameters"]["properties"]["name"]["description"]
    assert get_json_schema(ShowdownToolEnv.switch)["function"]["parameters"]["required"] == ["pokemon"]


def prime_to_call_a_tool(model, tokenizer, prompt_text: str, call: str, steps: int = 45) -> None:
    """Teach the random tiny model one tool call (a few Adam steps), so the rollouts really play moves."""
    import torch

    prompt_ids = tokenizer(prompt_text).input_ids
    call_ids = tokenizer(call, add_special_tokens=False).input_ids
    ids = torch.tensor([prompt_ids + call_ids])
    labels = ids.clone()
    labels[:, :len(prompt_ids)] = -100
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    model.eval()


def test_grpo_trainer_runs_with_the_tool_env(tiny_tool_checkpoint, tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 64-wide model: more threads only spin (and the machine is shared)
    try:
        run_grpo(tiny_tool_checkpoint, tmp_path)
    finally:
        torch.set_num_threads(threads)


def run_grpo(tiny_tool_checkpoint, tmp_path) -> None:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tiny_tool_checkpoint)
    model = AutoModelForCausalLM.from_pretrained(tiny_tool_checkpoint, dtype=torch.float32)
    recordings = tmp_path / "recordings"
    factory = functools.partial(ShowdownToolEnv, recordings=recordings, format=FORMAT, max_turns=20)

    # the first decision of seed 1, and the tool call that plays its first move
    probe = factory()
    question = [{"role": "user", "content": "You are playing a Pokémon Showdown battle.\n\n"}]
    observation = probe.reset(seed=1, prompt=question)
    kind, choice = first_option(probe)
    finish(probe)
    from transformers.utils import get_json_schema

    tools = [get_json_schema(probe.move), get_json_schema(probe.switch)]
    messages = [{"role": "user", "content": question[0]["content"] + observation}]
    prompt_text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    argument = "name" if kind == "move" else "pokemon"
    call = (f'<tool_call>\n{json.dumps({"name": kind, "arguments": {argument: choice}})}\n</tool_call><|im_end|>')
    prime_to_call_a_tool(model, tokenizer, prompt_text, call)

    seen: list[list[float]] = []
    lengths: list[list[int]] = []
    keeping = prompt_keeping_reward_func(tokenizer, enable_thinking=False)

    def battle_reward(environments, **kwargs):
        rewards = keeping(environments, **kwargs)
        seen.append(rewards)
        lengths.append([len(ids) for ids in kwargs["completion_ids"]])
        return rewards

    dataset = Dataset.from_list([{"prompt": question, "seed": 1}, {"prompt": question, "seed": 1}])
    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=4096, temperature=0.2, learning_rate=1e-4, use_cpu=True, report_to=[],
                      logging_steps=1, save_strategy="no", max_tool_calling_iterations=3, seed=0,
                      chat_template_kwargs={"enable_thinking": False}, dataloader_num_workers=0)
    trainer = GRPOTrainer(model=model, reward_funcs=battle_reward, args=args, train_dataset=dataset,
                          processing_class=tokenizer, environment_factory=factory)
    trainer.train()

    assert seen and len(seen[0]) == 2
    environments = trainer.environments
    assert all(isinstance(env, ShowdownToolEnv) and env.done for env in environments)
    assert seen[0] == [env.reward for env in environments]
    # the true rollout length (model turns and tool results: what max_completion_length budgets) reaches TRL's logs
    logged = next(entry for entry in trainer.state.log_history if TOKEN_METRIC in entry)
    assert logged[TOKEN_METRIC] == pytest.approx(sum(sum(c) / len(c) for c in lengths) / len(lengths))
    assert [env.tokens["completion"] for env in environments] == lengths[-1]
    prompt_tokens = len(tokenizer(prompt_text, add_special_tokens=False)["input_ids"])
    assert all(env.tokens["prompt"] == prompt_tokens for env in environments)
    if any(env.decisions for env in environments):  # a tool result came back: TRL's own figure leaves it out
        assert logged[TOKEN_METRIC] > logged["completions/mean_length"]
    files = sorted(recordings.glob("*.json"))
    assert files
    played = 0
    for path in files:
        recording = load_recording(path)
        assert recording.source.kind == "training"
        mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
        played += len(mine)
        if mine:  # each decision keeps the exact chat-templated prompt its tool call answered
            assert mine[0].policy_info["prompt"] == prompt_text
        for decision in mine:
            assert decision.policy_info["prompt"].startswith(prompt_text)
            assert decision.policy_info["prompt"].endswith("<|im_start|>assistant\n")
            assert decision.policy_info["observation"] in decision.policy_info["prompt"]
    assert played >= 1, "the primed model's tool calls were played as moves"
    assert os.path.exists(environments[0].recording_path)


def test_a_horizon_that_cannot_fit_the_completion_budget_is_refused_in_one_line(tiny_tool_checkpoint):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_tool_checkpoint)
    counts = decision_tokens(tokenizer, 3, format=FORMAT)
    assert len(counts) == 3 and all(count > 100 for count in counts)  # a state per decision: hundreds of tokens
    need = sum(counts)
    factory = budgeted_factory(tokenizer, need, horizon=3, format=FORMAT)
    env = factory()
    assert isinstance(env, ShowdownToolEnv) and env._horizon == 3
    with pytest.raises(InputError) as caught:
        budgeted_factory(tokenizer, need - 1, horizon=3, format=FORMAT)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("horizon 3 does not fit max_completion_length=")
    assert "use horizon=2" in message and f"at least {need:,}" in message


def test_recordings_keep_the_text_the_model_read_its_tool_calls_and_refused_ones(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path, format=FORMAT)
    shown = [env.reset(seed=8)]
    assert "pure JSON" not in shown[0] and "calling one tool" in shown[0]  # one instruction: call a tool
    with pytest.raises(ValueError):
        env.move("splash")
    kind, choice = first_option(env)
    shown.append(env.move(choice) if kind == "move" else env.switch(choice))
    with pytest.raises(ValueError):
        env.switch("nobody")
    finish(env)
    recording = load_recording(env.recording_path)
    [first] = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert first.policy_info["observation"] == shown[0] and first.seen() == shown[0]
    assert json.loads(first.raw_output) == {"name": kind, "arguments": {"name" if kind == "move" else "pokemon": choice}}
    assert [c["call"] for c in first.policy_info["refused_calls"]] == ['{"name": "move", "arguments": {"name": "splash"}}']
    left = recording.players["p1"].metadata["open_decision"]  # the forfeit kept what it read and the refused call
    assert left["observation"] == shown[1] and "nobody" in left["refused_calls"][0]["call"]


def test_a_rollout_of_only_refused_calls_still_records_them(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path, format=FORMAT)
    text = env.reset(seed=9)
    with pytest.raises(ValueError):
        env.move("splash")
    reward_func([env])
    recording = load_recording(env.recording_path)
    left = recording.players["p1"].metadata["open_decision"]
    assert left["observation"] == text and "splash" in left["refused_calls"][0]["error"]


def play_first_options(env: ShowdownToolEnv, limit: int = 400) -> int:
    calls = 0
    while not env.done and calls < limit:
        kind, choice = first_option(env)
        env.move(choice) if kind == "move" else env.switch(choice)
        calls += 1
    return calls


def test_a_rows_max_turns_is_honoured(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path, format=FORMAT)
    env.reset(seed=10, max_turns=2)
    calls = play_first_options(env)
    assert env.done and env.result["reason"] == "turn_limit" and calls <= 4  # the class default is 100 turns


def test_a_horizon_stops_the_rollout_with_the_shaped_reward_of_its_decisions(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path, format=FORMAT)
    env.reset(seed=13, opponent="heuristic", horizon=3)
    assert play_first_options(env) == 3 and env.done and env.cut
    [reward] = reward_func([env])
    recording = load_recording(env.recording_path)
    mine = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert len(mine) == 3 and recording.result.reason == "forfeit"
    assert reward == pytest.approx(sum(d.reward.total for d in mine), abs=1e-3)  # no −10 for the cut
    parts = env.reward_components
    assert parts["outcome"] == 0.0 and parts["shaped"] == pytest.approx(reward, abs=1e-3)
    assert sum(v for k, v in parts.items() if k not in ("shaped", "outcome")) == pytest.approx(parts["shaped"], abs=1e-3)


TEAM_FILES = sorted((Path(__file__).parent / "data" / "teams" / "gen9ou").glob("*.txt"))


def test_team_formats_take_team_files_from_the_row_and_from_the_env(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path, format="gen9ou")
    env.reset(seed=4, team1=str(TEAM_FILES[0]), team2=str(TEAM_FILES[1]), horizon=2)
    assert play_first_options(env) == 2  # team preview is answered with the file's order, not asked of the model
    reward_func([env])
    recording = load_recording(env.recording_path)
    assert recording.format == "gen9ou" and recording.teams is not None
    assert recording.teams["p1"].packed != recording.teams["p2"].packed
    gym_env = ShowdownEnv("random", format="gen9ou", recordings=False,
                          teams=TeamSources(team1=TEAM_FILES[0], team2=TEAM_FILES[1]))
    _, info = gym_env.reset(seed=4)
    assert info["legal_actions"] and all(not a.startswith("team") for a in info["legal_actions"])
    gym_env.close()
    with pytest.raises(Exception, match="no team for p2"):
        ShowdownToolEnv(recordings=False, format="gen9ou").reset(seed=1, team1=str(TEAM_FILES[0]))


def test_changes_mode_sends_only_what_changed_and_records_exactly_that(tmp_path):
    full_env = ShowdownToolEnv(recordings=False, format=FORMAT)
    env = ShowdownToolEnv(recordings=tmp_path, format=FORMAT, results="changes")
    texts, fulls = [env.reset(seed=14, horizon=4)], [full_env.reset(seed=14, horizon=4)]
    assert texts[0] == fulls[0]  # the first state is whole
    while not env.done:
        kind, choice = first_option(env)
        texts.append(env.move(choice) if kind == "move" else env.switch(choice))
        fulls.append(full_env.move(choice) if kind == "move" else full_env.switch(choice))
    for text, full in zip(texts[1:-1], fulls[1:-1]):
        assert text.startswith(CHANGES_HEADER) and len(text) < len(full)
        assert text.split("Valid options for this state:")[1] == full.split("Valid options for this state:")[1]
    reward_func([env, full_env])
    recording = load_recording(env.recording_path)
    seen = [t.decisions["p1"].seen() for t in recording.turns if "p1" in t.decisions]
    assert seen == texts[:4]  # what the model read, in changes mode too
    assert "nothing in the state changed" in changed_text(fulls[1], fulls[1])


def test_a_row_can_start_the_rollout_from_decision_k_of_a_recording(tmp_path):
    env = ShowdownToolEnv(recordings=tmp_path / "parent", format=FORMAT)
    env.reset(seed=15, opponent="heuristic")
    play_first_options(env)
    parent = load_recording(env.recording_path)
    k = next(t.index for t in parent.turns if t.index >= 3 and "p1" in t.decisions)
    child = ShowdownToolEnv(recordings=tmp_path / "child", format=FORMAT)
    text = child.reset(recording=env.recording_path, at=k, opponent="heuristic", horizon=2)
    assert text == parent.turns[k].decisions["p1"].policy_info["observation"]
    assert play_first_options(child) == 2
    reward_func([child])
    branched = load_recording(child.recording_path)
    assert branched.source.parent == parent.id and branched.source.branch_step == k
