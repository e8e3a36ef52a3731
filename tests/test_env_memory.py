"""serve-env's memory stays flat over many episodes (issue 60): what a finished episode made is garbage the collector
reaches. Each episode used to freeze the whole heap out of the collector while it played (``relaxed_gc``'s
``gc.freeze``): whatever was alive when it started (the last episode's poke-env player and battle tracker, whose last
references go a moment later) was never walked again, and unfreezing at the episode's end put it in the oldest
generation uncounted, so no full collection ever came for it: ~16 kB an episode, linear over 2,500
(``python -m benchmarks.env_server_memory``). Played on the real simulator, through the server's own episode table."""

from __future__ import annotations

import gc
import weakref

import pytest

from wolfeclick.env.env import DEFAULT_PROMPT
from wolfeclick.env.server import EpisodeTable, ShowdownAction, ShowdownServerEnv

EPISODES = 6


@pytest.mark.own_collector  # nothing frozen by the suite: a freeze an episode made itself must show
def test_finished_episodes_players_are_collected_while_the_next_one_plays():
    table = EpisodeTable(opponent="random", format="gen9randombattle", prompt=DEFAULT_PROMPT, max_turns=2,
                         recordings=False, max_episodes=4, idle_timeout_s=600, processes=1)  # save nothing
    session = ShowdownServerEnv(table)  # a WebSocket session's env: each reset starts a fresh battle and player
    players: list[weakref.ref] = []
    try:
        for seed in range(1, EPISODES + 1):
            observation = session.reset(seed=seed)
            entry = table.get(session.episode_id, session)
            assert entry.env is not None
            players.append(weakref.ref(entry.env.opponent._player))  # the poke-env player: cyclic, gc frees it
            while not observation.done:
                observation = session.step(ShowdownAction(index=0))
        session.reset(seed=EPISODES + 1)  # the next episode is in play: every finished one's player is garbage
        gc.collect()
        kept = sum(ref() is not None for ref in players)
        assert kept == 0, f"{kept} of {EPISODES} finished episodes' players are still held after a full collection"
    finally:
        session.close()
        table.close()
