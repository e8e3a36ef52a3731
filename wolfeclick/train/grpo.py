"""GRPO-train a LoRA on Showdown battles with TRL's ``environment_factory`` and ``wolfeclick.env.ShowdownToolEnv``.

Run as is on a GPU machine (the weights come from the Hub, so not with ``HF_HUB_OFFLINE=1``):

    .venv/bin/python -m wolfeclick.train.grpo                                  # a fresh LoRA on Qwen3-4B-Instruct-2507
    .venv/bin/python -m wolfeclick.train.grpo --adapter preset:run3            # go on from a published adapter
    .venv/bin/python -m wolfeclick.train.grpo --opponent heuristic --steps 200 --out runs/vs-heuristic

Every rollout is one battle against ``--opponent``, played by tool calls (``move(name)`` / ``switch(pokemon)``), cut
after ``--horizon`` decisions so that it fits the token budget (measured: a gen4 decision's tool result is about
1,700 characters, a whole battle 36k–107k, 8 decisions about 13.6k; see docs/training.md). A cut rollout's reward is
the shaped reward of its decisions; ``--horizon 0`` plays whole battles (shaped reward plus the outcome, ±10, and a
battle left unfinished when the budget runs out is forfeited, −10). Every rollout is saved as a recording in
``--recordings``, so the app's Replays tab shows what the model did at every step while it trains
(``WOLFECLICK_RECORDINGS=<dir> make run``). The trained adapter is saved in ``--out`` and plays like any other
checkpoint: ``python -m wolfeclick record --p1 llm:BASE+<out> --p2 heuristic``.
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="Qwen/Qwen3-4B-Instruct-2507", help="base model (Hub id or folder)")
    parser.add_argument("--adapter", default=None, help="start from this LoRA: preset:run1..3, a Hub id or a folder")
    parser.add_argument("--opponent", default="random", help="opponent spec: random, maxdamage, heuristic, llm:…")
    parser.add_argument("--format", default="gen4randombattle", help="Showdown format (the presets': gen4)")
    parser.add_argument("--steps", type=int, default=100, help="optimizer steps")
    parser.add_argument("--battles", type=int, default=512, help="distinct battle seeds in the dataset")
    parser.add_argument("--generations", type=int, default=8, help="rollouts per seed (the GRPO group)")
    parser.add_argument("--batch", type=int, default=8, help="rollouts per device per step")
    parser.add_argument("--completion-tokens", type=int, default=8192,
                        help="token budget of one whole battle (model turns and tool results together)")
    parser.add_argument("--horizon", type=int, default=8,
                        help="decisions per rollout before it is cut (0: whole battles, which need ~30–60 tool calls "
                             "and far more than 8,192 tokens)")
    parser.add_argument("--tool-calls", type=int, default=12,
                        help="at most this many tool calls per rollout (the horizon plus room for refused calls)")
    parser.add_argument("--max-turns", type=int, default=60, help="battles stop (truncated) after this turn")
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--recordings", type=Path, default=Path("recordings/training"))
    parser.add_argument("--out", type=Path, default=Path("runs/grpo-showdown"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch
    from datasets import Dataset
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from wolfeclick.env import ShowdownToolEnv
    from wolfeclick.env.tool_env import prompt_keeping_reward_func
    from wolfeclick.llm.checkpoint_specs import PRESETS

    adapter, revision = args.adapter, None
    if adapter and adapter.startswith("preset:"):
        preset = PRESETS[adapter.removeprefix("preset:")]
        adapter, revision = preset.adapter_repo, preset.adapter_revision

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.padding_side = "left"
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype)
    if adapter:
        model = PeftModel.from_pretrained(model, adapter, revision=revision, is_trainable=True)
        peft_config = None
    else:
        peft_config = LoraConfig(r=32, lora_alpha=64, lora_dropout=0.0, task_type="CAUSAL_LM",
                                 target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                 "down_proj"])
        model = get_peft_model(model, peft_config)

    question = ("You are playing a Pokémon Showdown singles battle. Read the state, then play one action per tool "
                "call until the battle is over.\n\n")
    dataset = Dataset.from_list([
        {"prompt": [{"role": "user", "content": question}], "seed": args.seed * 100_000 + i, "format": args.format,
         "opponent": args.opponent, "horizon": args.horizon or None}
        for i in range(args.battles)
    ])
    factory = functools.partial(ShowdownToolEnv, recordings=args.recordings, format=args.format,
                                opponent=args.opponent, max_turns=args.max_turns)
    config = GRPOConfig(
        output_dir=str(args.out), max_steps=args.steps, learning_rate=args.lr, per_device_train_batch_size=args.batch,
        num_generations=args.generations, max_completion_length=args.completion_tokens,
        max_tool_calling_iterations=args.tool_calls, temperature=0.7, bf16=dtype == torch.bfloat16,
        gradient_checkpointing=True, logging_steps=1, save_steps=50, report_to=[], seed=args.seed,
        chat_template_kwargs={"enable_thinking": False},
    )
    reward_func = prompt_keeping_reward_func(tokenizer, **config.chat_template_kwargs)  # recordings keep the prompts
    trainer = GRPOTrainer(model=model, reward_funcs=reward_func, args=config, train_dataset=dataset,
                          processing_class=tokenizer, environment_factory=factory)
    trainer.train()
    trainer.save_model(str(args.out))
    print(f"adapter saved in {args.out}; rollouts in {args.recordings}")


if __name__ == "__main__":
    main()
