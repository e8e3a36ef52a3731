"""How much text a ``ShowdownToolEnv`` rollout hands the model: per decision and per episode, whole battles and
rollouts cut at a horizon, so ``wolfeclick.train.grpo``'s budgets can be set from measurements.

    .venv/bin/python scripts/measure_rollout_text.py                         # characters (no tokenizer needed)
    .venv/bin/python scripts/measure_rollout_text.py --results changes       # tool results with only what changed
    .venv/bin/python scripts/measure_rollout_text.py --tokenizer Qwen/Qwen3-4B-Instruct-2507   # and tokens

The agent plays a seeded random legal tool call each decision against ``--opponent``; what is counted is exactly
what the model reads (reset's text and each tool result). Tokens are counted with ``--tokenizer`` when given (the
text alone, without the chat template's few tokens per message).
"""

from __future__ import annotations

import argparse
import random
import statistics


def rollout(env, seed: int, horizon: int | None, count) -> list[int]:
    """Sizes (chars or tokens) of every text the model read in one rollout, reset's first."""
    rng = random.Random(seed)
    sizes = [count(env.reset(seed=seed, horizon=horizon))]
    while not env.done:
        action, choice = rng.choice(env._options())
        text = env.move(choice) if action.kind == "move" else env.switch(choice)
        sizes.append(count(text))
    env._finish()
    return sizes


def summary(values: list[int]) -> str:
    values = sorted(values)
    return f"median {statistics.median(values):,.0f}, min {values[0]:,}, max {values[-1]:,}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--battles", type=int, default=12)
    parser.add_argument("--format", default="gen4randombattle")
    parser.add_argument("--opponent", default="heuristic")
    parser.add_argument("--horizons", default="8,16", help="comma-separated horizons to measure besides whole battles")
    parser.add_argument("--results", default="full", choices=["full", "changes"],
                        help="tool results: the whole state, or only what changed since the last one")
    parser.add_argument("--tokenizer", default=None, help="a tokenizer (Hub id or folder) to count tokens with")
    args = parser.parse_args()

    from wolfeclick.env import ShowdownToolEnv

    count = len
    unit = "characters"
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)

        def count(text: str) -> int:
            return len(tokenizer(text, add_special_tokens=False)["input_ids"])

        unit = f"tokens ({args.tokenizer})"
    env = ShowdownToolEnv(opponent=args.opponent, format=args.format, recordings=False, max_turns=300,
                          results=args.results)
    horizons: list[int | None] = [None] + [int(h) for h in args.horizons.split(",") if h]
    print(f"{args.battles} {args.format} rollouts vs {args.opponent}, seeds 1..{args.battles}, {args.results} tool "
          f"results; sizes in {unit}")
    for horizon in horizons:
        per_decision, per_episode, decisions = [], [], []
        for seed in range(1, args.battles + 1):
            sizes = rollout(env, seed, horizon, count)
            per_decision += sizes
            per_episode.append(sum(sizes))
            decisions.append(len(sizes) - 1)
        label = "whole battles" if horizon is None else f"horizon {horizon}"
        print(f"- {label}: tool calls per rollout {summary(decisions)}; text per decision {summary(per_decision)}; "
              f"text per rollout {summary(per_episode)}")


if __name__ == "__main__":
    main()
