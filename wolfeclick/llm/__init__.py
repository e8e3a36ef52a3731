"""Language-model checkpoints as policies: specs, loading, prompts, decoding."""
