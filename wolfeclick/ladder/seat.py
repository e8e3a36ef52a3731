"""The ``showdown:USER`` kind: any bot that plays on a Showdown server, entered in tournaments through that server.

The bot logs in to a server (``wolfeclick server`` runs a local no-security one on 127.0.0.1; ``$WOLFECLICK_SERVER``
or the ``server`` option says where) and accepts challenges in the tournament's format, as any poke-env player's
``accept_challenges`` does. For each of its battles the Arena's side logs in under a fresh guest name, challenges
USER there and plays the battle through the ladder code (``LadderSession``), so the battle is recorded exactly like
a ``ladder`` battle, from the server's protocol; the engine then counts it like any other row.

What differs from an embedded battle: the server picks the seed (the recording's ``seed`` is null and its input log
empty, so it replays but cannot be re-simulated), and Showdown seats the challenger as p1, so when the schedule puts
the bot in p1 the recording's seats are the other way round (the engine keeps the row in the schedule's seats).
Battles against one bot are played one at a time. Errors are one line: the user is not connected, refused the
challenge, or did not accept it within ``wait`` seconds.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from poke_env.data import to_id_str

from wolfeclick.battle.remote import RemoteBattle
from wolfeclick.battle.schema import Recording
from wolfeclick.errors import InputError, one_line
from wolfeclick.ladder.play import LadderError, LadderOptions, LadderSession, RemotePlayer
from wolfeclick.policies.base import Policy
from wolfeclick.settings import settings

__all__ = ["PREFIX", "DESCRIPTION", "OPTIONS", "ShowdownSeat", "make_showdown_seat", "is_showdown_spec",
           "user_connected"]

PREFIX = "showdown:"
DESCRIPTION = "a bot connected to a Showdown server ($WOLFECLICK_SERVER): challenged there, recorded like a ladder battle"
OPTIONS: dict[str, tuple[type, Any, str]] = {
    "server": (str, None, "the server's websocket URL (default $WOLFECLICK_SERVER, else "
                          "ws://127.0.0.1:8000/showdown/websocket)"),
    "wait": (float, 60.0, "seconds the bot may take to accept a challenge"),
    "timeout": (float, 300.0, "seconds a battle may go without a message from the server (then aborted)"),
}
"""name → (type, default, what it does): the kind's options for the policy registry."""


def is_showdown_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


@dataclass
class ShowdownSeat(RemotePlayer):
    """``showdown:USER``: the user ``user`` on ``server``; a ``battle.remote.ServerSeat``."""

    user: str = ""
    wait: float = 60.0
    timeout: float = 300.0

    def check(self) -> None:
        from websockets.exceptions import WebSocketException

        try:
            present = user_connected(self.server, self.user, timeout=min(self.wait, 30.0))
        except (OSError, TimeoutError, ValueError, WebSocketException) as exc:
            raise LadderError(f"{self.spec}: cannot reach the server {self.server}: {one_line(exc)}") from None
        if not present:
            raise LadderError(f"{self.spec}: no user {self.user} is connected to {self.server}")

    async def play_against(self, policy: Policy, battle: RemoteBattle) -> Recording:
        options = LadderOptions(self.server, battle.format_id, n=1, mode="challenge", opponent=self.user,
                                team=battle.team, timeout=self.timeout, wait=self.wait, max_turns=battle.max_turns)
        try:
            summary = await LadderSession(policy, options).run()
        except LadderError as exc:
            raise LadderError(f"{self.spec}: {exc}") from None
        if not summary.recordings:
            raise LadderError(f"{self.spec}: {summary.stopped or 'the battle did not start'}")
        recording = summary.recordings[0]
        return recording.model_copy(update={"id": battle.battle_id}) if battle.battle_id else recording


def check_showdown_spec(spec: str, server: str | None = None) -> tuple[str, str]:
    """``showdown:USER``'s user id and server URL, once both are well formed (the registry's check: nothing is
    asked of the server). USER must be a Showdown user id (lower-case letters and digits), the name the
    leaderboard and the server's own recordings know it by."""
    user = spec.strip()[len(PREFIX):]
    if not user or to_id_str(user) != user or len(user) > 18:
        hint = f" (write showdown:{to_id_str(user)})" if to_id_str(user) and len(to_id_str(user)) <= 18 else ""
        raise InputError(f"{spec.strip()!r} does not name a Showdown user id: lower-case letters and digits, at most "
                         f"18{hint}")
    url = server or settings().server
    LadderOptions(url, "gen9randombattle")  # the URL's shape: one line if it is no websocket URL
    return user, url


def make_showdown_seat(spec: str, *, server: str | None = None, wait: float = 60.0,
                       timeout: float = 300.0) -> ShowdownSeat:
    """The seat ``showdown:USER`` names (``check_showdown_spec``); it connects nowhere until it is checked or plays."""
    user, url = check_showdown_spec(spec, server)
    return ShowdownSeat(spec=PREFIX + user, server=url, user=user, wait=float(wait), timeout=float(timeout))


def user_connected(server: str, user: str, *, timeout: float = 10.0) -> bool:
    """Whether ``user`` is connected to ``server`` now: the server's own ``userdetails`` answer (``rooms`` is false
    for a user who is not). No login is needed to ask."""
    from websockets.sync.client import connect

    deadline = time.monotonic() + timeout
    with connect(server, open_timeout=timeout) as socket:
        asked = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no answer within {timeout:g} s")
            message = str(socket.recv(timeout=remaining))
            if not asked and "|challstr|" in message:
                socket.send(f"|/cmd userdetails {user}")
                asked = True
            for line in message.split("\n"):
                if line.startswith("|queryresponse|userdetails|"):
                    details = json.loads(line[len("|queryresponse|userdetails|"):])
                    if isinstance(details, dict) and details.get("userid") == user:
                        return details.get("rooms") is not False
