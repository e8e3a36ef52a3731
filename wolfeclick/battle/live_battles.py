"""Live battles as an app plays them: choosing the policies, building checkpoints once (shared), a person's seat, and
one battle as an async stream of events. No UI: the app's Live tab and its API (``wolfeclick.ui``) turn these
events into pages, and anything else (a script, a test, another front end) can read them the same way.

Each live battle runs ``runner.stream_battle`` with its own simulator process (the runner's default), so two
sessions' battles never wait on each other; baseline policies decide in microseconds on the event loop, and
checkpoints decide in a worker thread (``policy.blocking``). Checkpoints are built once per (spec, mode) and shared
by every session through one ``PolicyCache`` (the app context holds it); their weights are shared further down by
``wolfeclick.llm``'s model cache. A battle run is saved through one ``RecordingSaver``: its first save picks an
id no other battle holds, every later save (checkpoints, the final one) reuses it.
"""

from __future__ import annotations

import asyncio
import random
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, AsyncGenerator, AsyncIterator, Callable

from wolfeclick.battle.branch import branch_id, stream_branch
from wolfeclick.battle.policy_specs import PolicySpecError, make_policy, needs_gpu
from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS, player_names, recording_id, stream_battle
from wolfeclick.battle.schema import Recording, TurnRecord
from wolfeclick.battle.store import RecordingSaver
from wolfeclick.battle.stream import Stream
from wolfeclick.digits import ascii_int
from wolfeclick.errors import WolfeClickError, whole_on_one_line
from wolfeclick.policies.base import Policy
from wolfeclick.policies.human import HUMAN_SPEC, Answered, HumanPolicy, HumanSeat, Prompt
from wolfeclick.sides import SIDES, Side
from wolfeclick.sim.protocol import door_names

__all__ = [
    "FORMATS", "HUMAN", "MAX_SEED", "LiveError", "LiveBattle", "LiveEvent", "PolicyCache", "builds_once",
    "parse_seed", "check_format", "human_sides", "play_live",
]

HUMAN = HUMAN_SPEC

FORMATS = [DEFAULT_FORMAT] + [f"gen{n}randombattle" for n in (9, 8, 7, 6, 5, 3, 2, 1)]
_FORMAT_RE = re.compile(r"^gen[1-9][a-z0-9]{2,60}$")
MAX_SEED = 2**31 - 1


class LiveError(WolfeClickError, ValueError):
    """A choice the live tab cannot start with; the message is one line fit for the page."""


def parse_seed(text: str | int | float | None) -> int:
    """Blank → a fresh random seed; otherwise a non-negative integer below 2**31."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return random.SystemRandom().randrange(MAX_SEED)
    try:
        value = int(text) if isinstance(text, (int, float)) else ascii_int(str(text).strip(), 19)
        if value is None:
            raise ValueError
    except (ValueError, OverflowError):
        raise LiveError(f"seed must be a whole number (or blank for a random one), not {str(text)[:40]!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise LiveError(f"seed must be between 0 and {MAX_SEED}")
    return value


def check_format(text: str | None) -> str:
    value = (text or DEFAULT_FORMAT).strip().lower()
    if not _FORMAT_RE.match(value):
        raise LiveError(f"format must look like gen4randombattle, not {str(text)[:40]!r}")
    return value


# --------------------------------------------------------------------------------------------------------------
# Checkpoints, shared
# --------------------------------------------------------------------------------------------------------------
def builds_once(spec: str) -> bool:
    """Kinds that need a GPU (checkpoints) are built once and shared; an unknown spec is one line for the page."""
    try:
        return needs_gpu(spec)
    except PolicySpecError as exc:
        raise LiveError(whole_on_one_line(exc)) from None


class PolicyCache:
    """Checkpoint policies by (spec, mode), built once even when many sessions ask at the same time.

    ``admit`` (the app's served catalogue) sees every spec before anything is built: the app's cache builds only
    what its visitors may choose, whichever event asked."""

    def __init__(self, admit: Callable[[str], str] | None = None) -> None:
        self.admit = admit
        self._lock = threading.Lock()
        self._policies: dict[tuple[str, str], Policy] = {}
        self._building: dict[tuple[str, str], threading.Lock] = {}

    def loaded(self, spec: str, mode: str) -> bool:
        return (spec, mode) in self._policies

    def build(self, spec: str, mode: str = "score") -> Policy:
        """Blocking: the policy for ``spec`` (cheap kinds are made fresh; checkpoints come from the cache)."""
        if self.admit is not None:
            try:
                spec = self.admit(spec)
            except WolfeClickError as exc:
                raise LiveError(whole_on_one_line(exc)) from None
        if not builds_once(spec):
            try:
                return make_policy(spec)
            except WolfeClickError as exc:  # a bad spec, or a third-party factory's own one-line refusal
                raise LiveError(whole_on_one_line(exc)) from None
        key = (spec, mode)
        with self._lock:
            if key in self._policies:
                return self._policies[key]
            building = self._building.setdefault(key, threading.Lock())
        with building:
            with self._lock:
                if key in self._policies:
                    return self._policies[key]
            try:
                policy = make_policy(spec, mode=mode)
            except PolicySpecError as exc:
                raise LiveError(whole_on_one_line(exc)) from None
            except ImportError as exc:
                raise LiveError(f"checkpoint support is not available in this install ({whole_on_one_line(exc)})") from None
            except (WolfeClickError, OSError) as exc:  # CheckpointError, offline Hub, unreadable files
                raise LiveError(f"could not load {spec}: {whole_on_one_line(exc)}") from None
            with self._lock:
                self._policies[key] = policy
            return policy


# --------------------------------------------------------------------------------------------------------------
# People playing
# --------------------------------------------------------------------------------------------------------------
def human_sides(specs: dict[str, str]) -> list[Side]:
    """The sides a person plays; one at most (a second person plays from their own session)."""
    sides = [side for side in SIDES if specs.get(side) == HUMAN]
    if len(sides) > 1:
        raise LiveError("you can play one side; choose a policy for the other (a friend plays from their own page)")
    return sides


# --------------------------------------------------------------------------------------------------------------
# One live battle
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LiveBattle:
    """Who plays which battle: known once both policies are built, before the simulator starts."""

    id: str
    format: str
    seed: int
    names: dict[Side, str]
    """The players' names as the simulator has them (narration and logs use these)."""
    policies: dict[Side, str]
    branch: bool = False
    """A take-over: the names are the parent's, whichever policies play on (``ui.presentation.played_by``)."""

    @property
    def humans(self) -> list[Side]:
        """The sides a person plays (a page shows them as "You")."""
        return [side for side in SIDES if self.policies.get(side) == HUMAN]


@dataclass
class LiveEvent:
    """What happened next. ``kind``: loading | turn | prompt | answered | done | error."""

    kind: str
    message: str
    battle: LiveBattle | None = None
    """Set from the ``loading`` event that starts the simulator on (none while the policies are built)."""
    turn: TurnRecord | None = None
    recording: Recording | None = None
    prompt: Prompt | None = None
    """``prompt``: the decision waiting for the person (its buttons); ``answered``: it is gone."""


async def _with_prompts(battle: AsyncIterator[Any], seats: list[HumanSeat],
                        stop: asyncio.Event) -> AsyncGenerator[Any, None]:
    """The battle's items and the seats' prompts, in the order they happen.

    The battle is iterated in a task of its own (it waits on the person while the page must hear of the prompt);
    stopping releases a waiting decision. Leaving (the end, an error, the page going away) closes the seats and
    the battle task, which closes its simulator.
    """
    stream: Stream[Any] = Stream()
    for seat in seats:
        seat.notify = stream.put

    async def pump() -> None:
        async for item in battle:
            stream.put(item)

    async def watch_stop() -> None:
        await stop.wait()
        for seat in seats:
            seat.close("stopped by the user")

    stream.spawn(pump())
    stream.spawn(watch_stop(), feeds=False)
    try:
        async for item in stream:
            yield item
    finally:
        for seat in seats:
            seat.close()
        await stream.aclose()


async def _build(spec: str, mode: str, cache: PolicyCache, stop: asyncio.Event | None) -> AsyncIterator[Any]:
    """Yield loading messages every second while the policy builds; the last item is the policy."""
    if not builds_once(spec):
        yield cache.build(spec, mode)
        return
    if cache.loaded(spec, mode):
        yield await asyncio.to_thread(cache.build, spec, mode)
        return
    started = time.monotonic()
    task = asyncio.ensure_future(asyncio.to_thread(cache.build, spec, mode))
    while not task.done():
        done, _ = await asyncio.wait({task}, timeout=1.0)
        if not done:
            if stop is not None and stop.is_set():
                raise LiveError("stopped while loading (the model keeps loading in the background)")
            yield f"Loading {spec} ({mode} mode)… {time.monotonic() - started:.0f} s"
    yield task.result()


async def play_live(
    p1_spec: str,
    p2_spec: str,
    *,
    cache: PolicyCache,
    saver: RecordingSaver | None = None,
    format_id: str = DEFAULT_FORMAT,
    seed: int = 0,
    mode: str = "score",
    pace: float = 0.0,
    max_turns: int = DEFAULT_MAX_TURNS,
    stop: asyncio.Event | None = None,
    takeover: tuple[Recording, int] | None = None,
    seats: dict[str, HumanSeat] | None = None,
) -> AsyncGenerator[LiveEvent, None]:
    """Play one battle, yielding an event per finished turn record.

    ``takeover`` (a recording and a decision index) plays on from that decision of a recorded battle instead of a
    fresh one (``branch.stream_branch``: its format and seed, its choices replayed up to there, unpaced; saved with
    ``source=branch``). ``seats`` hold the person of each side whose spec is ``human``: their prompts come as
    ``prompt``/``answered`` events, and such a battle is not paced (the person is). With a ``saver`` the recording
    is saved as it goes (every few turns, marked as interrupted until it ends) and finally whole, always under
    the one id the saver chose for this run (``LiveEvent.recording.id``).
    """
    stop = stop or asyncio.Event()
    seats = dict(seats or {})
    policies: list[Policy] = []
    try:
        for side, spec in (("p1", p1_spec), ("p2", p2_spec)):
            if spec == HUMAN:
                if side not in seats:
                    raise LiveError(f"{side} is played by a person, but this run has no seat for them")
                policies.append(HumanPolicy(seats[side]))
                continue
            async for item in _build(spec, mode, cache, stop):
                if isinstance(item, str):
                    yield LiveEvent("loading", item)
                else:
                    policies.append(item)
    except LiveError as exc:
        yield LiveEvent("error", str(exc))
        return
    p1, p2 = policies

    async def checkpoint(partial: Recording) -> None:
        if saver is not None:  # what a crash would leave; the finished recording replaces it (same id)
            await asyncio.to_thread(saver.checkpoint, partial)

    replayed = 0
    names: dict[Side, str]
    stream: AsyncGenerator[Any, None]
    if takeover is None:
        names = player_names(p1.spec, p2.spec)
        battle_id = recording_id(format_id, seed, p1.spec, p2.spec)
        stream = stream_battle(p1, p2, format_id=format_id, seed=seed, max_turns=max_turns, stop=stop,
                               checkpoint=checkpoint)
    else:
        parent, replayed = takeover
        format_id, seed = parent.format, parent.seed or 0
        names = door_names({side: parent.players[side].name for side in SIDES})  # as the simulator has them
        battle_id = branch_id(parent, replayed, {"p1": p1.spec, "p2": p2.spec})
        stream = stream_branch(parent, replayed, {"p1": p1, "p2": p2}, stop=stop, checkpoint=checkpoint)
    battle = LiveBattle(id=battle_id, format=format_id, seed=seed, names=names,
                        policies={"p1": p1.spec, "p2": p2.spec}, branch=takeover is not None)
    yield LiveEvent("loading", "Starting the simulator…", battle)
    playing = [seats[side] for side, spec in (("p1", p1.spec), ("p2", p2.spec)) if spec == HUMAN]
    if playing:
        stream = _with_prompts(stream, playing, stop)
        pace = 0.0

    recording: Recording | None = None
    try:
        async for item in stream:
            if isinstance(item, Recording):
                recording = item
                break
            if isinstance(item, Prompt):
                yield LiveEvent("prompt", f"Turn {item.turn}: your move", battle, prompt=item)
                continue
            if isinstance(item, Answered):
                yield LiveEvent("answered", item.note, battle)
                continue
            yield LiveEvent("turn", f"Turn {item.turn}", battle, turn=item)
            if pace > 0 and not stop.is_set() and item.index >= replayed:
                try:
                    await asyncio.wait_for(stop.wait(), timeout=pace)
                except asyncio.TimeoutError:
                    pass
    except WolfeClickError as exc:  # a format the simulator does not know, a dead simulator…
        hint = "" if format_id in FORMATS else f" (is {format_id} a random-battle format this Showdown knows?)"
        yield LiveEvent("error", f"the battle could not go on: {whole_on_one_line(exc)}{hint}", battle)
        return
    finally:
        if playing:  # the seats and the battle task end here, whether the battle ended or the page left
            await stream.aclose()
    if recording is None:
        yield LiveEvent("error", "the battle ended without a recording", battle)
        return
    message = ""
    if saver is not None:
        try:
            await asyncio.to_thread(saver.save, recording)
            recording = recording.model_copy(update={"id": saver.id})
        except (OSError, WolfeClickError) as exc:
            message = f"the recording could not be saved: {whole_on_one_line(exc)}"
    yield LiveEvent("done", message, battle, recording=recording)
