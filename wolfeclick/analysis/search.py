"""``search``: a fair player that decides by rollouts in sampled worlds (issue 61).

At each decision the policy reads only its own side's ``Observation`` (its poke-env ``Battle`` and its own request).
It samples the hidden part of the battle from the format's set data (``wolfeclick.game.sets``: the opponent's
unseen Pokémon and every unrevealed move, item, ability and tera type, consistent with what was revealed), builds
each sampled world in a simulator of its own (the bridge's ``world`` op, from ``wolfeclick.game.world``) and values
each legal option by rollouts there (the bridge's ``playout`` with ``sim:heuristic`` on both sides, the option
forced first), raced as the analysis races options (``wolfeclick.analysis.racing``): rollout *n* of every option
plays in world *n mod W* with the same luck. It plays the option of the highest mean. Every draw derives from the
observation's seeded generator, so the same battle seed gives the same decisions at any concurrency.

``docs/search.md`` says what it sees, how it decides and what each ``level`` costs.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import os
import random
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Coroutine, TypeVar

from wolfeclick.analysis.racing import Tally, leader, next_round, still_racing
from wolfeclick.errors import InputError
from wolfeclick.game.actions import LegalAction
from wolfeclick.game.sets import sample_team
from wolfeclick.game.world import revealed_foes, team_size, world_request
from wolfeclick.policies.base import Decision, Observation
from wolfeclick.sides import Side, is_side, other
from wolfeclick.sim.process import SimProcess, SimulatorError, cpu_seconds
from wolfeclick.sim.protocol import derive_int, derive_seed, is_random_format, reseed_line
from wolfeclick.sim.setdata import load_book

__all__ = ["LEVELS", "Budget", "SearchPolicy", "budget_for", "make_search"]

ROLLOUT_POLICY = "heuristic"
"""The ``policies.js`` player that plays both sides of a rollout unless a level names others."""
ROLLOUT_TURNS = 300
"""A rollout that reaches this many turns past the decision is a tie (as a battle at the runner's turn limit)."""
T = TypeVar("T")


@dataclass(frozen=True)
class Budget:
    """What one decision may spend: ``worlds`` sampled worlds; up to ``rollouts`` rollouts per option, played in
    rounds of one per world (racing stops an option early once it is clearly worse); each rollout cut after
    ``horizon`` turns (0: played to the end) and then valued by ``value``: ``"hp"``, the share of team HP each side
    has left, or ``"standing"``, which also counts each Pokémon still up, status, the active one's boosts and
    hazards (the bridge's ``standing``). ``tera``: also weigh each move played terastallizing, where the side may.
    ``policy`` / ``foe_policy``: the ``policies.js`` player of the side's own / the opponent's turns in a rollout
    (``simple`` models poke-env's SimpleHeuristicsPlayer: it switches out, sets up, lays hazards, terastallizes)."""

    worlds: int
    rollouts: int
    horizon: int
    value: str = "hp"
    tera: bool = False
    policy: str = ROLLOUT_POLICY
    foe_policy: str = ROLLOUT_POLICY

    @property
    def batch(self) -> int:
        return max(1, min(self.worlds, self.rollouts))


LEVELS: dict[int, Budget] = {
    1: Budget(worlds=1, rollouts=2, horizon=1),
    2: Budget(worlds=1, rollouts=2, horizon=2, value="standing", tera=True, policy="simple", foe_policy="simple"),
    3: Budget(worlds=8, rollouts=24, horizon=4, value="standing", tera=True, policy="simple", foe_policy="simple"),
}
"""Levels that differ in kind, not only in budget (docs/search.md "More budget is not more strength"): level 1 values
one short rollout by HP with the ``heuristic`` player; level 2 by standing, with ``simple`` rollouts and
terastallizing, one world; level 3 the same over eight worlds, 24 rollouts and a longer horizon. Level 2 was four
worlds × 8 rollouts at horizon 3 until 2026-12-07: past about two worlds × four rollouts more of the same changed
nothing, so level 3 did not beat it."""
DEFAULT_LEVEL = 2


def budget_for(level: int, worlds: int | None = None, rollouts: int | None = None,
               horizon: int | None = None) -> Budget:
    """The level's budget with any of its numbers overridden (each refused in one line when out of range)."""
    if level not in LEVELS:
        raise InputError(f"search level must be 1, 2 or 3, not {level}")
    budget = LEVELS[level]
    if worlds is not None:
        if not 1 <= worlds <= 64:
            raise InputError(f"search worlds must be 1-64, not {worlds}")
        budget = replace(budget, worlds=worlds)
    if rollouts is not None:
        if not 1 <= rollouts <= 1024:
            raise InputError(f"search rollouts must be 1-1024, not {rollouts}")
        budget = replace(budget, rollouts=rollouts)
    if horizon is not None:
        if not 0 <= horizon <= 300:
            raise InputError(f"search horizon must be 0-300 turns, not {horizon}")
        budget = replace(budget, horizon=horizon)
    return budget


SIMULATORS = max(1, min(4, os.cpu_count() or 1))
"""Simulator processes the search plays its rollouts in: one per core (at most 4). A rollout's result depends only
on its world, reseed and policy seed, never on the process that plays it, so spreading the worlds over them changes
no decision; with two worlds or more and one battle at a time, a decision's rollouts run side by side."""


class _Engine:
    """Simulator processes and an event loop in a thread of their own, shared by every ``search`` policy in this
    Python process: a decision is submitted from whatever thread the runner decides in and waits for its answer.
    A decision's worlds go to the processes in turn, starting from the least busy one (so that two battles' searches
    spread too); each world is built once and its rollouts play in the process that holds it."""

    def __init__(self, size: int = SIMULATORS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._processes: list[SimProcess] = []
        self._busy: dict[int, int] = {}
        self._starting: asyncio.Lock | None = None
        self._pid = os.getpid()
        self._thread: int | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():  # first use, or a forked child: a fresh loop
                self._pid = os.getpid()
                self._processes = []
                self._loop = asyncio.new_event_loop()
                self._starting = None
                thread = threading.Thread(target=self._loop.run_forever, name="wolfeclick-search", daemon=True)
                thread.start()
                self._thread = thread.native_id
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    async def processes(self) -> list[SimProcess]:
        """The live simulator processes (started, or restarted after one died, on demand)."""
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if len(self._processes) < self.size or not all(p.alive for p in self._processes):
                kept = [p for p in self._processes if p.alive]
                fresh = [SimProcess() for _ in range(self.size - len(kept))]
                await asyncio.gather(*(p.start() for p in fresh))
                self._processes = kept + fresh
            return list(self._processes)

    def placed(self, processes: list[SimProcess], worlds: int) -> list[SimProcess]:
        """The process each of ``worlds`` worlds is built in: in turn, from the one with the fewest requests in
        flight (the first on a tie). Which process plays a rollout never changes its result."""
        start = min(range(len(processes)), key=lambda n: self._busy.get(id(processes[n]), 0))
        return [processes[(start + w) % len(processes)] for w in range(worlds)]

    async def call(self, process: SimProcess, op: str, **fields: Any) -> dict[str, Any]:
        """``process.call``, counted in flight while it runs (what ``placed`` reads)."""
        self._busy[id(process)] = self._busy.get(id(process), 0) + 1
        try:
            return await process.call(op, **fields)
        finally:
            self._busy[id(process)] -= 1

    def cpu(self) -> tuple[float, float]:
        """CPU seconds used so far by the search's event-loop thread (sampling, requests, replies) and by its live
        simulator processes: what its decisions cost whatever the machine's load."""
        thread = 0.0
        if self._thread is not None and self._pid == os.getpid():
            try:
                fields = Path(f"/proc/self/task/{self._thread}/stat").read_text().rsplit(")", 1)[1].split()
                thread = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
        return thread, cpu_seconds([p.pid for p in self._processes if p.pid is not None])

    def close(self) -> None:
        if self._pid == os.getpid():
            for process in self._processes:
                process.kill()
            self._processes = []


_ENGINE = _Engine()
atexit.register(_ENGINE.close)
_NAMES = itertools.count(1)


def _value(reply: dict[str, Any], side: Side, value: str = "hp") -> float:
    """A rollout's score for ``side``: 1 for a win, 0 for a loss, ½ for a tie; a rollout cut at its horizon scores
    ½ plus half the difference between how the two sides stand: their shares of team HP left (``"hp"``) or the
    bridge's ``standing`` (Pokémon up, HP, status, boosts, hazards)."""
    if reply["reason"] == "horizon":
        left = reply["standing"] if value == "standing" else reply["left"]
        foe = other(side)
        return 0.5 + 0.5 * (float(left[side]) - float(left[foe]))
    winner = reply.get("winner")
    return 1.0 if winner == side else 0.0 if winner else 0.5


class SearchPolicy:
    """The ``search`` kind: fair search by rollouts in sampled worlds."""

    blocking = True
    """Its rollouts take a while: the runner calls it from a worker thread, and other battles go on meanwhile."""

    def __init__(self, spec: str = "search", *, level: int = DEFAULT_LEVEL, worlds: int | None = None,
                 rollouts: int | None = None, horizon: int | None = None) -> None:
        self.spec = spec
        self.level = level
        self.budget = budget_for(level, worlds, rollouts, horizon)

    def metadata(self) -> dict[str, Any]:
        budget = {key: item for key, item in asdict(self.budget).items()  # level 1's metadata as before these
                  if key not in ("value", "tera", "policy", "foe_policy") or item != getattr(Budget, key)}
        budget.pop("policy", None)
        foe = budget.pop("foe_policy", None)
        return {"kind": "search", "level": self.level, **budget, "rollout_policy": "sim:" + self.budget.policy,
                **({"foe_rollout_policy": "sim:" + foe} if foe and foe != self.budget.policy else {})}

    def decide(self, observation: Observation) -> Decision:
        seed = observation.rng.getrandbits(48)  # one draw per decision, whatever follows: the sequence stays fixed
        allowed = observation.allowed()
        team = (observation.request.get("side") or {}).get("pokemon") or []
        reviving = any(mon.get("reviving") for mon in team if mon.get("active"))
        if len(allowed) <= 1 or observation.request.get("teamPreview") or reviving:
            return Decision(action=allowed[0] if allowed else None, info={"search": "one option"})
        if not is_random_format(observation.format):
            raise InputError(f"search samples unseen sets from a random-battle format's data; {observation.format} "
                             "plays given teams")
        return _ENGINE.run(self._search(observation, allowed, seed))

    async def _search(self, observation: Observation, allowed: list[LegalAction], seed: int) -> Decision:
        processes = await _ENGINE.processes()
        book = await load_book(observation.format, processes[0])
        side = observation.side
        if not is_side(side):
            raise InputError(f"search plays p1 or p2, not {str(side)[:10]!r}")
        foe = other(side)
        foes = revealed_foes(observation.battle)
        size = max(team_size(observation.battle, foe), len(foes))
        prefix = f"search-{os.getpid()}-{next(_NAMES)}"
        requests = []
        for w in range(self.budget.worlds):
            team = sample_team(book, [f.revealed for f in foes], size,
                               random.Random(derive_int(seed, f"search-sample:{w}")))
            requests.append(world_request(observation.battle, observation.request, side, foes, team,
                                          derive_seed(seed, f"search-world:{w}"), f"{prefix}-{w}", observation.format))
        built: list[tuple[str, SimProcess, dict[str, Any]]] = []
        try:
            placed = _ENGINE.placed(processes, len(requests))
            replies = await asyncio.gather(*(_ENGINE.call(process, "world", **request)
                                             for request, process in zip(requests, placed)), return_exceptions=True)
            built = [(request["snapshot"], process, reply) for request, process, reply in zip(requests, placed, replies)
                     if not isinstance(reply, BaseException)]
            for process, failed in zip(placed, replies):
                if isinstance(failed, BaseException) and (not isinstance(failed, SimulatorError) or not process.alive):
                    raise failed
            # a sample the simulator cannot build (a form it refuses) is missing here, and a world that waits on the
            # other side only is unusable: the other worlds stand
            worlds = [(name, process) for name, process, reply in built if side in reply.get("deciding", [side])]
            if not worlds:
                return Decision(action=allowed[0], info={"search": "no world to play"})
            options = [(action, False) for action in allowed]
            active = (observation.request.get("active") or [{}])[0]
            if self.budget.tera and active.get("canTerastallize") and not observation.request.get("forceSwitch"):
                options += [(action, True) for action in allowed if action.kind == "move"]
            tallies = await self._race(worlds, options, side, seed, observation.turn)
        finally:
            await asyncio.gather(*(process.call("forget", snapshot=name) for name, process, _ in built
                                   if process.alive), return_exceptions=True)
        best = leader(tallies, [True] * len(tallies))
        chosen, tera = options[best if best is not None else 0]
        values = {f"{a.kind} {a.name}" + (" tera" if t else ""): [round(tally.mean, 4), tally.n]
                  for (a, t), tally in zip(options, tallies)}
        info = {"search": {"level": self.level, "worlds": len(worlds), "rollouts": sum(t.n for t in tallies),
                           "values": values}}
        if tera:
            return Decision(action=chosen, command=f"{chosen.command()} terastallize", info=info)
        return Decision(action=chosen, info=info)

    async def _race(self, worlds: list[tuple[str, SimProcess]], allowed: list[tuple[LegalAction, bool]],
                    side: Side, seed: int, turn: int) -> list[Tally]:
        budget = self.budget
        scores: list[list[float]] = [[] for _ in allowed]
        rollout_policies: str | dict[str, str] = budget.policy if budget.policy == budget.foe_policy else \
            {side: budget.policy, other(side): budget.foe_policy}

        async def play(option: int, number: int) -> float:
            action, tera = allowed[option]
            first: dict[str, Any] = {"action": action.kind, "choice": action.name}
            if tera:
                first["tera"] = True
            name, process = worlds[number % len(worlds)]
            fields: dict[str, Any] = {
                "snapshot": name, "lines": [reseed_line(seed, f"search:{number}")],
                "policy": rollout_policies, "seed": derive_seed(seed, f"search-policy:{number}"),
                "maxTurns": max(1, turn) + ROLLOUT_TURNS, "first": {side: first}}
            if budget.horizon:
                fields["horizon"] = budget.horizon
            try:
                reply = await _ENGINE.call(process, "playout", **fields)
            except SimulatorError:
                if not process.alive:
                    raise
                return 0.5  # not open in this world (a guessed lock or trap), or a world that stalls: no evidence
            return _value(reply, side, budget.value)

        def tallies() -> list[Tally]:
            return [Tally(sum(s), len(s)) for s in scores]

        live = [True] * len(allowed)
        while True:
            plan = next_round(tallies(), live, budget.rollouts, budget.batch)
            if not any(plan):
                return tallies()
            jobs = [(i, n) for i, more in enumerate(plan) for n in range(len(scores[i]), len(scores[i]) + more)]
            results = await asyncio.gather(*(play(i, n) for i, n in jobs))
            for (i, _), value in zip(jobs, results):
                scores[i].append(value)
            live = still_racing(tallies(), live)


def make_search(spec: str = "search", *, level: int = DEFAULT_LEVEL, worlds: int | None = None,
                rollouts: int | None = None, horizon: int | None = None) -> SearchPolicy:
    """The registry's factory for the ``search`` kind."""
    return SearchPolicy(spec, level=level, worlds=worlds, rollouts=rollouts, horizon=horizon)
