"""Teams for formats that play given teams (``gen9ou``, ``gen4ou``, ``gen1ou``…): read, validated, dealt per battle.

A team is Showdown export text ("pokepaste") or a packed team string, in a file. The simulator's own ``Teams`` and
``TeamValidator`` read and judge it (the bridge's ``validate-team`` op), so a team is legal exactly when Showdown
says so; an illegal one is refused in one line with the validator's reasons, before any battle starts.

Which team a side plays is a pure function of the battle seed (``TeamDeal.deal``): each seat draws from its own
pool with ``derive_int(seed, "team:p1")`` / ``"team:p2"``. A tournament pair is one seed played twice with the
seats swapped, so the teams stay with the seats and the policies swap teams — as random battles swap decks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wolfeclick.battle.schema import TeamInfo
from wolfeclick.errors import InputError
from wolfeclick.sides import Side
from wolfeclick.sim.process import SimProcess, SimulatorError
from wolfeclick.sim.protocol import SIDES, derive_int

MAX_TEAM_FILE = 64 * 1024
"""An export of six sets is about 1.5 kB; anything far bigger is not a team."""
TEAM_SUFFIXES = (".txt", ".team", ".paste")


class TeamError(InputError):
    """A team file that cannot be read, or a team the format's validator refuses (nothing was played)."""


@dataclass(frozen=True)
class Team:
    """A validated team: the packed string the simulator is fed, where it came from and its species."""

    packed: str
    name: str
    species: tuple[str, ...]

    def info(self) -> TeamInfo:
        return TeamInfo(packed=self.packed, name=self.name, species=list(self.species))


def read_team_file(path: Path) -> str:
    """The text of one team file (UTF-8, at most ``MAX_TEAM_FILE`` bytes), or a ``TeamError`` saying why not."""
    try:
        data = path.read_bytes()[: MAX_TEAM_FILE + 1]
    except OSError as exc:
        raise TeamError(f"cannot read team file {path}: {exc.strerror or exc.__class__.__name__}") from None
    if len(data) > MAX_TEAM_FILE:
        raise TeamError(f"team file {path} is larger than {MAX_TEAM_FILE // 1024} KiB; is it a team?")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TeamError(f"team file {path} is not UTF-8 text") from None


def pool_files(directory: Path) -> list[Path]:
    """The team files of a pool folder (``*.txt``, ``*.team``, ``*.paste``), sorted by name so a pool is stable."""
    if not directory.is_dir():
        raise TeamError(f"team pool {directory} is not a folder")
    found = sorted(p for p in directory.iterdir()
                   if p.is_file() and not p.name.startswith(".") and p.suffix.lower() in TEAM_SUFFIXES)
    if not found:
        raise TeamError(f"team pool {directory} holds no team files ({', '.join(TEAM_SUFFIXES)})")
    return found


async def validate_team(process: SimProcess, format_id: str, text: str, name: str) -> Team:
    """Ask the simulator to read and validate one team for ``format_id``; its refusal becomes a ``TeamError``."""
    try:
        reply = await process.call("validate-team", format=format_id, team=text)
    except SimulatorError as exc:
        if not process.alive:
            raise
        raise TeamError(f"{name}: {str(exc).replace('simulator refused validate-team: ', '')}") from None
    return Team(packed=str(reply["team"]), name=name, species=tuple(str(s) for s in reply.get("species", [])))


@dataclass(frozen=True)
class TeamDeal:
    """Each seat's pool of validated teams; ``deal(seed)`` gives a battle's two teams (a pure function)."""

    p1: tuple[Team, ...]
    p2: tuple[Team, ...]

    def deal(self, seed: int) -> dict[Side, Team]:
        pools = {"p1": self.p1, "p2": self.p2}
        return {side: pools[side][derive_int(seed, f"team:{side}") % len(pools[side])] for side in SIDES}

    def infos(self, seed: int) -> dict[Side, TeamInfo]:
        """A battle's two teams as the runner takes them (and the recording keeps them)."""
        return {side: team.info() for side, team in self.deal(seed).items()}


@dataclass(frozen=True)
class TeamSources:
    """What the user named: a team file per seat and/or a pool folder for the seats without one."""

    team1: Path | None = None
    team2: Path | None = None
    pool: Path | None = None

    @property
    def given(self) -> bool:
        return any(p is not None for p in (self.team1, self.team2, self.pool))

    def files(self) -> dict[str, list[Path]]:
        """Each seat's team files; a seat without a file of its own draws from the pool."""
        pool = pool_files(self.pool) if self.pool is not None else []
        seats: dict[str, list[Path]] = {}
        for side, own in (("p1", self.team1), ("p2", self.team2)):
            if own is not None:
                seats[side] = [own]
            elif pool:
                seats[side] = pool
            else:
                raise TeamError(f"no team for {side}: give --team{side[1]} FILE or --teams DIR")
        return seats


async def load_deal(sources: TeamSources, format_id: str, process: SimProcess) -> TeamDeal:
    """Read and validate every named team once (a pool's file shared by both seats is validated once)."""
    seats = sources.files()
    checked: dict[Path, Team] = {}
    for path in dict.fromkeys(p for paths in seats.values() for p in paths):
        checked[path] = await validate_team(process, format_id, read_team_file(path), path.name)
    return TeamDeal(p1=tuple(checked[p] for p in seats["p1"]), p2=tuple(checked[p] for p in seats["p2"]))


async def prepare_deal(sources: TeamSources, format_id: str, process: SimProcess | None = None) -> TeamDeal | None:
    """The deal for a command's ``--team1/--team2/--teams`` (None when none were named), on ``process`` or on a
    simulator started for the purpose. Teams for a random-battle format are refused by the simulator, in one line."""
    if not sources.given:
        return None
    if process is not None:
        return await load_deal(sources, format_id, process)
    own = SimProcess()
    try:
        await own.start()
        return await load_deal(sources, format_id, own)
    finally:
        await own.close()
