"""An Arena policy playing battles on a real Showdown server, each battle recorded like an embedded one.

A battle room's frames feed the embedded runner's own ``BattleRun`` (``absorb_views``): the same trackers, state
text, legal actions, rewards, snapshots and turn records, and the same ``decide_and_send`` per decision point, whose
``send`` here posts ``/choose`` to the room and waits for the server's answer (a new request, a refusal, the end).
Only our side decides in our recording; the other side is a remote user (``showdown:<userid>``), seen as a player
sees an opponent.

What differs from an embedded battle, and the recording says so (``source`` kind ``ladder``, the server and room
in ``detail``): the server picks the seed and keeps the input log, so ``seed`` is null and ``inputlog`` empty — the
battle replays in the viewer but cannot be re-simulated. A battle whose connection is lost, or whose server stays
silent for ``timeout`` seconds, ends ``aborted`` with every turn played so far and one line saying why.

Battles are played one after another (challenges and searches are one at a time on Showdown).
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from poke_env.data import to_id_str

from wolfeclick.battle.runner import (
    DEFAULT_MAX_TURNS,
    MAX_REJECTIONS,
    BattleRun,
    PolicyFailure,
    decide_and_send,
    slug,
)
from wolfeclick.battle.schema import MAX_SEED, EndReason, Recording, SourceInfo, TeamInfo
from wolfeclick.errors import InputError, WolfeClickError
from wolfeclick.game.reward import outcome_reward
from wolfeclick.interop.public import ROOM_ONLY
from wolfeclick.ladder.client import DEFAULT_LOGIN_SERVER, ArenaClient, wait_any
from wolfeclick.ladder.credentials import Secret
from wolfeclick.policies.base import Decision, Observation, Policy
from wolfeclick.sides import Side, is_side
from wolfeclick.sides import other as opponent
from wolfeclick.sim.protocol import SIDES, derive_int, is_timestamp

Mode = Literal["accept", "challenge", "search"]
NOT_RESIMULATABLE = ("the server chose the seed and keeps the input log: replayable in the viewer, "
                     "not re-simulatable")
_STOP = "stop"
RETRY_POPUPS = ("not found", "offline", "not accepting", "already", "busy")
"""Popups that mean the challenged user is not there or not free yet: the challenge is sent again."""
_WS_URL = re.compile(r"^wss?://[^\s/]+(/\S*)?$")


class LadderError(WolfeClickError):
    """The server could not be reached, refused the login, or never offered a battle; one line."""

    exit_code = 1


class _Lost(Exception):
    """The battle cannot go on (connection lost, server silent, user stop); ``str`` is the recording's error."""


@dataclass(frozen=True)
class LadderOptions:
    """How to play: where, as whom, which battles, and how long to wait."""

    server: str
    format: str
    n: int = 1
    mode: Mode = "accept"
    opponent: str | None = None
    """challenge: the user to challenge; accept: accept only this user's challenges (None: anyone's)."""
    username: str | None = None
    """None: a fresh ``Arena…`` name (guests log in without a password only on a ``--no-security`` server)."""
    password: Secret | None = None
    login_server: str = DEFAULT_LOGIN_SERVER
    team: TeamInfo | None = None
    timeout: float = 300.0
    """Seconds a battle may go without a message from the server before it is ended ``aborted``."""
    wait: float = 120.0
    """Seconds to wait for the login, a challenge, an opponent or a match before giving up."""
    max_turns: int = DEFAULT_MAX_TURNS
    showdown_version: str = "unknown (a server)"

    def __post_init__(self) -> None:
        if not _WS_URL.match(self.server):
            raise InputError(f"--server must be a websocket URL like ws://HOST:PORT/showdown/websocket, not "
                              f"{self.server!r}")
        if self.mode == "challenge" and not self.opponent:
            raise InputError("challenging needs the opponent's user name")
        if self.password is not None and not _private_login(self.login_server):
            raise InputError(f"--login-server {self.login_server[:80]!r} is not https: the password would cross the "
                             "network in clear (plain http is allowed only on this machine: localhost, 127.0.0.1)")


def _private_login(url: str) -> bool:
    """Whether a password may be sent to ``url``: over https, or plain http to this machine only."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and (parts.hostname or "") in ("localhost", "127.0.0.1", "::1")


def guest_name() -> str:
    return "Arena" + secrets.token_hex(5)


@dataclass
class RemotePlayer:
    """The other side: a user on the server whose decisions we never see (never asked to decide)."""

    spec: str
    server: str
    blocking: bool = False
    room: str | None = None
    """The battle room it played in (kept in its metadata: a tournament's recording is marked with the tournament's
    source, not the server's)."""

    def metadata(self) -> dict[str, Any]:
        return {"kind": "remote", "server": self.server, **({"room": self.room} if self.room else {}),
                "note": "a user on the server: only what a player sees of an opponent is recorded"}

    def decide(self, observation: Observation) -> Decision:  # pragma: no cover - never called
        raise RuntimeError("a remote player decides on the server")


def ladder_id(tag: str, username: str) -> str:
    """``ladder-<room>-<our user>``: both sides of one battle can save into one folder."""
    return f"ladder-{slug(tag.removeprefix('battle-'), 60)}-{slug(username, 24)}"


def to_choice(line: str) -> str:
    """``>p1 move 2`` (what ``decide_and_send`` sends the simulator) → ``move 2`` (what ``/choose`` takes)."""
    return line.split(" ", 1)[1] if " " in line else "default"


class ServerBattle:
    """One battle room: its frames in, our choices out, a ``Recording`` at the end."""

    def __init__(self, tag: str, policy: Policy, options: LadderOptions, username: str,
                 send: Callable[[str, str], Any]) -> None:
        self.tag = tag
        self.policy = policy
        self.options = options
        self.username = username
        self._send = send
        self.inbox: asyncio.Queue[list[str] | str | None] = asyncio.Queue()
        self.run: BattleRun | None = None
        self.side: Side | None = None
        self.ended = False
        self.answered = False
        self.rqid: Any = None
        self.sends = 0
        """Choices sent at the current decision point (refused ones included)."""
        self.lost_reason = "lost the connection to the server"
        self._early: list[list[str]] = []
        self._names: dict[Side, str] = {}

    # --- frames in ---------------------------------------------------------------------------------------------
    def absorb(self, frame: list[str]) -> None:
        if self.run is None:
            self._early.append(frame)
            for line in frame:
                parts = line.split("|")
                if len(parts) > 3 and parts[1] == "player" and is_side(parts[2]) and parts[3]:
                    self._names[parts[2]] = parts[3]
            if all(self._names.get(side) for side in SIDES):
                self._begin()
            return
        run, side = self.run, self.side
        assert side is not None
        battle: list[str] = []

        def flush() -> None:
            if battle:
                run.absorb_views({"p1": battle[:], "p2": battle[:], "spectator": battle[:]})
                battle.clear()

        for line in frame:
            if not line.startswith("|") or is_timestamp(line):
                continue
            tag = line.split("|", 2)[1]
            if tag == "request":
                flush()
                payload = line[len("|request|"):]
                if payload:
                    request = json.loads(payload)
                    self.rqid = request.get("rqid")
                    run.trackers[side].feed_request(request)
                    run.pending_requests[side] = request
                    self.answered = True
            elif tag == "error":
                flush()
                run.errors[side].append(line[len("|error|"):])
                if "[Unavailable choice]" not in line:  # an unavailable choice is followed by a fresh request
                    self.answered = True
            elif tag in ROOM_ONLY:
                continue
            else:
                battle.append(line)
                if tag in ("win", "tie"):
                    self.ended = True
        flush()
        if self.ended:
            run.ended = True

    def _begin(self) -> None:
        mine = [s for s in SIDES if to_id_str(self._names[s]) == to_id_str(self.username)]
        if not mine:
            raise _Lost(f"neither player of {self.tag} is {self.username!r}")
        self.side = mine[0]
        other = opponent(self.side)
        remote = RemotePlayer(f"showdown:{to_id_str(self._names[other])}", self.options.server, room=self.tag)
        seats = {self.side: self.policy, other: remote}
        self.run = BattleRun(seats["p1"], seats["p2"], format_id=self.options.format,
                             seed=derive_int(0, f"ladder:{self.options.server}:{self.tag}:{self.username}") % MAX_SEED,
                             max_turns=self.options.max_turns, battle_id=ladder_id(self.tag, self.username),
                             names=dict(self._names))
        early, self._early = self._early, []
        for frame in early:
            self.absorb(frame)

    async def _pump(self, ready: Callable[[], bool]) -> None:
        """Absorb frames until ``ready()``; raise ``_Lost`` on a lost connection, a stop or a silent server."""
        while not ready():
            try:
                frame = await asyncio.wait_for(self.inbox.get(), self.options.timeout)
            except asyncio.TimeoutError:
                raise _Lost(f"no message from the server for {self.options.timeout:g} s") from None
            if frame is None:
                raise _Lost(self.lost_reason)
            if frame == _STOP:
                raise _Lost("stopped by the user")
            assert isinstance(frame, list)
            self.absorb(frame)

    # --- choices out -----------------------------------------------------------------------------------------
    async def _choose(self, lines: list[str]) -> None:
        """``decide_and_send``'s channel: ``/choose`` our line, then wait for what it caused."""
        self.sends += 1
        if self.sends > MAX_REJECTIONS + 2:  # even ``default`` was refused: the server and we disagree for good
            assert self.run is not None and self.side is not None
            last = (self.run.errors[self.side] or ["no reason given"])[-1]
            raise _Lost(f"the server refused {self.sends - 1} choices in a row: {last}")
        self.answered = False
        for line in lines:
            await self._send(f"/choose {to_choice(line)}|{self.rqid}", self.tag)
        await self._pump(lambda: self.answered or self.ended)

    async def play(self) -> Recording | None:
        """Play the battle to its end; None only when it ended before both players were known."""
        reason: EndReason = "win"
        error: str | None = None
        try:
            await self._pump(lambda: self.run is not None or self.ended)
            run: BattleRun | None = self.run
            assert run is not None
            playing: BattleRun = run  # for the closures below
            while not run.ended:
                if run.turn > self.options.max_turns:
                    reason, error = "turn_limit", f"past turn {self.options.max_turns}: forfeited on the server"
                    await self._send("/forfeit", self.tag)
                    break
                await self._pump(lambda: playing.ended or bool(playing.deciding_sides()))
                if run.ended:
                    break
                deciding = run.deciding_sides()
                record = run.open_point(deciding)
                run.flush()
                self.sends = 0
                await decide_and_send(run, record, deciding, self._choose)
            if run.ended:
                reason = "win" if run.winner else "tie"
        except PolicyFailure as exc:  # our policy forfeits, on the server too; the turns are kept
            reason, error = "forfeit", str(exc)
            await self._send("/forfeit", self.tag)
            try:
                await asyncio.wait_for(self._pump(lambda: self.ended), 10)
            except (_Lost, asyncio.TimeoutError):
                pass
        except _Lost as exc:
            reason, error = "aborted", str(exc)
            await self._send("/forfeit", self.tag)  # where the server still listens, the opponent is not left waiting
        await self._send(f"/leave {self.tag}", "")
        run = self.run
        if run is None:
            return None
        decided = reason in ("win", "forfeit") and run.winner is not None
        for side in SIDES:
            run.settle_reward(side, outcome_reward(run.winner, side) if decided else 0.0)
        run.flush()
        recording = run.recording(reason, error, run.winner if decided else None,
                                  {"showdown": self.options.showdown_version})
        source = SourceInfo(kind="ladder", detail=f"{self.options.server} {self.tag}; {NOT_RESIMULATABLE}")
        update: dict[str, Any] = {"seed": None, "inputlog": [], "source": source}
        if self.options.team is not None and self.side is not None:  # ``teams`` needs both; we know only ours
            ours = recording.players[self.side]  # type: ignore[index]
            metadata = {**ours.metadata, "team": self.options.team.model_dump()}
            update["players"] = {**recording.players, self.side: ours.model_copy(update={"metadata": metadata})}
        return recording.model_copy(update=update)


@dataclass
class LadderSummary:
    """What a session did: each battle's recording (in order) and, if it stopped early, why."""

    recordings: list[Recording] = field(default_factory=list)
    stopped: str | None = None


class LadderSession:
    """One login on a server playing ``options.n`` battles in turn, by accepting, challenging or searching."""

    def __init__(self, policy: Policy, options: LadderOptions,
                 on_recording: Callable[[Recording], None] | None = None, stop: asyncio.Event | None = None) -> None:
        self.policy = policy
        self.options = options
        self.username = options.username or guest_name()
        self.on_recording = on_recording
        self.stop = stop
        self.client: ArenaClient | None = None
        self.battles: dict[str, ServerBattle] = {}
        self.started: asyncio.Queue[ServerBattle] = asyncio.Queue()
        self.challenges: dict[str, str] = {}
        self.challenged = asyncio.Event()

    # --- routing -------------------------------------------------------------------------------------------------
    def _frame(self, tag: str, lines: list[str]) -> None:
        battle = self.battles.get(tag)
        if battle is None:
            if "|init|battle" not in lines:
                return  # a room we already left
            battle = self.battles[tag] = ServerBattle(tag, self.policy, self.options, self.username, self._send)
            self.started.put_nowait(battle)
        battle.inbox.put_nowait(lines)

    def _challenge(self, user: str, format_id: str) -> None:
        self.challenges[to_id_str(user)] = format_id
        self.challenged.set()

    def _challenges(self, pending: dict[str, str]) -> None:
        self.challenges = {to_id_str(user): fmt for user, fmt in pending.items()}
        if self.challenges:
            self.challenged.set()

    async def _send(self, message: str, room: str) -> None:
        assert self.client is not None
        await self.client.send(message, room)

    # --- the session -------------------------------------------------------------------------------------------
    async def run(self) -> LadderSummary:
        summary = LadderSummary()
        self.client = client = ArenaClient(self.username, self.options.password, self.options.server,
                                           self.options.login_server, on_frame=self._frame,
                                           on_challenge=self._challenge, on_challenges=self._challenges)
        listening = asyncio.create_task(client.listen())
        watcher = asyncio.create_task(self._watch(client))
        try:
            popup = asyncio.ensure_future(client.popups.get())
            await wait_any(client.logged_in, client.closed, popup, timeout=self.options.wait)
            if not client.logged_in.is_set():
                said = f"the server said: {popup.result()}" if popup.done() and not popup.cancelled() else None
                raise LadderError(client.failure or said or f"the server did not confirm the login of "
                                                            f"{self.username!r} within {self.options.wait:g} s")
            for _ in range(self.options.n):
                battle = await self._next_battle(client)
                if battle is None:
                    summary.stopped = "stopped by the user"
                    break
                recording = await battle.play()
                self.battles.pop(battle.tag, None)
                if recording is not None:
                    summary.recordings.append(recording)
                    if self.on_recording is not None:
                        self.on_recording(recording)
                if client.closed.is_set():
                    summary.stopped = client.failure or "the connection closed"
                    break
                if self._stopped():
                    summary.stopped = "stopped by the user"
                    break
        finally:
            watcher.cancel()
            await client.close()
            try:
                await asyncio.wait_for(listening, 10)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                listening.cancel()
        return summary

    def _stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    async def _watch(self, client: ArenaClient) -> None:
        """Tell the battles in flight when the connection closes or the user stops."""
        events: list[asyncio.Event] = [client.closed] + ([self.stop] if self.stop is not None else [])
        await wait_any(*events)
        for battle in list(self.battles.values()):
            if client.closed.is_set():
                battle.lost_reason = client.failure or "the connection closed"
                battle.inbox.put_nowait(None)
            else:
                battle.inbox.put_nowait(_STOP)

    async def _next_battle(self, client: ArenaClient) -> ServerBattle | None:
        """Ask for the next battle as the mode says and wait until the server starts it (None: the user stopped)."""
        options = self.options
        deadline = asyncio.get_running_loop().time() + options.wait
        team = options.team.packed if options.team else None
        asked = False
        absent = False  # the challenged user was not on the server at the last try
        while True:
            if self._stopped():
                return None
            if client.closed.is_set():
                raise LadderError(client.failure or "the connection closed")
            if not self.started.empty():
                return self.started.get_nowait()
            if options.mode == "accept":
                for user, fmt in list(self.challenges.items()):
                    if fmt == options.format and (options.opponent is None
                                                  or user == to_id_str(options.opponent)):
                        self.challenges.pop(user, None)
                        await client.accept_challenge(user, team)
                        break
                    if fmt != options.format:
                        self.challenges.pop(user, None)
                        await client.send(f"/reject {user}")
                self.challenged.clear()
            elif options.mode == "challenge" and to_id_str(options.opponent or "") in client.refused:
                raise LadderError(f"{options.opponent} refused the challenge")
            elif not asked:
                if options.mode == "challenge":
                    await client.challenge(to_id_str(options.opponent or ""), options.format, team)
                else:
                    await client.search_ladder_game(options.format, team)
                asked = True
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                what = {"accept": "no challenge in " + options.format, "challenge": f"{options.opponent} did not "
                        "accept the challenge", "search": "no opponent found"}[options.mode]
                if absent:
                    what = f"no user {options.opponent} is connected to {options.server}"
                if options.mode == "challenge":
                    await client.send(f"/cancelchallenge {to_id_str(options.opponent or '')}")
                elif options.mode == "search":
                    await client.send(f"/cancelsearch {options.format}")
                raise LadderError(f"{what} within {options.wait:g} s")
            popup = asyncio.ensure_future(client.popups.get())
            started = asyncio.ensure_future(self._started_soon())
            waits: list[Any] = [popup, started, client.closed, self.challenged, client.refusal]
            if self.stop is not None:
                waits.append(self.stop)
            await wait_any(*waits, timeout=min(remaining, 1.0))
            if popup.done() and not popup.cancelled():
                message = popup.result()
                if options.mode == "challenge" and any(word in message.lower() for word in RETRY_POPUPS):
                    asked = False  # the user is not online (or not free) yet: challenge again in a moment
                    absent = "not found" in message.lower()
                    await asyncio.sleep(0.5)
                elif options.mode != "accept":
                    raise LadderError(f"the server said: {message}")

    async def _started_soon(self) -> None:
        battle = await self.started.get()
        self.started.put_nowait(battle)
