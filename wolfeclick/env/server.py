"""The OpenEnv server: ``ShowdownEnv`` behind openenv-core's FastAPI app (``python -m wolfeclick serve-env``).

Endpoints are openenv-core's: ``POST /reset``, ``POST /step``, ``GET /state``, ``GET /schema``, ``GET /health``,
``GET /metadata`` and ``WS /ws``. A WebSocket connection is a session with one battle at a time; closing it forfeits
the battle. openenv-core builds a fresh environment for every plain HTTP request, so an HTTP battle lives in the
server's episode table under the ``episode_id`` that ``/reset`` returns (or was given), and each ``/step`` names it;
an HTTP battle left idle longer than ``idle_timeout_s`` is forfeited. Malformed actions and impossible requests get
a 4xx whose ``detail`` is one line; the server binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

import wolfeclick
from wolfeclick.battle.runner import DEFAULT_FORMAT
from wolfeclick.battle.teams import TeamSources
from wolfeclick.env.env import DEFAULT_PROMPT, SEED_LIMIT, ShowdownEnv
from wolfeclick.env.episode import EnvError
from wolfeclick.env.service import SimService
from wolfeclick.errors import WolfeClickError, one_line
from wolfeclick.policies.catalogue import ServedCatalogue
from wolfeclick.policies.registry import default_registry

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8001
MAX_SESSIONS = 32
"""Battles in flight at once; each waiting agent holds one of the runner's 64 decision threads."""


MAX_BODY_BYTES = 1_000_000
"""A request body larger than this is refused (413) before it is read further: a step is a few hundred bytes."""
MAX_JSON_DEPTH = 16
"""A request body nested deeper than this is refused (400) before any parser recurses into it: a step is 3 deep."""
CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("wolfeclick_env_client", default=None)
"""The address of the client whose HTTP request is being served (set by ``RawBodyCheck``)."""
MAX_OPTION_CHARS = 200
MAX_TURNS = 1000
"""Showdown's own turn limit: a longer ``max_turns`` means nothing."""
FORMAT_RE = re.compile(r"gen[0-9]{1,2}[a-z0-9]{1,60}")
"""ASCII only: ``gen²randombattle`` is refused here, not half-parsed by a Unicode digit test."""


def check_reset_fields(fields: dict[str, Any]) -> None:
    """The ``/reset`` (and WebSocket reset) fields as sent, before anything coerces them: one line per refusal."""
    for key in ("seed", "max_turns"):
        value = fields.get(key)
        if value is None:
            continue
        if type(value) is not int:
            raise ServerError(f"{key} must be a JSON integer, not {type(value).__name__} {_short(value)}")
    seed = fields.get("seed")
    if seed is not None and not 0 <= seed <= SEED_LIMIT:
        raise ServerError(f"seed must be between 0 and {SEED_LIMIT}, not {seed}")
    max_turns = fields.get("max_turns")
    if max_turns is not None and not 1 <= max_turns <= MAX_TURNS:
        raise ServerError(f"max_turns must be between 1 and {MAX_TURNS}, not {max_turns}")
    for key in ("opponent", "format", "prompt", "agent", "episode_id"):
        value = fields.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ServerError(f"{key} must be a string, not {type(value).__name__}")
        if len(value) > MAX_OPTION_CHARS:
            raise ServerError(f"{key} is {len(value)} characters long; the limit is {MAX_OPTION_CHARS}")
    format_id = fields.get("format")
    if format_id and not FORMAT_RE.fullmatch(format_id):
        raise ServerError(f"format {_short(format_id)} is not a format id (ASCII, e.g. gen9randombattle)")


def json_nesting(value: Any) -> int:
    """How deep a parsed JSON value nests (a scalar is 0, ``[]`` is 1), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


FINISHED_KEPT_S = 60.0
"""A finished HTTP battle stays answerable ("the battle is over") this long after its last step."""


class ShowdownAction(Action):
    """Either the model's raw ``text`` (parsed like generate mode) or an ``index`` into ``legal_actions``."""

    text: Optional[str] = Field(None, max_length=4096, strict=True,
                                description="The model's output, e.g. '{\"action\": \"move\", \"choice\": \"surf\"}'.")
    index: Optional[int] = Field(None, ge=0, le=64, strict=True,
                                 description="An index into the observation's legal_actions (a JSON integer).")

    @model_validator(mode="after")
    def _one_of(self) -> "ShowdownAction":
        if (self.text is None) == (self.index is None):
            raise ValueError("give exactly one of 'text' or 'index'")
        return self


class ShowdownObservation(Observation):
    text: str = Field(description="What the agent reads (the prompt profile's user message), or the final verdict.")
    legal_actions: list[str] = Field(default_factory=list, description="The exact answer strings, in index order.")
    turn: int = 0
    episode_id: Optional[str] = Field(None, description="Pass this to /step over plain HTTP.")
    truncated: bool = False
    info: dict[str, Any] = Field(default_factory=dict, description="Reward components, illegal flag, recording path.")


class ShowdownState(State):
    format: Optional[str] = None
    opponent: Optional[str] = None
    seed: Optional[int] = None
    done: bool = False
    recording_path: Optional[str] = None
    active_episodes: int = 0


class ServerError(EnvError):
    status_code = 400


class EpisodeNotFound(ServerError):
    status_code = 404


class ServerFull(ServerError):
    status_code = 429


class EpisodeTaken(ServerError):
    status_code = 409


class BodyTooLarge(ServerError):
    status_code = 413


@dataclass
class _Entry:
    env: ShowdownEnv | None
    """None once the battle is over: a finished battle keeps only its ``final`` facts, not its simulator state."""
    opponent: str
    steps: int = 0
    done: bool = False
    owner: object | None = None
    """The WebSocket session that started it (None: a plain HTTP battle, addressed by its episode id alone)."""
    client: str | None = None
    """The address of the client that started it (for the per-client cap)."""
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    final: dict[str, Any] = field(default_factory=dict)
    """What ``/state`` says of a finished battle (format, seed, recording path)."""

    def facts(self) -> dict[str, Any]:
        """Format, seed and recording path: read from the env while it plays, from ``final`` after."""
        if self.env is None:
            return self.final
        end = self.env.last_end or self.env.episode_end
        return {"format": self.env.format, "seed": self.env.battle_seed,
                "recording_path": str(end.path) if end is not None and end.path else None}

    def finish(self) -> None:
        """The battle is over: keep its facts and let its env (battle trackers, logs, requests) go."""
        if self.env is not None:
            self.final = self.facts()
            env, self.env = self.env, None
            env.close()


class EpisodeTable:
    """The server's battles by episode id: shared by every session and HTTP request of one app."""

    def __init__(self, *, opponent: str, format: str, prompt: str, max_turns: int, recordings: Path | None | bool,
                 max_episodes: int, idle_timeout_s: float, processes: int | None = None,
                 teams: TeamSources | None = None, opponents: tuple[str, ...] = (),
                 max_per_client: int | None = None) -> None:
        self.defaults: dict[str, Any] = {"opponent": opponent, "format": format, "prompt": prompt,
                                         "max_turns": max_turns}
        self.teams = teams
        self.recordings = recordings
        self.max_episodes = max_episodes
        self.max_http = max(1, max_episodes // 2)
        """Plain HTTP battles have no session to bound them (one client can start any number), so they may hold at
        most half the slots; a WebSocket session holds one battle at a time."""
        self.max_per_client = max_per_client or max(1, max_episodes // 2)
        """Battles one client address may hold at once, WebSocket sessions and HTTP battles together."""
        self.sockets: dict[str, int] = {}
        """Open WebSocket sessions per client address (counted by ``RawBodyCheck``)."""
        self.catalogue = ServedCatalogue.from_registry(default_registry(), (opponent, *opponents),
                                                       where="serve-env --opponent/--opponents")
        """The opponents a client may name: the app's served ones and the operator's (nothing a client sends is
        imported: ``admit`` is string matching)."""
        self.idle_timeout_s = idle_timeout_s
        self.service = SimService(processes)
        self.entries: dict[str, _Entry] = {}
        self.lock = threading.Lock()

    def held_by(self, client: str | None) -> int:
        """Battles and WebSocket sessions ``client`` holds now (a session counts once, battle or not)."""
        if client is None:
            return 0
        with self.lock:
            http = sum(1 for e in self.entries.values() if e.client == client and e.owner is None and not e.done)
            return http + self.sockets.get(client, 0)

    def start(self, episode_id: str | None, seed: int | None, options: dict[str, Any],
              owner: object | None = None, client: str | None = None) -> tuple[str, _Entry, str, dict]:
        """Start a battle. Episode ids are the server's (random, unguessable): ``episode_id`` is only a WebSocket
        session's own battle being reset; a client never names one."""
        self.reap()
        opponent = self.admit_opponent(options.get("opponent"))
        if owner is None and client is not None and self.held_by(client) >= self.max_per_client:
            raise ServerFull(f"this client already holds {self.max_per_client} battles (the limit per client); "
                             f"finish or close one")
        episode_id = episode_id or f"ep-{uuid.uuid4().hex}"
        with self.lock:
            current = self.entries.get(episode_id)
            if current is not None and (current.owner is not owner or (owner is None and not current.done)):
                raise EpisodeTaken(f"episode_id {episode_id!r} is in use by another battle: omit it to get a new one")
            old = self.entries.pop(episode_id, None)
            active = [entry for entry in self.entries.values() if not entry.done]
            if old is None and len(active) >= self.max_episodes:
                raise ServerFull(f"the server already has {self.max_episodes} battles in flight; finish or close one")
            if old is None and owner is None and sum(e.owner is None for e in active) >= self.max_http:
                raise ServerFull(f"plain HTTP battles are limited to {self.max_http} in flight (half the slots, so "
                                 f"that no one client holds them all); finish one, or use a WebSocket session")
        if old is not None and old.env is not None:
            old.env.close()
        try:
            env = ShowdownEnv(opponent, format=str(options.get("format") or self.defaults["format"]),
                              prompt=str(options.get("prompt") or self.defaults["prompt"]),
                              max_turns=int(self.defaults["max_turns"] if options.get("max_turns") is None
                                            else options["max_turns"]),
                              recordings=self.recordings, service=self.service, teams=self.teams,
                              agent_spec=str(options.get("agent") or "env:agent"))
        except (WolfeClickError, ValueError) as exc:
            raise ServerError(one_line(exc)) from None
        entry = _Entry(env, opponent, owner=owner, client=client)
        text, info = env.reset(seed=seed)
        with self.lock:
            self.entries[episode_id] = entry
        return episode_id, entry, text, info

    def admit_opponent(self, spec: Any) -> str:
        """The opponent a reset names, as the server may play it: the default, one of the served catalogue's, or one
        the operator listed; anything else is a one-line 400 before anything is imported or built."""
        if spec is None or spec == "":
            return str(self.defaults["opponent"])
        try:
            return self.catalogue.admit(spec, human=False)
        except WolfeClickError as exc:
            raise ServerError(one_line(exc).replace("$WOLFECLICK_APP_POLICIES", "serve-env --opponents")) from None

    def get(self, episode_id: str, owner: object | None = None) -> _Entry:
        with self.lock:
            entry = self.entries.get(episode_id)
        if entry is not None and entry.owner is not None and entry.owner is not owner:
            entry = None  # another session's battle: not this client's to step (and not said to exist)
        if entry is None:
            raise EpisodeNotFound(f"no battle with episode_id {episode_id!r}: call /reset first (it may have ended "
                                  f"or idled out)")
        entry.last_used = time.monotonic()
        return entry

    def drop(self, episode_id: str) -> None:
        with self.lock:
            entry = self.entries.pop(episode_id, None)
        if entry is not None and entry.env is not None:
            entry.env.close()

    def reap(self) -> None:
        """Forfeit HTTP battles nobody has stepped for ``idle_timeout_s``; forget finished ones after a minute."""
        now = time.monotonic()
        with self.lock:
            stale = [key for key, entry in self.entries.items()
                     if entry.last_used < now - (FINISHED_KEPT_S if entry.done else self.idle_timeout_s)]
        for key in stale:
            self.drop(key)

    def close(self) -> None:
        for key in list(self.entries):
            self.drop(key)
        self.service.close()


class ShowdownServerEnv(Environment[ShowdownAction, ShowdownObservation, ShowdownState]):
    """One OpenEnv environment instance: a WebSocket session's, or a single HTTP request's."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, table: EpisodeTable) -> None:
        super().__init__()
        self.table = table
        try:  # openenv-core 0.3 builds per-request envs on the event loop, session envs in a worker thread
            asyncio.get_running_loop()
            self.per_request = True
        except RuntimeError:
            self.per_request = False
        self.episode_id: str | None = None
        self.owned: set[str] = set()
        self.client = CLIENT.get()
        """The HTTP client's address (a per-request env is built on the request's task; None for a session)."""

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, opponent: Optional[str] = None,
              format: Optional[str] = None, prompt: Optional[str] = None, max_turns: Optional[int] = None,
              **kwargs: Any) -> ShowdownObservation:
        check_reset_fields({"seed": seed, "episode_id": episode_id, "opponent": opponent, "format": format,
                            "prompt": prompt, "max_turns": max_turns})
        if episode_id is not None and (self.per_request or episode_id != self.episode_id):
            raise ServerError("episode ids are made by the server: omit episode_id in /reset and pass the one it "
                              "returns to /step")
        if not self.per_request and self.episode_id is not None and self.episode_id != episode_id:
            self.table.drop(self.episode_id)  # one battle per session: a new reset forfeits the old battle
            self.owned.discard(self.episode_id)
        options = {"opponent": opponent, "format": format, "prompt": prompt, "max_turns": max_turns}
        owner = None if self.per_request else self
        self.episode_id, entry, text, info = self.table.start(episode_id, seed, options, owner, self.client)
        if not self.per_request:
            self.owned.add(self.episode_id)
        return self._observation(self.episode_id, text, 0.0, False, False, info)

    def step(self, action: ShowdownAction, timeout_s: Optional[float] = None, episode_id: Optional[str] = None,
             **kwargs: Any) -> ShowdownObservation:
        key = episode_id or self.episode_id
        if key is None:
            raise ServerError("no battle in this session: call /reset first (over HTTP, pass the episode_id it "
                              "returned)")
        entry = self.table.get(key, None if self.per_request else self)
        with entry.lock:
            if entry.done or entry.env is None:
                raise ServerError(f"the battle {key!r} is over: call /reset to start another")
            choice: str | int = action.text if action.text is not None else int(action.index or 0)
            text, reward, terminated, truncated, info = entry.env.step(choice)
            entry.steps += 1
            entry.done = terminated or truncated
            if entry.done:
                entry.finish()
        self.episode_id = key
        return self._observation(key, text, float(reward), terminated, truncated, info)

    @property
    def state(self) -> ShowdownState:
        entry = self.table.entries.get(self.episode_id) if self.episode_id else None
        active = len(self.table.entries)
        if entry is None:
            return ShowdownState(episode_id=self.episode_id, active_episodes=active)
        return ShowdownState(episode_id=self.episode_id, step_count=entry.steps, opponent=entry.opponent,
                             done=entry.done, active_episodes=active, **entry.facts())

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name="wolfeclick", version=wolfeclick.__version__,
                                   description="Pokémon Showdown battles on the embedded simulator, one per session; "
                                               "every episode is a WolfeClick Arena recording.")

    def close(self) -> None:
        """A WebSocket session ending forfeits its battle; a per-request env leaves the table alone."""
        for key in list(self.owned):
            self.table.drop(key)
        self.owned.clear()

    @staticmethod
    def _observation(episode_id: str, text: str, reward: float, terminated: bool, truncated: bool,
                     info: dict[str, Any]) -> ShowdownObservation:
        return ShowdownObservation(text=text, legal_actions=list(info.get("legal_actions", [])),
                                   turn=int(info.get("turn", 0)), episode_id=episode_id, truncated=truncated,
                                   info={k: v.tolist() if hasattr(v, "tolist") else v  # the mask: JSON, not numpy
                                         for k, v in info.items() if k != "legal_actions"},
                                   reward=reward, done=terminated or truncated)


def _quiet_close(send: Any) -> Any:
    """openenv-core closes every WebSocket when its session ends, even one the client already closed, and the server
    then raises on that close and logs "Exception in ASGI application": closing a closed socket is not an error."""

    async def sender(message: dict) -> None:
        try:
            await send(message)
        except Exception:
            if message.get("type") != "websocket.close":
                raise

    return sender


class RawBodyCheck:
    """ASGI middleware: a POST body over ``MAX_BODY_BYTES`` is refused (413) whatever its declared length, the
    ``/reset`` fields are checked as sent (openenv-core's request model would turn ``"1"`` or ``true`` into 1), and a
    WebSocket the client closed first is closed quietly."""

    def __init__(self, app: Any, table: EpisodeTable | None = None) -> None:
        self.app = app
        self.table = table

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        client = (scope.get("client") or (None,))[0]
        CLIENT.set(client)
        if scope["type"] == "websocket":
            await self._session(scope, receive, send, client)
            return
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
        try:
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                raise BodyTooLarge(f"the request body is {int(declared)} bytes; the limit is {MAX_BODY_BYTES}")
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    await self.app(scope, receive, send)
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise BodyTooLarge(f"the request body is over {MAX_BODY_BYTES} bytes")
                chunks.append(chunk)
                more = message.get("more_body", False)
            body = b"".join(chunks)
            if scope.get("path", "").rstrip("/").endswith("/reset") and body:
                try:
                    fields = orjson.loads(body)
                except orjson.JSONDecodeError:
                    fields = None  # FastAPI answers malformed JSON itself; too deep is refused below
                if isinstance(fields, dict):
                    check_reset_fields(fields)
        except ServerError as exc:
            response = JSONResponse({"detail": str(exc)}, status_code=exc.status_code)
            await response(scope, receive, send)
            return
        replayed = False
        if body and not self._shallow(body):
            response = JSONResponse({"detail": f"the request's JSON is not valid, or nested deeper than "
                                               f"{MAX_JSON_DEPTH} levels"}, status_code=400)
            await response(scope, receive, send)
            return

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


    @staticmethod
    def _shallow(body: bytes) -> bool:
        """Whether ``body`` is no JSON at all (FastAPI answers that itself) or JSON nested at most
        ``MAX_JSON_DEPTH`` deep. orjson refuses past 1024 levels without recursing; the rest is counted."""
        try:
            return json_nesting(orjson.loads(body)) <= MAX_JSON_DEPTH
        except orjson.JSONDecodeError as exc:
            return "depth" not in str(exc).lower() and "recursion" not in str(exc).lower()

    async def _session(self, scope: dict, receive: Any, send: Any, client: str | None) -> None:
        """A WebSocket session: refused before it opens when its client already holds its share of the battles."""
        table = self.table
        if table is None or client is None:
            await self.app(scope, receive, _quiet_close(send))
            return
        if table.held_by(client) >= table.max_per_client:
            await send({"type": "websocket.close", "code": 1008,
                        "reason": f"this client already holds {table.max_per_client} battles (the limit per client)"})
            return
        with table.lock:
            table.sockets[client] = table.sockets.get(client, 0) + 1
        try:
            await self.app(scope, receive, _quiet_close(send))
        finally:
            with table.lock:
                table.sockets[client] -= 1
                if not table.sockets[client]:
                    del table.sockets[client]


def _one_line_detail(detail: Any) -> str:
    """FastAPI's validation details (a list of dicts) as one line: ``action.index: Input should be …``."""
    if isinstance(detail, list) and detail:
        first = detail[0] if isinstance(detail[0], dict) else {"msg": str(detail[0])}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body",))
        message = str(first.get("msg", "invalid request")).replace("Value error, ", "")
        more = f" (and {len(detail) - 1} more)" if len(detail) > 1 else ""
        return (f"{where}: {message}" if where else message) + more
    return one_line(Exception(str(detail))) if detail else "invalid request"


def create_server_app(*, opponent: str = "random", format: str = DEFAULT_FORMAT, prompt: str = DEFAULT_PROMPT,
                      max_turns: int = 300, recordings: Path | None | bool = None, max_sessions: int = MAX_SESSIONS,
                      idle_timeout_s: float = 600.0, processes: int | None = None,
                      teams: TeamSources | None = None, opponents: tuple[str, ...] = (),
                      max_per_client: int | None = None) -> FastAPI:
    """The FastAPI app: openenv-core's routes over one episode table, with one-line 4xx errors. ``teams``: the
    team files every battle deals from (formats that play given teams)."""
    table = EpisodeTable(opponent=opponent, format=format, prompt=prompt, max_turns=max_turns, recordings=recordings,
                         max_episodes=max_sessions, idle_timeout_s=idle_timeout_s, processes=processes, teams=teams,
                         opponents=opponents, max_per_client=max_per_client)
    app = create_fastapi_app(functools.partial(ShowdownServerEnv, table), ShowdownAction, ShowdownObservation,
                             max_concurrent_envs=max_sessions)
    app.title = "WolfeClick Arena OpenEnv server"
    app.state.episodes = table
    app.add_middleware(RawBodyCheck, table=table)

    @app.exception_handler(ServerError)
    async def _server_error(request: Request, exc: ServerError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status_code)

    @app.exception_handler(WolfeClickError)
    async def _user_error(request: Request, exc: WolfeClickError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"detail": _one_line_detail(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _one_line_detail(exc.errors())}, status_code=422)

    async def _close_table() -> None:
        await asyncio.get_running_loop().run_in_executor(None, table.close)

    app.router.on_shutdown.append(_close_table)
    return app


def __getattr__(name: str) -> Any:
    """``wolfeclick.env.server:app`` (what openenv.yaml names) builds the default app when first asked for."""
    if name == "app":
        return create_server_app()
    raise AttributeError(f"module 'wolfeclick.env.server' has no attribute {name!r}")
