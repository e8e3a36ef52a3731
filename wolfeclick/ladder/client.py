"""poke-env's Showdown client (``PSClient``) on our own event loop, with our login and a clear account of failures.

poke-env's client speaks the server's chat protocol (challenges, ``/utm``, ``/search``, sending to rooms) and hands
battle-room frames to a callback. Three things are ours:

- it runs on the caller's asyncio loop (not poke-env's background ``POKE_LOOP``), so nothing hops threads;
- the login: the password (a ``Secret``) goes only into the login server's POST and is never given to poke-env,
  logged or echoed; without a password the name is taken without an assertion, which only a ``--no-security``
  server (a local one) accepts;
- every failure (connection refused, name taken, login refused, popups, the socket closing) is kept as one line,
  so the session can end its battles ``aborted`` and say why.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Awaitable, Callable

import websockets
from poke_env import AccountConfiguration, ServerConfiguration
from poke_env.data import to_id_str
from poke_env.ps_client import PSClient

from wolfeclick.errors import one_line
from wolfeclick.ladder.credentials import Secret

DEFAULT_LOGIN_SERVER = "https://play.pokemonshowdown.com/api/login"
"""Where Showdown's main server checks passwords (poke-env's own default is the older ``action.php``, which takes
the same form); a community server with its own login server names it with ``--login-server``."""

FrameHandler = Callable[[str, list[str]], None]
"""Called with a battle room's tag (``battle-gen9randombattle-12``) and the frame's lines."""


class ArenaClient(PSClient):
    """One connection and login to a Showdown server."""

    def __init__(self, username: str, password: Secret | None, server: str, login_server: str, *,
                 on_frame: FrameHandler, on_challenge: Callable[[str, str], None],
                 on_challenges: Callable[[dict[str, str]], None]) -> None:
        self._secret = password
        self._on_frame = on_frame
        self._on_challenge = on_challenge
        self._on_challenges = on_challenges
        self.failure: str | None = None
        """Why the connection or the login failed (one line), once it has."""
        self.closed = asyncio.Event()
        self.popups: asyncio.Queue[str] = asyncio.Queue()
        self.refused: set[str] = set()
        """User ids that rejected our challenge (``/reject``); ``refusal`` is set when one does."""
        self.refusal = asyncio.Event()
        super().__init__(
            AccountConfiguration(username, None),  # poke-env never holds the password
            server_configuration=ServerConfiguration(server, login_server),
            on_battle_message=self._battle_message,
            on_update_challenges=self._update_challenges_message,
            on_challenge_request=self._challenge_message,
            start_listening=False,
            log_level=logging.CRITICAL,
            loop=asyncio.get_running_loop(),
        )
        self.logger.setLevel(logging.CRITICAL + 1)  # poke-env's logger prints to stdout; every failure is ours to say
        self.logger.propagate = False

    # --- the connection --------------------------------------------------------------------------------------
    async def listen(self) -> None:
        """Read the socket until it closes; messages are handled in order, one at a time."""
        try:
            async with websockets.connect(self.websocket_url, max_queue=None, open_timeout=self._open_timeout,
                                          ping_interval=self._ping_interval, ping_timeout=self._ping_timeout,
                                          ) as socket:
                self.websocket = socket
                async for message in socket:
                    await self._handle_message(str(message))
            self._fail(f"the server {self.websocket_url} closed the connection")
        except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError) as exc:
            self._fail(f"lost the connection to {self.websocket_url}: {one_line(exc)}")
        finally:
            self.closed.set()

    def _fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = self._secret.scrub(reason) if self._secret else reason

    async def close(self) -> None:
        websocket = getattr(self, "websocket", None)
        if websocket is not None:
            await websocket.close()

    async def send(self, message: str, room: str = "") -> bool:
        """Send one message; False (with ``failure`` set) when the socket is already gone."""
        try:
            await self.send_message(message, room)
            return True
        except (websockets.exceptions.WebSocketException, OSError, AttributeError) as exc:
            self._fail(f"lost the connection to {self.websocket_url}: {one_line(exc)}")
            return False

    # --- messages --------------------------------------------------------------------------------------------
    async def _handle_message(self, message: str) -> None:
        if message.startswith("|popup|"):
            await self.popups.put(message[len("|popup|"):].replace("||", " ").strip())
            return
        if message.startswith("|nametaken|"):
            parts = message.split("|")
            self._fail(f"the server refused the name {self.username!r}: {parts[3] if len(parts) > 3 else 'taken'}")
            await self.close()
            return
        if message.startswith(">") and not message.startswith((">battle", ">game")):
            return  # a chat room's frame (the lobby, say): nothing for us
        if message.startswith("|pm|"):
            self._private_message(message.split("|"))
        await super()._handle_message(message)

    def _private_message(self, parts: list[str]) -> None:
        """``|pm| Sender| Receiver|/nonotify Sender rejected the challenge.``: the server's word for a refusal."""
        if len(parts) > 4 and parts[4].startswith("/nonotify ") and parts[4].endswith(" rejected the challenge."):
            self.refused.add(to_id_str(parts[2]))
            self.refusal.set()

    async def _battle_message(self, split_messages: list[list[str]]) -> None:
        tag = split_messages[0][0][1:]
        self._on_frame(tag, ["|".join(parts) for parts in split_messages[1:] if parts != [""]])

    async def _challenge_message(self, split_message: list[str]) -> None:
        """``|pm| Sender| Receiver|/challenge FORMAT|…``: a new challenge."""
        if len(split_message) > 4 and split_message[4].startswith("/challenge"):
            words = split_message[4].split()
            if len(words) > 1:
                self._on_challenge(split_message[2].strip(), words[1].split("@@@")[0])

    async def _update_challenges_message(self, split_message: list[str]) -> None:
        try:
            pending = json.loads(split_message[2]).get("challengesFrom", {}) or {}
        except (ValueError, IndexError, AttributeError):
            return
        self._on_challenges({str(user): str(fmt) for user, fmt in pending.items()})

    # --- the login -------------------------------------------------------------------------------------------
    async def log_in(self, split_message: list[str]) -> None:
        """Answer ``|challstr|``: get an assertion for the password from the login server, then ``/trn``."""
        assertion = ""
        if self._secret is not None:
            challstr = "|".join(split_message[2:])
            try:
                assertion = await asyncio.to_thread(self._assertion, challstr)
            except LoginRefused as exc:
                self._fail(str(exc))
                await self.close()
                return
        await self.send(f"/trn {self.username},0,{assertion}")

    def _assertion(self, challstr: str) -> str:
        import requests

        assert self._secret is not None
        url = self.server_configuration.authentication_url
        try:
            answer = requests.post(url, data={"act": "login", "name": self.username, "pass": self._secret.reveal(),
                                              "challstr": challstr}, timeout=15)
        except requests.RequestException as exc:
            raise LoginRefused(f"cannot reach the login server {url}: {exc.__class__.__name__}") from None
        text = answer.text[1:] if answer.text.startswith("]") else answer.text
        try:
            data: Any = json.loads(text)
        except ValueError:
            raise LoginRefused(f"the login server {url} answered HTTP {answer.status_code}, not a login") from None
        assertion = data.get("assertion") if isinstance(data, dict) else None
        if not isinstance(assertion, str) or assertion.startswith(";;"):
            reason = assertion[2:] if isinstance(assertion, str) else "no assertion"
            raise LoginRefused(self._secret.scrub(f"the login server refused {self.username!r}: {reason}"))
        return assertion


class LoginRefused(Exception):
    """The login server would not vouch for the name (wrong password, unknown name); one line, no password."""


async def wait_any(*events: asyncio.Event | Awaitable[Any], timeout: float | None = None) -> None:
    """Return once any of ``events`` is set (or awaitables done), or after ``timeout`` seconds."""
    waiters = [asyncio.ensure_future(e.wait() if isinstance(e, asyncio.Event) else e) for e in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
