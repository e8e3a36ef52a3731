"""The baseline opponents: poke-env's own RandomPlayer, MaxBasePowerPlayer and SimpleHeuristicsPlayer.

poke-env's players draw from Python's *global* ``random`` module. To keep every battle reproducible whatever else runs
beside it, each decision runs with poke-env's ``random`` swapped for the observation's seeded generator, under a
lock, so no two decisions ever share (or race on) a generator.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
from importlib.metadata import version
from typing import Any, Callable

from poke_env.player import MaxBasePowerPlayer, RandomPlayer, SimpleHeuristicsPlayer
from poke_env.player import baselines as _pe_baselines
from poke_env.player import player as _pe_player

from wolfeclick.errors import InputError
from wolfeclick.game.actions import find_by_command, split_command
from wolfeclick.policies.base import Decision, Observation

PLAYERS = {cls.__name__: cls for cls in (RandomPlayer, MaxBasePowerPlayer, SimpleHeuristicsPlayer)}
"""The poke-env players a baseline kind may name (the kinds themselves, names and descriptions, are registered in
``wolfeclick.policies.registry``)."""

_RNG_LOCK = threading.Lock()
_RNG_MODULES: tuple[Any, ...] = (_pe_player, _pe_baselines)  # modules whose `random` is swapped per call


def _fresh_rng_lock() -> None:
    """A forked child: a lock another thread of the parent held at the fork would never be released."""
    global _RNG_LOCK
    _RNG_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_fresh_rng_lock)


def _build_player(player_class: Any) -> Any:
    """A poke-env player built on a loop of its own, in a short-lived thread.

    poke-env's players create their asyncio objects by handing a coroutine to its background loop (``POKE_LOOP``)
    and waiting; in a forked child that loop's thread does not exist, so the wait never ends. Built inside a running
    loop that is passed as the player's ``loop``, they are created in place; a server-less player never uses them."""
    async def build() -> Any:
        return player_class(start_listening=False, log_level=logging.CRITICAL, loop=asyncio.get_running_loop())

    result: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(build()))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=run, name="wolfeclick-baseline-build")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    _share_one_logger(result[0])
    return result[0]


QUIET_LOGGER = logging.getLogger("wolfeclick.baselines.poke_env")
"""The one logger every baseline player logs to (poke-env's own messages, at CRITICAL only)."""
QUIET_LOGGER.setLevel(logging.CRITICAL)


def _share_one_logger(player: Any) -> None:
    """poke-env gives each player a logger named after its unique username, with a handler of its own, and logging
    keeps every named logger for the life of the process: a server building a player per episode grew by one logger,
    handler and formatter per battle (issue 60: serve-env's RSS grew with every episode). The player logs to one
    shared quiet logger instead, and its own is forgotten."""
    client = getattr(player, "ps_client", None)
    own = getattr(client, "_logger", None)
    if client is None or not isinstance(own, logging.Logger):
        return
    own.handlers.clear()
    logging.Logger.manager.loggerDict.pop(own.name, None)
    client._logger = QUIET_LOGGER


@functools.cache
def _poke_env_version() -> str:
    """Looked up once: ``importlib.metadata`` scans every installed package, ~2% of a battle's Python CPU per call."""
    return version("poke-env")


class BaselinePolicy:
    """A poke-env baseline player asked ``choose_move`` directly, with no server and no global randomness."""

    blocking = False

    def __init__(self, spec: str, player: str, description: str) -> None:
        if player not in PLAYERS:
            raise InputError(f"unknown poke-env player {player!r}; choose one of {', '.join(PLAYERS)}")
        player_class, self.description = PLAYERS[player], description
        self.spec = spec
        self._player = _build_player(player_class)

    def metadata(self) -> dict[str, Any]:
        return {"kind": "baseline", "implementation": f"poke-env {_poke_env_version()}",
                "player": type(self._player).__name__, "description": self.description}

    def _seeded(self, observation: Observation, ask: Callable[[Any], Any]) -> Any:
        """``ask(battle)`` with poke-env's ``random`` swapped for the observation's seeded generator."""
        with _RNG_LOCK:
            saved = [module.random for module in _RNG_MODULES]
            try:
                for module in _RNG_MODULES:
                    module.random = observation.rng  # same method names as the module: choice, random…
                return ask(observation.battle)
            finally:
                for module, original in zip(_RNG_MODULES, saved):
                    module.random = original

    def decide(self, observation: Observation) -> Decision:
        if observation.request.get("teamPreview"):
            return self._preview(observation)
        order = self._seeded(observation, self._player.choose_move)
        command = order.message.replace("/choose", "", 1).strip()
        action = find_by_command(command, observation.legal_actions)
        if action is None or action.command() in observation.rejected:
            # poke-env's view disagreed with the simulator's request (rare): take a seeded legal action instead.
            allowed = observation.allowed()
            fallback = observation.rng.choice(allowed) if allowed else None
            return Decision(action=fallback, info={"baseline_choice": command, "note": "not legal now; seeded fallback"})
        parsed = split_command(command)
        flags = parsed[2] if parsed is not None else ()  # terastallize, mega…: a switch has none
        return Decision(action=action, command=" ".join([action.command(), *flags]))

    def _preview(self, observation: Observation) -> Decision:
        """Team preview through poke-env's own ``teampreview`` (a seeded random order for all three baselines):
        the recorded action is the lead, the command the whole order."""
        order = str(self._seeded(observation, self._player.teampreview))
        digits = [int(c) for c in order.replace("/team", "", 1) if c in "0123456789"]
        action = next((a for a in observation.legal_actions if digits and a.slot == digits[0]), None)
        if action is None or action.command() in observation.rejected:
            allowed = observation.allowed()
            fallback = observation.rng.choice(allowed) if allowed else None
            return Decision(action=fallback, info={"baseline_choice": order, "note": "not legal now; seeded fallback"})
        return Decision(action=action, command="team " + "".join(map(str, digits)))
