"""A person as a policy: each decision waits for an answer handed in from outside (the Live tab's buttons).

A ``HumanSeat`` is one person's seat in one battle, made on the battle's event loop and owned by whoever runs the
battle (the app keeps one per browser session): it publishes a ``Prompt`` (the legal actions as buttons, what the
side saw since its last decision) through ``notify``, takes the answer (``choose``/``answer``, which refuse an
illegal or stale one in one line), and, with a timer, plays the seeded fallback every other policy uses when the
time runs out — flagged illegal with the reason and ``policy_info.timed_out``, so the recording says so. The
``HumanPolicy`` is ``blocking``: the runner asks it from a worker thread, which waits on the seat's future on the
loop, so the simulator and every other battle go on meanwhile. Nothing is module-level: two seats never share state.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable

from wolfeclick.errors import WolfeClickError
from wolfeclick.game.state import public_hp
from wolfeclick.policies.base import Decision, Observation, fallback_decision
from wolfeclick.policies.choices import ChoiceButton, choice_buttons

__all__ = ["HUMAN_SPEC", "HumanAnswerError", "HumanSeat", "HumanPolicy", "Prompt", "Answered", "check_timer",
           "recent_lines", "MAX_TIMER_S"]

HUMAN_SPEC = "human"
MAX_TIMER_S = 3600.0


class HumanAnswerError(WolfeClickError, ValueError):
    """An answer the seat cannot take (not legal now, or for a decision already gone); one line for the page."""


def check_timer(value: float | int | str | None) -> float | None:
    """Seconds per decision: blank/None → no timer; otherwise a number in (0, 3600]."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise HumanAnswerError(
            f"the timer must be a number of seconds (or blank for none), not {str(value)[:40]!r}") from None
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_TIMER_S:
        raise HumanAnswerError(f"the timer must be between 0 and {MAX_TIMER_S:.0f} seconds (blank for none)")
    return seconds


def recent_lines(lines: list[str], seen: int) -> list[str]:
    """The protocol lines since the last decision (``lines[seen:]``), but no more than the last turn's: a seat
    that takes over mid-battle is not shown the whole battle again."""
    new = list(lines[seen:])
    marks = [i for i, line in enumerate(new) if line.startswith("|turn|")]
    return new[marks[-2]:] if len(marks) >= 2 else new


@dataclass(frozen=True)
class Prompt:
    """A decision waiting for the person: ``key`` names it (an answer for another key is stale)."""

    key: str
    side: str
    turn: int
    buttons: tuple[ChoiceButton, ...]
    lines: tuple[str, ...]
    """The side's own protocol lines since its previous decision (what just happened)."""
    state: str
    you: str
    foe: str
    timer_s: float | None
    rejected: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answered:
    """The prompt ``key`` is gone: answered, timed out (the fallback played) or closed."""

    key: str
    command: str | None
    timed_out: bool = False
    note: str = ""


SeatEvent = Prompt | Answered


def _mon_text(mon: Any) -> str:
    if mon is None:
        return "—"
    hp = getattr(mon, "current_hp_fraction", None)
    status = getattr(mon, "status", None)
    text = _species_name(mon)
    if hp is not None:
        text += f" {public_hp(100 * hp)}%"  # as the narration beside it writes HP (Showdown's spectator percent)
    if status is not None:
        text += f" ({status.name})"
    return text


def _species_name(mon: Any) -> str:
    """The display name (``Dodrio``) of poke-env's species id (``dodrio``)."""
    from poke_env.data import GenData

    try:
        return str(GenData.from_gen(9).pokedex[mon.species]["name"])
    except (AttributeError, KeyError, TypeError):  # a display name only
        return str(getattr(mon, "species", "?"))


def _movedex(battle: Any) -> Any:
    from poke_env.data import GenData

    return GenData.from_gen(battle.gen).moves


class HumanSeat:
    """One person's seat in one battle. Make it on the battle's event loop; ``choose``/``answer`` there too.

    ``notify`` receives every ``Prompt`` and ``Answered`` (on the loop), in order; the page turns them into buttons.
    ``idle_s``: a person who answers nothing for that long (timer or not) has left; the seat closes, so a public
    app's battle slot is not held by an abandoned tab (``None``: wait for ever, the CLI's and Python's default).
    """

    def __init__(self, side: str = "p1", *, timer_s: float | int | str | None = None,
                 notify: Callable[[SeatEvent], None] | None = None, idle_s: float | None = None) -> None:
        self.side = side
        self.timer_s = check_timer(timer_s)
        self.idle_s = idle_s
        self.notify: Callable[[SeatEvent], None] = notify or (lambda event: None)
        self.loop = asyncio.get_running_loop()
        self._pending: tuple[Prompt, asyncio.Future[str]] | None = None
        self._numbers = itertools.count(1)
        self._seen = 0
        self._closed: str | None = None
        self._last_answer: float | None = None
        """When the person last answered (or was first asked): the idle bound counts from there."""

    # --- the battle's side (a worker thread) ----------------------------------------------------------------
    def ask(self, observation: Observation) -> Decision:
        """Blocking: wait for the person's answer (or the timer, or ``close``). Call it from a worker thread."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            raise RuntimeError("HumanSeat.ask blocks: call it from a worker thread (HumanPolicy is blocking)")
        if not observation.legal_actions:
            return Decision(action=None, command="default", info={"note": "no legal action offered; default sent"})
        prompt = self._prompt(observation)
        return asyncio.run_coroutine_threadsafe(self._wait(prompt, observation), self.loop).result()

    def _prompt(self, observation: Observation) -> Prompt:
        battle = observation.battle
        lines = ["|".join(parts) for parts in getattr(battle, "_replay_data", [])]
        recent = recent_lines(lines, self._seen)
        self._seen = len(lines)
        buttons = choice_buttons(observation.legal_actions, observation.request, _movedex(battle))
        return Prompt(key=f"{self.side}-{next(self._numbers)}", side=observation.side, turn=observation.turn,
                      buttons=tuple(buttons), lines=tuple(recent), state=observation.state,
                      you=_mon_text(getattr(battle, "active_pokemon", None)),
                      foe=_mon_text(getattr(battle, "opponent_active_pokemon", None)),
                      timer_s=self.timer_s, rejected=tuple(observation.rejected))

    async def _wait(self, prompt: Prompt, observation: Observation) -> Decision:
        if self._closed is not None:
            return self._closed_decision(self._closed)
        future: asyncio.Future[str] = self.loop.create_future()
        self._pending = (prompt, future)
        self.notify(prompt)
        if self._last_answer is None:
            self._last_answer = self.loop.time()
        idle_left = None if self.idle_s is None else max(0.0, self.idle_s - (self.loop.time() - self._last_answer))
        waits = [w for w in (self.timer_s, idle_left) if w is not None]
        timeout = min(waits) if waits else None
        done, _ = await asyncio.wait({future}, timeout=timeout)
        if not done and timeout == idle_left and self.idle_s is not None:  # nobody is there any more: close() releases
            self.close(f"no answer for {self.idle_s:g} s: the seat was closed")  # this prompt, still pending
            return self._closed_decision(self._closed or "the seat was closed")
        if self._pending is not None and self._pending[1] is future:
            self._pending = None
        if not done:  # the timer ran out: the seeded fallback, flagged
            future.cancel()
            decision = fallback_decision(observation, f"the {self.timer_s:g} s timer ran out: seeded fallback played")
            decision.info = {"timed_out": True, "timer_s": self.timer_s}
            self.notify(Answered(prompt.key, decision.choice(), timed_out=True,
                                 note=f"⏱ time ran out: {decision.choice()} was played for you"))
            return decision
        if future.cancelled():
            return self._closed_decision(self._closed or "the battle ended")
        command = future.result()
        self._last_answer = self.loop.time()
        action = next(a for a in observation.legal_actions if a.command() == command)
        info = {"timer_s": self.timer_s} if self.timer_s is not None else {}
        self.notify(Answered(prompt.key, command))
        return Decision(action=action, info=info)

    @staticmethod
    def _closed_decision(reason: str) -> Decision:
        return Decision(action=None, command="default", info={"note": f"{reason} while waiting for the person; "
                                                                      "default sent"})

    # --- the page's side (the event loop) --------------------------------------------------------------------
    @property
    def pending(self) -> Prompt | None:
        return self._pending[0] if self._pending is not None else None

    def answer(self, key: str | None, command: str) -> None:
        """Hand in the choice ``command`` (e.g. ``move 2``) for the prompt ``key`` (None: whatever is waiting)."""
        if self._pending is None:
            raise HumanAnswerError("no decision is waiting for you right now")
        prompt, future = self._pending
        if key is not None and key != prompt.key:
            raise HumanAnswerError("that choice was for an earlier decision; choose again from the buttons shown")
        legal = [b.command for b in prompt.buttons]
        if command not in legal:
            raise HumanAnswerError(f"{str(command)[:40]!r} is not a legal choice now; choose one of "
                                   f"{', '.join(legal)}")
        self._pending = None
        future.set_result(command)

    def choose(self, key: str | None, index: int) -> str:
        """Hand in the ``index``-th button of the prompt ``key``; returns the command sent."""
        prompt = self.pending
        if prompt is None:
            raise HumanAnswerError("no decision is waiting for you right now")
        if key is not None and key != prompt.key:
            raise HumanAnswerError("that choice was for an earlier decision; choose again from the buttons shown")
        if not 0 <= index < len(prompt.buttons):
            raise HumanAnswerError(f"there is no choice {index + 1} now (there are {len(prompt.buttons)})")
        command = prompt.buttons[index].command
        self.answer(key, command)
        return command

    def close(self, reason: str = "the battle ended") -> None:
        """Release a waiting decision (it sends ``default``) and refuse every later one: the battle is over."""
        if self._closed is None:
            self._closed = reason
        if self._pending is not None:
            prompt, future = self._pending
            self._pending = None
            if not future.done():
                future.cancel()
            self.notify(Answered(prompt.key, None, note=reason))


class HumanPolicy:
    """The policy spec ``human``: the seat's person decides. Recorded like any other policy."""

    blocking = True
    interactive = True
    """Asks a person: a branch never asks it to re-decide replayed decisions."""
    spec = HUMAN_SPEC

    def __init__(self, seat: HumanSeat) -> None:
        self.seat = seat

    def metadata(self) -> dict[str, Any]:
        return {"kind": "human", "description": "A person choosing among the legal actions with buttons.",
                "timer_s": self.seat.timer_s}

    def decide(self, observation: Observation) -> Decision:
        return self.seat.ask(observation)
