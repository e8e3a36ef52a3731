"""Show that the GRPO loop learns: train a small, locally built model on CPU, then compare it with the model it started
from on held-out battle seeds.

    .venv/bin/python -m wolfeclick.train.learn_demo --out runs/learn-demo          # CPU only (see docs/training.md)

What runs is the project's own training loop: TRL's ``GRPOTrainer(environment_factory=ShowdownToolEnv)`` with
``wolfeclick.env.reward_func``, every rollout a real battle on the embedded simulator, played by tool calls. Only the
model is small enough for a CPU:

- **Tokenizer**: word level, built here from the texts the model reads (states, options, the tool chat template), so
  every move and Pokémon id of the valid options is one token, and each tool call's fixed JSON framing
  (``<tool_call>\\n{"name": "move", "arguments": {"name": "``, …) is one token. A legal call is then three tokens
  (framing, id, closing) instead of the ~25 a byte-level tokenizer needs, which a 2-layer model can learn in minutes.
- **Warm start**: a randomly initialised model never emits a tool call at all, so every GRPO group has the same
  reward and the same zero advantage: nothing to learn from. A brief supervised warm start on recorded baseline
  decisions (a seeded random legal call per state, on *training* seeds only) teaches the call format and little
  else; GRPO starts from it. The comparison is GRPO-trained vs that warm start (the untrained-by-GRPO model) on the
  same held-out seeds, with the random initialisation shown too.
- **Held out**: training battles are seeds 1..``--corpus-seeds``, evaluation battles seeds 1,000,000 on, in a
  random-battle format, where every seed deals both sides new teams. Before anything is trained the script reads
  every battle's teams (both sides, from its recording) and opening state (the text a rollout is given) and prints
  how many evaluation battles share either with a training battle; it stops if any does (a fixed team, say, gives
  every battle the same team and a handful of openings: the comparison would then measure recall). The tokenizer
  knows every species and move name of the generation (the game's data, not the evaluation battles').
- **Task**: read the opening state and call ``move``/``switch`` naming one of the listed options: on a held-out
  battle the lead, its moves and the bench are mostly ones no training target named, so a legal call means reading
  the options, not recalling an answer.
- **Reward**: ``reward_func`` as ``wolfeclick.train.grpo`` uses it. Rollouts are cut after ``--horizon`` decisions, so
  a rollout whose calls are legal earns the shaped reward of its decisions, and one that never plays a decision
  (no call, or only refused calls) is forfeited at −10: the reward mostly says "play a legal action".

Outputs in ``--out``: ``results.json`` (every number), ``results.md`` (a table), ``learning.svg`` (the plot, no
dependency beyond this repository) and ``learning.html`` (the same as an interactive plotly chart, self-contained).
Intervals: Wilson 95% for rates (``wolfeclick.arena.stats.wilson_interval``), percentile bootstrap 95% for the mean
reward.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import re
import time
from pathlib import Path
from typing import Any

QUESTION = ("You are playing a Pokémon Showdown singles battle. Read the state, then play one action per tool call "
            "until the battle is over.\n\n")
MOVE_OPEN = '<tool_call>\n{"name": "move", "arguments": {"name": "'
SWITCH_OPEN = '<tool_call>\n{"name": "switch", "arguments": {"pokemon": "'
CALL_CLOSE = '"}}\n</tool_call>'
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "[UNK]"]
PIECES = [MOVE_OPEN, SWITCH_OPEN, CALL_CLOSE, "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>",
          "<think>", "</think>"]
WORD = re.compile(r" ?[A-Za-z0-9]+| ?[^A-Za-z0-9\s]|\s+")
"""How text is cut into words: a word or one punctuation mark (with the space before it), or a run of whitespace."""


# --------------------------------------------------------------------------------------------- data and tokenizer

def row(args: argparse.Namespace, seed: int) -> dict[str, Any]:
    """A battle's dataset columns: its seed and, for team formats, the agent's team file and the opponents' pool."""
    teams = {"team1": str(args.team1), "teams": str(args.teams)} if args.team1 else {}
    return {"seed": seed, **teams}


def env_factory(args: argparse.Namespace, recordings: Any, horizon: int | None = None):
    from wolfeclick.env import ShowdownToolEnv

    return functools.partial(ShowdownToolEnv, recordings=recordings, format=args.format, opponent=args.opponent,
                             max_turns=args.max_turns, horizon=horizon or args.horizon)


def baseline_decisions(factory, battles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each decision of seeded random legal play in ``battles``: the conversation so far and the call made."""
    from wolfeclick.env.tool_env import finish

    rows = []
    for battle in battles:
        rng = random.Random(battle["seed"])
        env = factory()
        messages = [{"role": "user", "content": QUESTION + env.reset(**battle)}]
        while not env.done:
            action, choice = rng.choice(env._options())
            rows.append({"messages": [dict(m) for m in messages], "kind": action.kind, "choice": choice})
            result = env.move(choice) if action.kind == "move" else env.switch(choice)
            key = "name" if action.kind == "move" else "pokemon"
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": action.kind, "arguments": {key: choice}}}]})
            messages.append({"role": "tool", "name": action.kind, "content": result})
        finish(env)
    return rows


def first_decisions(rows: list[dict[str, Any]], decisions: int) -> list[dict[str, Any]]:
    """The rows of each battle's first ``decisions`` decisions: with ``--horizon 1`` a rollout only ever sees the
    battle's opening state, so warm-start steps spent on later, 3-4x longer conversations teach it nothing it uses."""
    return [row for row in rows if sum(m["role"] == "assistant" for m in row["messages"]) < decisions]


def battle_keys(args: argparse.Namespace, battles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What makes each battle the battle it is, for the held-out check: the agent's and the opponent's teams (the
    species of each side, in team order, from the recording's first snapshot: each side's own view of its team)
    and the opening state the agent reads (the text a ``--horizon 1`` rollout is given)."""
    import tempfile

    from wolfeclick.battle.store import load_recording
    from wolfeclick.env.tool_env import finish
    from wolfeclick.sides import SIDES

    keys = []
    with tempfile.TemporaryDirectory() as folder:
        factory = env_factory(args, folder, 1)
        for battle in battles:
            env = factory()
            opening = env.reset(**battle)
            action, choice = env._options()[0]  # one decision, so that the recording has a turn with both teams
            env.move(choice) if action.kind == "move" else env.switch(choice)
            finish(env)
            recording = load_recording(Path(env.recording_path or ""))
            first = recording.turns[0].snapshot
            teams = {side: tuple(mon.species for mon in first[side].team) for side in SIDES}
            keys.append({"seed": battle["seed"], "teams": teams, "opening": opening})
    return keys


def overlap(train: list[dict[str, Any]], held_out: list[dict[str, Any]]) -> dict[str, int]:
    """How many held-out battles share a team (either side's, with either side of any training battle) or their
    opening state with the training battles: all must be 0 for the comparison to measure learning, not recall."""
    train_teams = {team for key in train for team in key["teams"].values()}
    train_openings = {key["opening"] for key in train}
    return {
        "battles_sharing_a_team": sum(any(t in train_teams for t in key["teams"].values()) for key in held_out),
        "battles_sharing_the_opening_state": sum(key["opening"] in train_openings for key in held_out),
        "distinct_training_openings": len(train_openings),
        "distinct_held_out_openings": len({key["opening"] for key in held_out}),
    }


def dex_words(format_id: str) -> list[str]:
    """Every species and move of the format's generation as the texts name them (Showdown id, display name): the
    game's own vocabulary, so that a held-out battle's Pokémon and moves are words the tokenizer knows although
    no training battle showed them. Game data, not held-out data."""
    from poke_env.data import GenData

    from wolfeclick.battle.tracker import generation
    from wolfeclick.game.actions import to_id

    data = GenData.from_gen(generation(format_id))
    names = [entry.get("name", key) for key, entry in data.pokedex.items()]
    names += [entry.get("name", key) for key, entry in data.moves.items()]
    words = []
    for name in names:
        words += [name, to_id(name), f'"{to_id(name)}"', f" {name}"]
    return words


def call_text(kind: str, choice: str) -> str:
    return f"{MOVE_OPEN if kind == 'move' else SWITCH_OPEN}{choice}{CALL_CLOSE}"


def build_word_tokenizer(path: Path, texts: list[str]):
    """A word-level tokenizer over ``texts`` (every word seen, [UNK] for the rest), with Qwen3's tool template."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from wolfeclick.llm.tiny import tool_chat_template

    words: dict[str, None] = {}
    for text in texts:
        for word in WORD.findall(text):
            words.setdefault(word, None)
        for char in text:  # a lone character (a space before a framing token, say) is a word too
            words.setdefault(char, None)
    vocab = {token: i for i, token in enumerate(SPECIALS + sorted(w for w in words if w not in SPECIALS))}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(WORD.pattern), behavior="isolated")
    core.decoder = decoders.Fuse()
    core.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS[:3]])
    core.add_tokens([AddedToken(p, special=False, normalized=False) for p in PIECES])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        unk_token="[UNK]", chat_template=tool_chat_template())
    tokenizer.save_pretrained(path)
    return tokenizer


def render(tokenizer, messages: list[dict[str, Any]], tools: list[Any]) -> str:
    return tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True,
                                         enable_thinking=False)


def tool_schemas() -> list[dict[str, Any]]:
    from transformers.utils import get_json_schema

    from wolfeclick.env import ShowdownToolEnv

    return [get_json_schema(ShowdownToolEnv.move), get_json_schema(ShowdownToolEnv.switch)]


def build_model(path: Path, tokenizer, seed: int):
    import torch
    from transformers import Qwen3ForCausalLM

    from wolfeclick.llm.tiny import tiny_qwen3_config

    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(tiny_qwen3_config(tokenizer, max_positions=8192))
    model.save_pretrained(path)
    return model


def warm_start(model, tokenizer, rows: list[dict[str, Any]], steps: int, lr: float, seed: int,
               batch_size: int = 8) -> list[float]:
    """Supervised steps on (rendered conversation → the recorded call), ``batch_size`` examples a step; the losses."""
    import torch

    tools = tool_schemas()
    examples = []
    for row in rows:
        prompt = tokenizer(render(tokenizer, row["messages"], tools), add_special_tokens=False).input_ids
        target = tokenizer(call_text(row["kind"], row["choice"]) + "<|im_end|>", add_special_tokens=False).input_ids
        examples.append((prompt, target))
    rng = random.Random(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    pad = tokenizer.pad_token_id
    for _ in range(steps):
        batch = [rng.choice(examples) for _ in range(batch_size)]
        width = max(len(p) + len(t) for p, t in batch)
        ids = torch.full((len(batch), width), pad)
        labels = torch.full((len(batch), width), -100)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, (prompt, target) in enumerate(batch):
            end = len(prompt) + len(target)
            ids[i, :end] = torch.tensor(prompt + target)
            labels[i, len(prompt):end] = torch.tensor(target)
            mask[i, :end] = 1
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


# --------------------------------------------------------------------------------------------- evaluation

def evaluate(model, tokenizer, factory, battles: list[dict[str, Any]], *, max_calls: int, temperature: float,
             seed: int) -> dict[str, Any]:
    """Play each held-out seed as a GRPO rollout does: the model's calls go to the tool env (a refused call comes
    back as an error and the model calls again), at most ``max_calls`` calls; the reward is ``reward_func``'s."""
    import torch
    from trl.chat_template_utils import add_response_schema, parse_response

    from wolfeclick.env import reward_func

    tokenizer = add_response_schema(tokenizer)
    torch.manual_seed(seed)
    tools = tool_schemas()
    calls = legal = first_legal = completed = 0
    rewards = []
    for battle in battles:
        env = factory()
        messages = [{"role": "user", "content": QUESTION + env.reset(**battle)}]
        for index in range(max_calls):
            ids = tokenizer(render(tokenizer, messages, tools), add_special_tokens=False, return_tensors="pt")
            with torch.no_grad():
                out = model.generate(**ids, max_new_tokens=8, do_sample=temperature > 0, temperature=temperature,
                                     top_k=0, top_p=1.0, pad_token_id=tokenizer.pad_token_id)
            prefix = ids.input_ids[0].tolist()
            answer = parse_response(tokenizer, out[0, len(prefix):].tolist(), prefix=prefix, tools=tools)
            messages.append(answer)
            tool_calls = answer.get("tool_calls") or []
            if not tool_calls:
                calls += 1
                break
            for call in tool_calls:
                calls += 1
                function = call.get("function", {})
                try:
                    result = getattr(env, function.get("name"))(**function.get("arguments", {}))
                    legal += 1
                    first_legal += index == 0
                except (ValueError, TypeError, AttributeError) as error:
                    result = str({"error": str(error)})
                messages.append({"role": "tool", "name": function.get("name", ""), "content": str(result)})
            if env.done:
                break
        rewards.append(reward_func([env])[0])
        completed += env.cut or env.result is not None and env.result.get("reason") != "forfeit"
    return {"rollouts": len(battles), "calls": calls, "legal_calls": legal, "first_call_legal": first_legal,
            "completed": completed, "rewards": rewards}


def summarise(name: str, result: dict[str, Any], seed: int) -> dict[str, Any]:
    from wolfeclick.arena.stats import wilson_interval

    calls, legal, n = result["calls"], result["legal_calls"], result["rollouts"]
    rewards = result["rewards"]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(rewards) for _ in rewards) / len(rewards) for _ in range(2000))
    return {
        "model": name, "rollouts": n, "calls": calls,
        "illegal_rate": 1 - legal / calls if calls else 1.0,
        "illegal_ci": [1 - x for x in reversed(wilson_interval(legal, calls))] if calls else [0.0, 1.0],
        "first_call_legal_rate": result["first_call_legal"] / n,
        "first_call_legal_ci": list(wilson_interval(result["first_call_legal"], n)),
        "completed_rate": result["completed"] / n, "completed_ci": list(wilson_interval(result["completed"], n)),
        "mean_reward": sum(rewards) / n, "reward_ci": [means[49], means[1949]],
    }


# --------------------------------------------------------------------------------------------- outputs

METRICS = (("illegal_rate", "illegal_ci", "illegal or unparseable calls"),
           ("completed_rate", "completed_ci", "rollouts that reach the horizon"))
REWARD = ("mean_reward", "reward_ci", "mean reward")
"""Plotted after the rates, on its own axis: from the forfeit (-10.05, every rollout plays nothing) to 0."""


def table(summary: list[dict[str, Any]]) -> str:
    """The comparison as a markdown table."""
    lines = ["| model | rollouts | calls | illegal or unparseable calls [95% Wilson] | rollouts reaching the horizon "
             "[95% Wilson] | mean reward [95% bootstrap] |", "|---|---:|---:|---|---|---|"]
    for row in summary:
        lines.append(
            f"| {row['model']} | {row['rollouts']} | {row['calls']} | {row['illegal_rate']:.1%} "
            f"[{row['illegal_ci'][0]:.1%}, {row['illegal_ci'][1]:.1%}] | {row['completed_rate']:.1%} "
            f"[{row['completed_ci'][0]:.1%}, {row['completed_ci'][1]:.1%}] | {row['mean_reward']:.2f} "
            f"[{row['reward_ci'][0]:.2f}, {row['reward_ci'][1]:.2f}] |")
    return "\n".join(lines) + "\n"


def svg_chart(summary: list[dict[str, Any]], title: str) -> str:
    """Each metric's rate per model as a dot with its interval: a small self-contained SVG (no plotting library)."""
    from html import escape

    width, row_height, left, top = 720, 26, 250, 56
    panel = len(summary) * row_height + 40
    height = top + panel * (len(METRICS) + 1) + 10
    x = lambda value: left + value * (width - left - 30)  # noqa: E731
    low_reward = min([-10.05] + [row[REWARD[1]][0] for row in summary])
    high_reward = max([0.0] + [row[REWARD[1]][1] for row in summary])
    scale = lambda value: (value - low_reward) / (high_reward - low_reward)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="13"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(title)}</text>']
    panels = [(rate, ci, f"{label} (95% Wilson)", lambda v: v, "{:.0%}", (0.0, 0.25, 0.5, 0.75, 1.0))
              for rate, ci, label in METRICS]
    panels.append((REWARD[0], REWARD[1], f"{REWARD[2]} (95% bootstrap)", scale, "{:.2f}",
                   (low_reward, (low_reward + high_reward) / 2, high_reward)))
    for p, (rate, ci, label, to_unit, fmt, ticks) in enumerate(panels):
        y0 = top + p * panel
        out.append(f'<text x="10" y="{y0 + 4}" font-weight="bold">{escape(label)}</text>')
        for tick in ticks:
            bottom = y0 + 14 + len(summary) * row_height
            at = x(to_unit(tick))
            out.append(f'<line x1="{at:.1f}" y1="{y0 + 12}" x2="{at:.1f}" y2="{bottom}" stroke="#ddd"/>'
                       f'<text x="{at:.1f}" y="{bottom + 14}" text-anchor="middle" fill="#666">'
                       f'{fmt.format(tick)}</text>')
        for i, row in enumerate(summary):
            y = y0 + 28 + i * row_height
            low, high = (x(to_unit(v)) for v in row[ci])
            out.append(f'<text x="{left - 10}" y="{y + 4}" text-anchor="end">{escape(row["model"])}</text>'
                       f'<line x1="{low:.1f}" y1="{y}" x2="{high:.1f}" y2="{y}" stroke="#1f77b4" '
                       f'stroke-width="3"/><circle cx="{x(to_unit(row[rate])):.1f}" cy="{y}" r="5" fill="#d62728"/>'
                       f'<text x="{high + 8:.1f}" y="{y + 4}" fill="#333">{fmt.format(row[rate])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def html_chart(summary: list[dict[str, Any]], title: str) -> str:
    """The same comparison as a self-contained interactive plotly page."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    panels = (*METRICS, REWARD)
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[label for _, _, label in panels])
    for col, (rate, ci, _) in enumerate(panels, start=1):
        fig.add_trace(go.Bar(
            x=[row["model"] for row in summary], y=[row[rate] for row in summary], showlegend=False,
            error_y={"type": "data", "symmetric": False, "array": [row[ci][1] - row[rate] for row in summary],
                     "arrayminus": [row[rate] - row[ci][0] for row in summary]}), row=1, col=col)
        if rate != REWARD[0]:
            fig.update_yaxes(range=[0, 1], tickformat=".0%", row=1, col=col)
    fig.update_layout(title={"text": title}, template="plotly_white")
    return fig.to_html(include_plotlyjs=True, full_html=True)


def write_outputs(out: Path, results: dict[str, Any]) -> None:
    summary = results["summary"]
    n = summary[0]["rollouts"] if summary else 0
    title = f"GRPO on CPU: {n} held-out battles per model, same seeds"
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "results.md").write_text(table(summary))
    (out / "learning.svg").write_text(svg_chart(summary, title))
    (out / "learning.html").write_text(html_chart(summary, title))


# --------------------------------------------------------------------------------------------- main

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/learn-demo"))
    parser.add_argument("--format", default="gen9randombattle",
                        help="random battles: every seed deals both sides new teams, so held-out battles are new")
    parser.add_argument("--team1", type=Path, default=None, help="the agent's team file (team formats)")
    parser.add_argument("--teams", type=Path, default=None,
                        help="the opponents' team pool, a folder (team formats)")
    parser.add_argument("--opponent", default="random")
    parser.add_argument("--horizon", type=int, default=1, help="decisions per rollout before it is cut")
    parser.add_argument("--corpus-horizon", type=int, default=4,
                        help="decisions of baseline play per training seed (warm-start examples, vocabulary)")
    parser.add_argument("--max-turns", type=int, default=60)
    parser.add_argument("--corpus-seeds", type=int, default=100, help="training seeds whose baseline play builds the "
                                                                       "vocabulary and the warm-start examples")
    parser.add_argument("--sft-horizon", type=int, default=1,
                        help="warm-start examples: the first N decisions of each training seed")
    parser.add_argument("--sft-steps", type=int, default=40,
                        help="warm-start steps (batches of 8); 40 teaches the call format part way (see the docs)")
    parser.add_argument("--sft-lr", type=float, default=2e-3)
    parser.add_argument("--steps", type=int, default=30, help="GRPO optimizer steps")
    parser.add_argument("--generations", type=int, default=8, help="rollouts per seed (the GRPO group)")
    parser.add_argument("--prompts-per-step", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--eval-seeds", type=int, default=200, help="held-out seeds (from 1,000,000 on)")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (a 64-wide model gains nothing more)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast
    from trl import GRPOConfig, GRPOTrainer

    from wolfeclick.env import reward_func
    from wolfeclick.llm.tiny import tool_chat_template

    torch.set_num_threads(args.threads)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    timings: dict[str, float] = {}

    train_seeds = list(range(1, args.corpus_seeds + 1))
    eval_seeds = list(range(1_000_000, 1_000_000 + args.eval_seeds))
    train_battles = [row(args, seed) for seed in train_seeds]
    eval_battles = [row(args, seed) for seed in eval_seeds]
    quiet = env_factory(args, False)
    held_out = overlap(battle_keys(args, train_battles), battle_keys(args, eval_battles))
    print("train/held-out overlap:", json.dumps(held_out))
    if held_out["battles_sharing_a_team"] or held_out["battles_sharing_the_opening_state"]:
        raise SystemExit(f"held-out battles overlap the training battles ({json.dumps(held_out)}): the comparison "
                         "would measure recall, not learning; use a format that deals new teams (random battles)")
    timings["overlap_s"] = time.perf_counter() - started
    rows = baseline_decisions(env_factory(args, False, args.corpus_horizon), train_battles)
    tools = tool_schemas()
    probe = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")),
                                    chat_template=tool_chat_template())
    texts = [render(probe, row["messages"], tools) for row in rows] + [row["choice"] for row in rows]
    texts += dex_words(args.format)
    tokenizer = build_word_tokenizer(out / "model", texts)
    tokenizer.padding_side = "left"
    model = build_model(out / "model", tokenizer, args.seed)
    timings["data_s"] = time.perf_counter() - started

    evals = {}
    evals["random init"] = evaluate(model, tokenizer, quiet, eval_battles, max_calls=args.horizon + 1,
                                    temperature=args.temperature, seed=args.seed)
    mark = time.perf_counter()
    losses = warm_start(model, tokenizer, first_decisions(rows, args.sft_horizon), args.sft_steps, args.sft_lr,
                        args.seed)
    timings["warm_start_s"] = time.perf_counter() - mark
    model.save_pretrained(out / "warm")
    mark = time.perf_counter()
    evals["warm start (GRPO step 0)"] = evaluate(model, tokenizer, quiet, eval_battles, max_calls=args.horizon + 1,
                                                 temperature=args.temperature, seed=args.seed)
    timings["eval_s"] = time.perf_counter() - mark

    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": QUESTION}], **battle}
                                 for battle in train_battles])
    # bf16=False: TRL defaults to bf16 autocast, which would make GRPO's rollouts sample from a different (rounded)
    # model than `evaluate` does; the comparison needs the same model, the same sampling.
    config = GRPOConfig(
        output_dir=str(out / "grpo"), max_steps=args.steps, learning_rate=args.lr,
        per_device_train_batch_size=args.generations * args.prompts_per_step, num_generations=args.generations,
        max_completion_length=256, max_tool_calling_iterations=args.horizon + 1, temperature=args.temperature,
        use_cpu=True, bf16=False, report_to=[], logging_steps=1, save_strategy="no", seed=args.seed, beta=0.0,
        gradient_checkpointing=False,
        chat_template_kwargs={"enable_thinking": False}, dataloader_num_workers=0, top_k=0,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=reward_func, args=config, train_dataset=dataset,
                          processing_class=tokenizer, environment_factory=env_factory(args, out / "recordings"))
    mark = time.perf_counter()
    trainer.train()
    timings["grpo_s"] = time.perf_counter() - mark
    model = trainer.model
    model.eval()
    evals["GRPO-trained"] = evaluate(model, tokenizer, quiet, eval_battles, max_calls=args.horizon + 1,
                                     temperature=args.temperature, seed=args.seed)
    timings["total_s"] = time.perf_counter() - started
    summary = [summarise(name, result, args.seed) for name, result in evals.items()]
    log = [{k: v for k, v in entry.items() if k in ("step", "reward", "reward_std", "loss")}
           for entry in trainer.state.log_history if "reward" in entry]
    results = {"args": {k: str(v) for k, v in vars(args).items()}, "summary": summary, "train_log": log,
               "warm_start_loss": [losses[0], losses[-1]] if losses else [], "timings": timings,
               "train_seeds": [train_seeds[0], train_seeds[-1]], "eval_seeds": [eval_seeds[0], eval_seeds[-1]],
               "overlap": held_out}
    write_outputs(out, results)
    print(table(summary))
    print(json.dumps(timings))
    return results


if __name__ == "__main__":
    main()
