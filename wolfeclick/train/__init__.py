"""Training runs on the environment (the top of the house beside the CLI: they read ``env`` and ``llm`` for the
models and ``arena`` for the held-out win rates). Each is a command, not an import of the app or the CLI:

    .venv/bin/python -m wolfeclick.train.sb3 --out runs/sb3          # MaskablePPO on the vector env (CPU)
    .venv/bin/python -m wolfeclick.train.learn_demo --out runs/demo   # SFT then GRPO on a tiny model (CPU)
    .venv/bin/python -m wolfeclick.train.grpo                         # GRPO on Qwen3-4B (a GPU)

Their heavy libraries (trl, stable-baselines3, torch) are imported where a run starts, never by ``wolfeclick``."""
