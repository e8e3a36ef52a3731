"""Train sb3-contrib's MaskablePPO on ``ShowdownEnv``'s vector observation and masked discrete action, then compare
win rates before and after training on battles whose teams never appeared in training.

    .venv/bin/python -m wolfeclick.train.sb3 --out runs/sb3 --timesteps 20000 --eval-battles 200   # CPU is enough

- **Env**: ``ShowdownEnv(opponent, observation="vector", action="discrete")``: the features of
  ``wolfeclick.game.features`` (a ``Box``) and ``Discrete(13)`` (four moves, five switches, four moves with the
  format's gimmick) with ``action_masks()``, which MaskablePPO reads. The reward is the env's own (shaped reward per
  decision, ±10 outcome).
- **Held out**: training battles take seeds from ``--train-seed`` on, evaluation battles from ``--eval-seed`` on; in a
  random-battle format every seed deals both sides new teams. Both sides' teams of every training and evaluation
  battle are read from the battle's recording (each side's own view of its team), and the script refuses to report
  if any evaluation battle shares a team with a training battle; the count is printed and saved.
- **Measure**: wins against ``random`` and ``maxdamage`` on the same evaluation seeds, before training (the freshly
  initialised policy, same seed) and after, acting greedily (``deterministic=True``) among the legal actions; Wilson
  95% intervals.

Outputs in ``--out``: ``results.json``, ``results.md`` (the table), ``win_rates.svg`` (the plot) and ``model.zip``.
"""

from __future__ import annotations

import argparse
import json
import time
from html import escape
from pathlib import Path
from typing import Any

import gymnasium as gym

from wolfeclick.sides import SIDES

EVAL_OPPONENTS = ("random", "maxdamage")


def team_key(recording: Any) -> tuple[tuple[str, ...], ...]:
    """Both sides' teams (species in team order) from a recording's first snapshot."""
    snapshot = recording.turns[0].snapshot if recording.turns else {}
    return tuple(tuple(mon.species for mon in snapshot[side].team) for side in SIDES if side in snapshot)


class HeldOutSeeds(gym.Wrapper):
    """Each reset plays the next seed of a range (SB3 resets without one), and every finished battle's teams are
    kept, to check the evaluation battles against."""

    def __init__(self, env: gym.Env, first_seed: int) -> None:
        super().__init__(env)
        self.next_seed = first_seed
        self.teams: set[tuple[str, ...]] = set()
        self.battles = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._remember()
        seed, self.next_seed = self.next_seed, self.next_seed + 1
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        result = self.env.step(action)
        if result[2] or result[3]:
            self._remember()
        return result

    def action_masks(self) -> Any:
        return self.env.unwrapped.action_masks()

    def _remember(self) -> None:
        env = self.env.unwrapped
        end = env.episode_end or env.last_end
        if end is not None and id(end) != getattr(self, "_seen", None):
            self._seen = id(end)
            self.teams.update(team_key(end.recording))
            self.battles += 1


def make_env(opponent: str, format_id: str, first_seed: int, max_turns: int, service: Any) -> HeldOutSeeds:
    from wolfeclick.env import ShowdownEnv

    return HeldOutSeeds(ShowdownEnv(opponent, format=format_id, recordings=False, max_turns=max_turns,
                                    observation="vector", action="discrete", service=service), first_seed)


def evaluate(model: Any, env: HeldOutSeeds, battles: int) -> dict[str, Any]:
    """Play ``battles`` battles from the env's seed range with the policy's greedy legal action."""
    wins = ties = 0
    teams: list[tuple[tuple[str, ...], ...]] = []
    for _ in range(battles):
        obs, _ = env.reset()
        while True:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, _, terminated, truncated, info = env.step(int(action))
            if terminated or truncated:
                break
        end = env.unwrapped.episode_end
        teams.append(team_key(end.recording))
        wins += info["result"]["winner"] == env.unwrapped.agent_side
        ties += info["result"]["winner"] == ""
    return {"battles": battles, "wins": wins, "ties": ties, "teams": teams}


def summarise(name: str, opponent: str, result: dict[str, Any]) -> dict[str, Any]:
    from wolfeclick.arena.stats import wilson_interval

    n, wins = result["battles"], result["wins"]
    low, high = wilson_interval(wins, n)
    return {"policy": name, "opponent": opponent, "battles": n, "wins": wins, "ties": result["ties"],
            "win_rate": wins / n, "ci": [low, high]}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| policy | opponent | battles | wins | win rate [95% Wilson] |", "|---|---|---:|---:|---|"]
    for row in rows:
        lines.append(f"| {row['policy']} | {row['opponent']} | {row['battles']} | {row['wins']} | "
                     f"{row['win_rate']:.1%} [{row['ci'][0]:.1%}, {row['ci'][1]:.1%}] |")
    return "\n".join(lines) + "\n"


def svg(rows: list[dict[str, Any]], title: str) -> str:
    """Win rate per (policy, opponent) as a dot with its Wilson interval: a self-contained SVG."""
    width, left, top, step = 640, 230, 50, 28
    height = top + step * len(rows) + 40
    x = lambda value: left + value * (width - left - 40)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="13"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(title)}</text>']
    bottom = top + step * len(rows)
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{x(tick):.1f}" y1="{top - 10}" x2="{x(tick):.1f}" y2="{bottom}" stroke="#ddd"/>'
                   f'<text x="{x(tick):.1f}" y="{bottom + 16}" text-anchor="middle" fill="#666">{tick:.0%}</text>')
    for i, row in enumerate(rows):
        y = top + i * step + 4
        low, high = (x(v) for v in row["ci"])
        out.append(f'<text x="{left - 10}" y="{y + 4}" text-anchor="end">{escape(row["policy"])} vs '
                   f'{escape(row["opponent"])}</text><line x1="{low:.1f}" y1="{y}" x2="{high:.1f}" y2="{y}" '
                   f'stroke="#1f77b4" stroke-width="3"/><circle cx="{x(row["win_rate"]):.1f}" cy="{y}" r="5" '
                   f'fill="#d62728"/><text x="{high + 8:.1f}" y="{y + 4}" fill="#333">{row["win_rate"]:.1%}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/sb3"))
    parser.add_argument("--format", default="gen9randombattle")
    parser.add_argument("--opponent", default="random", help="the training opponent")
    parser.add_argument("--timesteps", type=int, default=20_000)
    parser.add_argument("--n-steps", type=int, default=1024, help="rollout length per PPO update")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--eval-battles", type=int, default=200, help="held-out battles per opponent and policy")
    parser.add_argument("--train-seed", type=int, default=1, help="first training battle seed")
    parser.add_argument("--eval-seed", type=int, default=5_000_000, help="first held-out battle seed")
    parser.add_argument("--max-turns", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0, help="the policy's initialisation and sampling seed")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    import torch
    from sb3_contrib import MaskablePPO

    from wolfeclick.env import SimService

    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    service = SimService(1)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    train_env = make_env(args.opponent, args.format, args.train_seed, args.max_turns, service)
    model = MaskablePPO("MlpPolicy", train_env, n_steps=args.n_steps, batch_size=args.batch_size,
                        learning_rate=args.lr, seed=args.seed, device="cpu", verbose=0)
    evals: dict[tuple[str, str], dict[str, Any]] = {}

    def evaluate_all(name: str) -> None:
        for opponent in EVAL_OPPONENTS:
            env = make_env(opponent, args.format, args.eval_seed, args.max_turns, service)
            evals[(name, opponent)] = evaluate(model, env, args.eval_battles)
            env.close()

    mark = time.perf_counter()
    evaluate_all("before training")
    timings["eval_before_s"] = time.perf_counter() - mark
    mark = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    timings["train_s"] = time.perf_counter() - mark
    train_env._remember()
    mark = time.perf_counter()
    evaluate_all("after training")
    timings["eval_after_s"] = time.perf_counter() - mark
    model.save(args.out / "model.zip")
    train_env.close()
    service.close()
    timings["total_s"] = time.perf_counter() - started

    held_out = [team for result in evals.values() for key in result["teams"] for team in key]
    overlap = {"training_battles": train_env.battles, "training_teams": len(train_env.teams),
               "held_out_teams": len(set(held_out)),
               "held_out_teams_seen_in_training": len(set(held_out) & train_env.teams)}
    print("train/held-out overlap:", json.dumps(overlap))
    if overlap["held_out_teams_seen_in_training"]:
        raise SystemExit(f"held-out battles share teams with training battles: {json.dumps(overlap)}")
    rows = [summarise(name, opponent, result) for (name, opponent), result in evals.items()]
    results = {"args": {k: str(v) for k, v in vars(args).items()}, "summary": rows, "overlap": overlap,
               "timings": timings}
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "results.md").write_text(table(rows))
    title = f"MaskablePPO, {args.timesteps:,} steps vs {args.opponent}: {args.eval_battles} held-out battles each"
    (args.out / "win_rates.svg").write_text(svg(rows, title))
    print(table(rows))
    print(json.dumps(timings))
    return results


if __name__ == "__main__":
    main()
