"""Pure game logic over poke-env battle state: observations, legal actions, rewards."""
