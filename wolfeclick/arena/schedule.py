"""Tournament schedules: who plays whom, in which seat, on which seed. Pure; no I/O, no battles.

A tournament is a set of *pairings* (unordered pairs of policy specs), each played for ``pairs`` *battle pairs*.
A battle pair is one seed played twice with the seats swapped: in game 0 the pairing's first policy sits in p1, in
game 1 the second does. Random-battle teams come from each seat's seed, itself derived from the battle seed, so the
two games of a pair deal the same two teams with the policies swapped — each policy plays each team once, which
cancels most of the luck of the draw.

Seeds derive from the tournament seed and the pair number only (``derive_int(seed, "pair:k") % 2**31``, see
``pair_seeds``), so every pairing plays the same deals: pair k of "A vs B" and pair k of "A vs C" use the same
teams. Comparing two checkpoints against the same baselines then compares them on identical battles.

In a format that plays given teams (``gen9ou``…), ``teams`` is the pool: each seat of a pair's seed is dealt a
team from it (``TeamDeal.deal``, a pure function of the seed), so the teams stay with the seats like random decks
and the two games of a pair swap the policies' teams as well as their seats.

Battles are ordered pair-major — pair 0 of every pairing, then pair 1, … — so a run stopped early (crash, SPRT)
has played every pairing about equally.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from wolfeclick.battle.policy_specs import check_spec
from wolfeclick.battle.runner import DEFAULT_MAX_TURNS, recording_id, slug
from wolfeclick.battle.teams import Team, TeamDeal
from wolfeclick.errors import InputError
from wolfeclick.sim.protocol import derive_int

__all__ = [
    "SEED_MODULUS",
    "TournamentConfig",
    "ScheduledBattle",
    "parse_specs",
    "check_specs",
    "pairings",
    "pair_seeds",
    "build_schedule",
]

SEED_MODULUS = 2**31
"""Battle seeds are reduced below this: non-negative, and short enough to read in a file name."""


def parse_specs(text: str | None) -> tuple[str, ...]:
    """``"random, maxdamage"`` → ``("random", "maxdamage")``; empty items are dropped."""
    if not text:
        return ()
    return tuple(part.strip() for part in text.split(",") if part.strip())


def check_specs(specs: Iterable[str], **llm_options: Any) -> None:
    """Refuse, in the policy registry's own line, the first spec it would not build (a misspelt kind, an unknown
    or mistyped option, a malformed ``llm:`` body or a missing local checkpoint folder), building nothing.

    What a tournament's maker calls as its config is made, before a simulator starts or a model loads: otherwise
    the mistake surfaces only when the battles are prepared, after the specs before it have loaded.
    ``llm_options`` are the checkpoint options every spec will be built with (the CLI's ``--mode``…).
    """
    for spec in specs:
        check_spec(spec, **llm_options)


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that decides which battles a tournament plays; equal configs give equal tournaments.

    ``players`` alone: a round robin over them. With ``vs``: a gauntlet, every player against every ``vs`` policy
    (e.g. several checkpoints against fixed baselines); a spec may appear in both lists, it never plays itself and
    each unordered pairing is played once. ``sprt`` = (elo0, elo1) turns on early stopping; it needs exactly one
    pairing. ``max_turns`` caps each battle (a capped battle is a tie).
    """

    players: tuple[str, ...]
    pairs: int
    format: str
    seed: int
    vs: tuple[str, ...] = ()
    max_turns: int = DEFAULT_MAX_TURNS
    sprt: tuple[float, float] | None = None
    teams: tuple[Team, ...] = ()
    """The team pool of a given-team format (validated teams); empty for random battles."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(p.strip() for p in self.players))
        object.__setattr__(self, "vs", tuple(p.strip() for p in self.vs))
        if self.sprt is not None:
            object.__setattr__(self, "sprt", (float(self.sprt[0]), float(self.sprt[1])))
        for name, specs in (("players", self.players), ("vs", self.vs)):
            if any(not s for s in specs):
                raise InputError(f"empty policy spec in {name}")
            if len(set(specs)) != len(specs):
                raise InputError(f"a policy is listed twice in {name}: {', '.join(specs)}")
        if self.pairs < 1:
            raise InputError("pairs must be at least 1")
        if self.seed < 0:
            raise InputError("seed must be non-negative")
        if self.max_turns < 1:
            raise InputError("max_turns must be at least 1")
        if not self.format:
            raise InputError("format is empty")
        found = pairings(self)
        if not found:
            raise InputError("no pairings: list at least two players, or players and --vs opponents")
        slugs: dict[str, str] = {}
        for spec in {s for pairing in found for s in pairing}:
            other = slugs.setdefault(slug(spec), spec)
            if other != spec:
                raise InputError(f"policy specs {other!r} and {spec!r} would share recording file names")
        if self.sprt is not None:
            elo0, elo1 = self.sprt
            if not elo0 < elo1:
                raise InputError(f"SPRT needs elo0 < elo1, got {elo0:g} and {elo1:g}")
            if len(found) != 1:
                raise InputError(f"SPRT needs exactly one pairing (two policies), this tournament has {len(found)}")

    @property
    def specs(self) -> tuple[str, ...]:
        """Every spec that plays, once each, in the order listed (players, then ``vs``)."""
        return tuple(dict.fromkeys(self.players + self.vs))

    def checked(self, **llm_options: Any) -> "TournamentConfig":
        """This config, once the policy registry accepts every spec in it (``check_specs``). Not done in
        ``__init__``: a stored config is read back whatever is installed now (the leaderboard reads old
        tournaments), and the statistics are tested on made-up names."""
        check_specs(self.specs, **llm_options)
        return self

    @property
    def id(self) -> str:
        """A safe directory name derived from the whole config: ``<format>-s<seed>-<10 hex digits>``."""
        digest = hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:10]
        return f"{slug(self.format, 32)}-s{self.seed}-{digest}"

    def to_dict(self) -> dict[str, Any]:
        """The config as plain JSON data (what ``tournament.json`` holds, less the id)."""
        return {
            "players": list(self.players),
            "vs": list(self.vs),
            "pairs": self.pairs,
            "format": self.format,
            "seed": self.seed,
            "max_turns": self.max_turns,
            "sprt": list(self.sprt) if self.sprt is not None else None,
            # only when there are teams: random-battle tournaments keep the ids they always had
            **({"teams": [{"name": t.name, "packed": t.packed, "species": list(t.species)} for t in self.teams]}
               if self.teams else {}),
        }

    def deal(self) -> TeamDeal | None:
        """Both seats draw from the one pool (None: a random-battle tournament)."""
        return TeamDeal(self.teams, self.teams) if self.teams else None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TournamentConfig":
        """Inverse of ``to_dict`` (extra keys such as ``id`` are ignored)."""
        try:
            sprt = data.get("sprt")
            return cls(
                players=tuple(data["players"]),
                vs=tuple(data.get("vs") or ()),
                pairs=int(data["pairs"]),
                format=str(data["format"]),
                seed=int(data["seed"]),
                max_turns=int(data.get("max_turns", DEFAULT_MAX_TURNS)),
                sprt=(float(sprt[0]), float(sprt[1])) if sprt else None,
                teams=tuple(Team(packed=str(t["packed"]), name=str(t["name"]),
                                 species=tuple(str(x) for x in t.get("species", ())))
                            for t in data.get("teams") or ()),
            )
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise InputError(f"not a tournament config: {exc.__class__.__name__}: {exc}") from None

    @property
    def sprt_policies(self) -> tuple[str, str] | None:
        """(A, B) for the SPRT "A is at least elo1 stronger than B": the single pairing, as listed."""
        if self.sprt is None:
            return None
        return pairings(self)[0]


def pairings(config: TournamentConfig) -> list[tuple[str, str]]:
    """The pairings, in schedule order, each as (first, second) — first sits in p1 in game 0 of every pair.

    Round robin: (players[i], players[j]) for i < j. Gauntlet (``vs`` given): (player, opponent) for each player,
    then each opponent, skipping self-play and pairings already listed the other way round.
    """
    out: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    if config.vs:
        candidates = [(p, q) for p in config.players for q in config.vs]
    else:
        candidates = [(p, q) for i, p in enumerate(config.players) for q in config.players[i + 1:]]
    for a, b in candidates:
        key = frozenset((a, b))
        if a == b or key in seen:
            continue
        seen.add(key)
        out.append((a, b))
    return out


def pair_seeds(tournament_seed: int, pairs: int) -> list[int]:
    """The battle seed of each pair number (shared by every pairing); distinct, so battle ids never collide.

    Pair k uses ``derive_int(seed, "pair:k") % 2**31``; in the rare case that repeats an earlier pair's seed, the
    labels ``pair:k:1``, ``pair:k:2``, … are tried in turn, so the list stays a pure function of its arguments.
    """
    seeds: list[int] = []
    used: set[int] = set()
    for k in range(pairs):
        value, attempt = derive_int(tournament_seed, f"pair:{k}") % SEED_MODULUS, 0
        while value in used:
            attempt += 1
            value = derive_int(tournament_seed, f"pair:{k}:{attempt}") % SEED_MODULUS
        used.add(value)
        seeds.append(value)
    return seeds


@dataclass(frozen=True)
class ScheduledBattle:
    """One battle of the schedule. ``index`` is its position (and the sort key of ``results.jsonl``)."""

    index: int
    pairing: int
    pair: int
    game: int
    seed: int
    p1: str
    p2: str
    battle_id: str = field(default="")


def build_schedule(config: TournamentConfig) -> list[ScheduledBattle]:
    """Every battle of the tournament, pair-major: for pair k, for each pairing, game 0 then game 1."""
    found = pairings(config)
    battles: list[ScheduledBattle] = []
    for k, seed in enumerate(pair_seeds(config.seed, config.pairs)):
        for q, (a, b) in enumerate(found):
            for game, (p1, p2) in enumerate(((a, b), (b, a))):
                battles.append(ScheduledBattle(
                    index=len(battles), pairing=q, pair=k, game=game, seed=seed, p1=p1, p2=p2,
                    battle_id=recording_id(config.format, seed, p1, p2),
                ))
    return battles
