"""LLMPolicy end to end on the tiny checkpoint: decisions, recording fields, batching across battles, presets from a
warm offline cache, real battles through the runner and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from devkit.llm_fixtures import SHAS, golden_battles, notebook_state, observation
from wolfeclick.battle.tracker import SideTracker
from wolfeclick.llm import is_llm_spec, make_llm_policy
from wolfeclick.llm.checkpoint_specs import CheckpointError
from wolfeclick.llm.generation import GenerateResult
from wolfeclick.llm.scoring import reference_scores
from wolfeclick.policies.base import Observation, Policy

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def golden_observations(limit: int = 12) -> list[Observation]:
    """Real decision points (own battle objects each) from the golden battles."""
    found = []
    for battle in golden_battles()[:2]:
        tracker = SideTracker(str(battle["seed"]), "p1", "Alice", "gen4randombattle")
        for chunk in battle["p1"]:
            for line in chunk.split("\n"):
                if line.startswith("|request|") and len(line) > 9:
                    request = json.loads(line[9:])
                    tracker.feed_request(request)
                    if not request.get("wait"):
                        found.append(observation(tracker, request))
                else:
                    tracker.feed([line])
                if len(found) >= limit:
                    return found
    return found


def test_score_mode_choice_is_the_argmax_of_separate_logprobs(tiny_checkpoint) -> None:
    policy = make_llm_policy(f"llm:{tiny_checkpoint}/adapters/a", profile="wolfeclick-v1")
    assert isinstance(policy, Policy) and policy.blocking and is_llm_spec(policy.spec)
    tokenizer = policy.handle.tokenizer
    obs = notebook_state()
    decision = policy.decide(observation(*obs))
    info = decision.info
    assert not decision.illegal and decision.action is not None
    assert info["profile"] == "wolfeclick-v1" and info["mode"] == "score"
    assert info["prompt"].startswith("<|im_start|>system\nYou are a competitive Pokemon battler.")
    assert info["prompt_tokens"] == len(tokenizer(info["prompt"]).input_ids)
    candidates = info["candidates"]
    assert [c["choice"] for c in candidates] == ["closecombat", "rapidspin", "icepunch", "machpunch", "garchomp",
                                                 "rapidash", "palkia", "vigoroth", "sandslash"]
    # recompute every candidate's log-probability the slow way: full sequence, no cache sharing, one at a time
    texts = [json.dumps({"action": c["action"], "choice": c["choice"]}) for c in candidates]
    prompt_ids = tokenizer(info["prompt"]).input_ids
    cand_ids = [tokenizer(info["prompt"] + t).input_ids[len(prompt_ids):] + [tokenizer.eos_token_id] for t in texts]
    model, adapter = policy.handle.entry.model, policy.handle.adapter
    separate = [sum(x) for x in reference_scores(model, prompt_ids, cand_ids, adapter)]
    assert all(abs(c["logprob"] - s) < 1e-4 for c, s in zip(candidates, separate))
    best = max(range(len(separate)), key=lambda i: separate[i])
    assert info["chosen"] == best and decision.raw_output == texts[best]
    assert decision.action.kind == candidates[best]["action"]
    assert info["latency_ms"] > 0 and info["model_ms"] > 0 and info["new_tokens"] == sum(len(c) for c in cand_ids)


def test_temperature_samples_with_the_battle_rng(tiny_checkpoint) -> None:
    policy = make_llm_policy(f"llm:{tiny_checkpoint}", temperature=50.0)
    picks = set()
    for seed in range(12):
        tracker, request = notebook_state()
        obs = observation(tracker, request)
        obs.rng = random.Random(seed)
        obs.state = "## Part A: Active Field\n"
        picks.add(policy.decide(obs).action)
    assert len(picks) > 1  # a hot temperature spreads the choice; each draw came from obs.rng


def test_rejected_commands_are_never_chosen(tiny_checkpoint) -> None:
    policy = make_llm_policy(f"llm:{tiny_checkpoint}")
    tracker, request = notebook_state()
    obs = observation(tracker, request)
    obs.state = "state"
    first = policy.decide(obs).action
    obs.rejected = (first.command(),)
    again = policy.decide(obs)
    assert again.action != first and all(c["choice"] != first.name for c in again.info["candidates"])


def test_generate_mode_records_samples_and_flags_illegal(tiny_checkpoint, monkeypatch) -> None:
    policy = make_llm_policy(f"llm:{tiny_checkpoint}?mode=generate&max_new_tokens=6", profile="v1")
    assert policy.mode == "generate" and policy.metadata()["sampling"]["max_new_tokens"] == 6
    decision = policy.decide(observation(*notebook_state()))
    info = decision.info
    assert len(info["samples"]) == 4 and info["new_tokens"] <= 24 and "seed" in info
    # a random tiny model does not write JSON: the seeded fallback is played and flagged
    assert decision.illegal and decision.action is not None
    assert "no sample named a legal action" in decision.illegal_reason
    # when a sample names a legal action, the first such sample wins
    tokenizer = policy.handle.tokenizer
    texts = ["nonsense", '{"action": "move", "choice": "thunderbolt"}', '{"action": "switch", "choice": "palkia"}',
             '{"action": "move", "choice": "icepunch"}']
    batcher = policy.handle.entry.batcher()
    monkeypatch.setattr(batcher, "run", lambda request, client=None: GenerateResult(
        [tokenizer(t, add_special_tokens=False).input_ids for t in texts]))
    decision = policy.decide(observation(*notebook_state()))
    assert not decision.illegal and decision.action.name == "Palkia" and decision.info["chosen_sample"] == 2
    assert decision.raw_output == texts[2]


def test_decisions_from_many_battles_share_forward_passes(tiny_checkpoint) -> None:
    spec_a, spec_b = f"llm:{tiny_checkpoint}/adapters/a", f"llm:{tiny_checkpoint}+{tiny_checkpoint}/adapters/b"
    policies = [make_llm_policy(spec_a, profile="v1"), make_llm_policy(spec_b, profile="v1")]
    assert policies[0].handle.entry is policies[1].handle.entry  # two adapters, one base
    observations = golden_observations(8)
    alone = [policies[i % 2].decide(o).info["candidates"] for i, o in enumerate(observations)]
    results: dict[int, dict] = {}
    barrier = threading.Barrier(len(observations))

    def play(i: int) -> None:
        barrier.wait()
        results[i] = policies[i % 2].decide(observations[i]).info

    threads = [threading.Thread(target=play, args=(i,)) for i in range(len(observations))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(info["batch_size"] for info in results.values()) > 1
    for i, info in results.items():  # batching (and mixing adapters in a batch) changes no score
        assert all(abs(x["logprob"] - y["logprob"]) < 1e-4 for x, y in zip(info["candidates"], alone[i]))


def test_preset_metadata_from_warm_offline_cache(hub_cache) -> None:
    run3 = make_llm_policy("preset:run3")
    run1 = make_llm_policy("preset:run1")
    assert run1.handle.entry is run3.handle.entry  # run1 vs run3: one base
    meta = run3.metadata()
    assert meta["spec"] == "preset:run3" and meta["preset"] == "run3" and meta["profile"] == "wolfeclick-v1"
    assert meta["base"] == {"repo": "Qwen/Qwen3-4B-Instruct-2507", "revision": "main", "sha": SHAS["base"]}
    assert meta["adapter"]["sha"] == SHAS["grpo-qwen3-4b-run3"] and meta["trained_format"] == "gen4randombattle"
    assert meta["quant"] == "none" and meta["device"] == "cpu" and meta["mode"] == "score"
    decision = run3.decide(observation(*notebook_state()))
    assert decision.info["profile"] == "wolfeclick-v1" and not decision.illegal


def test_bad_options_are_one_line(tiny_checkpoint) -> None:
    for spec, words in [(f"llm:{tiny_checkpoint}?mode=dream", "mode='dream' is not one of score, generate"),
                        (f"llm:{tiny_checkpoint}?temperature=hot", "not a valid number"),
                        (f"llm:{tiny_checkpoint}?norm=max", "norm='max' is not one of sum, mean")]:
        with pytest.raises(CheckpointError, match=words) as info:
            make_llm_policy(spec)
        assert "\n" not in str(info.value)


def test_recorded_battle_with_an_llm_policy(tiny_checkpoint) -> None:
    runner = pytest.importorskip("wolfeclick.battle.runner")
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.battle.schema import Recording

    llm = make_policy(f"llm:{tiny_checkpoint}/adapters/a")
    recording = asyncio.run(runner.play_battle(llm, make_policy("random"), format_id="gen4randombattle", seed=5,
                                               max_turns=12))
    Recording.model_validate_json(recording.to_json())  # round-trips through the schema
    assert recording.players["p1"].metadata["kind"] == "llm"
    assert recording.players["p1"].metadata["adapter"] == {"path": str(tiny_checkpoint / "adapters" / "a")}
    decisions = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert len(decisions) >= 5
    for d in decisions:
        info = d.policy_info
        assert not d.illegal and d.action is not None and d.latency_ms > 0
        assert info["mode"] == "score" and info["prompt"].startswith("<|im_start|>system\n")
        assert {c["choice"] for c in info["candidates"]} == {a.choice for a in d.legal_actions}
        chosen = info["candidates"][info["chosen"]]
        assert (chosen["action"], chosen["choice"]) == (d.action.action, d.action.choice)
        assert d.raw_output == json.dumps({"action": d.action.action, "choice": d.action.choice})


def test_cli_records_an_llm_battle(tiny_checkpoint, tmp_path) -> None:
    if not (ROOT / "wolfeclick" / "cli" / "__init__.py").exists():
        pytest.skip("no CLI yet")
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    out = tmp_path / "recs"
    proc = subprocess.run(
        [sys.executable, "-m", "wolfeclick", "record", "--p1", f"llm:{tiny_checkpoint}", "--p2", "heuristic",
         "--seed", "1", "--max-turns", "8", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    files = list(out.glob("*.json"))
    assert len(files) == 1
    data = json.loads(files[0].read_text())
    assert data["players"]["p1"]["metadata"]["profile"] == "arena-v1"
    llm_turns = [t["decisions"]["p1"] for t in data["turns"] if "p1" in t["decisions"]]
    assert llm_turns and all(d["policy_info"]["candidates"] and not d["illegal"] for d in llm_turns)
    # an unknown checkpoint is one clear line, not a traceback
    bad = subprocess.run(
        [sys.executable, "-m", "wolfeclick", "record", "--p1", "llm:nobody/no-such-model", "--p2", "random",
         "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert bad.returncode != 0 and len(lines) == 1 and "nobody/no-such-model" in lines[0], bad.stderr


def hidden_power_observation() -> Observation:
    """A real gen4 decision point whose legal moves include Hidden Power (listed by v1 as ``hiddenpower<type>``)."""
    for battle in golden_battles():
        tracker = SideTracker(str(battle["seed"]), "p1", "Alice", "gen4randombattle")
        for chunk in battle["p1"]:
            for line in chunk.split("\n"):
                if not (line.startswith("|request|") and len(line) > 9):
                    tracker.feed([line])
                    continue
                request = json.loads(line[9:])
                tracker.feed_request(request)
                obs = None if request.get("wait") else observation(tracker, request)
                if obs is not None and any(a.id == "hiddenpower" for a in obs.legal_actions):
                    return obs
    raise AssertionError("no Hidden Power in the golden battles")


@pytest.mark.parametrize("parser", ["tolerant", "reference"])
def test_generate_mode_plays_the_listed_hidden_power(tiny_checkpoint, monkeypatch, parser) -> None:
    policy = make_llm_policy(f"llm:{tiny_checkpoint}?mode=generate&parser={parser}", profile="v1")
    assert policy.parser == parser and policy.metadata()["parser"] == parser
    obs = hidden_power_observation()
    hidden = next(a for a in obs.legal_actions if a.id == "hiddenpower")
    listed = next(c.choice for c in policy.profile.build(obs).candidates if c.action == hidden)
    assert listed.startswith("hiddenpower") and listed != "hiddenpower"
    tokenizer = policy.handle.tokenizer
    texts = ["{", json.dumps({"action": "move", "choice": listed})]
    batcher = policy.handle.entry.batcher()
    monkeypatch.setattr(batcher, "run", lambda request, client=None: GenerateResult(
        [tokenizer(t, add_special_tokens=False).input_ids for t in texts]))
    decision = policy.decide(obs)
    assert not decision.illegal and decision.action == hidden and decision.info["chosen_sample"] == 1
    assert decision.info["parser"] == parser


def test_reference_parser_rejects_what_the_reference_rejected(tiny_checkpoint, monkeypatch) -> None:
    texts = ['{"action": "move", "choice": "Close Combat"}', '{"action": "Move", "choice": "closecombat"}']
    outcomes = {}
    for parser in ("tolerant", "reference"):
        policy = make_llm_policy(f"llm:{tiny_checkpoint}", mode="generate", profile="v1", parser=parser)
        tokenizer = policy.handle.tokenizer
        monkeypatch.setattr(policy.handle.entry.batcher(), "run", lambda request, client=None, tok=tokenizer:
                            GenerateResult([tok(t, add_special_tokens=False).input_ids for t in texts]))
        outcomes[parser] = policy.decide(observation(*notebook_state()))
    assert not outcomes["tolerant"].illegal and outcomes["tolerant"].action.name == "closecombat"
    assert outcomes["reference"].illegal and "is not a listed option" in outcomes["reference"].illegal_reason


def test_bad_parser_option_is_one_line(tiny_checkpoint) -> None:
    with pytest.raises(CheckpointError, match="parser='lenient' is not one of tolerant, reference") as info:
        make_llm_policy(f"llm:{tiny_checkpoint}?parser=lenient")
    assert "\n" not in str(info.value)


def test_cli_parser_option_reaches_the_policy() -> None:
    from wolfeclick.cli.main_parser import build_parser
    from wolfeclick.cli.options import llm_options

    for command in (["record", "--p1", "random", "--p2", "random"], ["bench", "--players", "random,heuristic", "--pairs", "1"]):
        args = build_parser().parse_args([*command, "--mode", "generate", "--parser", "reference"])
        assert llm_options(args)["parser"] == "reference"
        assert llm_options(build_parser().parse_args(command))["parser"] is None  # the policy's default: tolerant


def test_recorded_generate_battle_says_which_parser_judged(tiny_checkpoint) -> None:
    from wolfeclick.battle.policy_specs import make_policy
    from wolfeclick.battle.runner import play_battle

    llm = make_policy(f"llm:{tiny_checkpoint}?max_new_tokens=4", mode="generate", parser="reference")
    recording = asyncio.run(play_battle(llm, make_policy("random"), format_id="gen4randombattle", seed=3,
                                        max_turns=4))
    assert recording.players["p1"].metadata["parser"] == "reference"
    decisions = [t.decisions["p1"] for t in recording.turns if "p1" in t.decisions]
    assert decisions and all(d.policy_info["parser"] == "reference" for d in decisions)
