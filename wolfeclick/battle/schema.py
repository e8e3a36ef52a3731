"""Recording schema v1: the contract between the battle runner, the CLI and the UI.

A recording is one battle: who played, how it ended, the simulator's own logs (enough to re-simulate), and one
``TurnRecord`` per decision point holding, for each deciding side, what it saw, what it did and what it earned.
Everything here is plain data; the JSON Schema exported from these models lives in ``docs/recording.schema.json``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from wolfeclick.sides import SIDES, Side
from wolfeclick.sim.protocol import check_ending_last, check_input_lines

SCHEMA_VERSION: Literal["wolfeclick.recording/1"] = "wolfeclick.recording/1"
"""Bump on any incompatible change; readers reject versions they do not know."""

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
"""Recording ids double as file names: letters, digits, ``_ . -``; no path separators, no leading dot."""
_ID_RE = re.compile(ID_PATTERN)

EndReason = Literal["win", "tie", "turn_limit", "aborted", "forfeit"]


MAX_SEED = 2**63 - 1
"""Seeds are kept to 63 bits, so every integer in a recording survives any JSON reader (orjson, browsers' doubles
aside: seeds are shown, not computed on, in the page)."""
MAX_TURNS = 1_000_000
"""Bound on turn numbers, decision indices and counts: far beyond any real battle, small enough for every reader."""
MAX_TEXT = 1_000_000
"""Bound on any one string (a state, a log line, a raw output); the file's own size limit bounds the rest."""


def is_valid_id(value: str) -> bool:
    """True when ``value`` is a safe recording id (and so a safe file stem); a trailing newline is not safe."""
    return isinstance(value, str) and bool(_ID_RE.fullmatch(value)) and ".." not in value


class _Model(BaseModel):
    """Strict: no coercion ("1" is not a seed, true is not a count), finite floats only, bounded strings, so whatever
    validates can be served back by every reader the app uses."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, str_max_length=MAX_TEXT)


class ActionRecord(_Model):
    """An action in the JSON shape the published checkpoints speak: ``{"action": "move", "choice": "Surf"}``."""

    model_config = ConfigDict(frozen=True)  # the runner shares one instance among the turns that offer it

    action: Literal["move", "switch", "team", "default"] = Field(
        description="'team' is a team-preview choice: the choice names the lead, the rest follow in team order.")
    choice: str


class RewardRecord(_Model):
    """Shaped reward for one decision. ``total`` excludes ``outcome``, which is reported apart."""

    total: float
    components: dict[str, float]
    outcome: float = 0.0


class SideDecision(_Model):
    """What one side saw and did at one decision point."""

    state: str = Field(description="The state markdown the policy was shown.")
    legal_actions: list[ActionRecord]
    action: ActionRecord | None = Field(description="The action taken; null when the simulator's default was used.")
    command: str = Field(description="The choice sent to the simulator, e.g. 'move 2' or 'switch 3'.")
    raw_output: str | None = Field(description="The policy's raw text (language models), else null.")
    illegal: bool = False
    illegal_reason: str | None = None
    rejected: list[str] = Field(default_factory=list, description="Choices the simulator refused before this one.")
    latency_ms: float | None = Field(description="Decision time in ms; null when the source did not measure it "
                                               "(imported recordings).")
    reward: RewardRecord
    policy_info: dict[str, Any] = Field(default_factory=dict, description=(
        "Policy extras: prompt (a checkpoint's chat-templated prompt), scores, tokens; for env agents "
        "(source kind 'training') 'observation', the exact text the agent read, and 'refused_calls', the tool "
        "calls refused before this decision ([{call, error}])."))

    def seen(self) -> str:
        """The text this side decided on: an env agent's exact observation when kept, else the state markdown."""
        observation = self.policy_info.get("observation")
        return observation if isinstance(observation, str) and observation else self.state


class PokemonSnapshot(_Model):
    model_config = ConfigDict(frozen=True)  # the runner shares one instance among the turns with its values

    species: str
    hp: float = Field(ge=0, le=100, description="HP percent.")
    status: str | None = None
    fainted: bool = False
    active: bool = False
    revealed: bool = Field(True, description="Whether the opponent has seen this Pokémon yet.")


class SideSnapshot(_Model):
    """A compact view of one side for charts: the team as its owner knows it."""

    active: str | None
    active_hp: float | None
    active_status: str | None
    team_hp: float = Field(ge=0, le=100, description="Mean HP percent over all six slots.")
    fainted: int = Field(ge=0, le=24)
    team: list[PokemonSnapshot]


class TurnRecord(_Model):
    """One decision point. ``events`` are the spectator protocol lines since the previous decision point."""

    index: int = Field(ge=0, le=MAX_TURNS)
    turn: int = Field(ge=0, le=MAX_TURNS)
    deciding: list[Side]
    decisions: dict[Side, SideDecision]
    events: list[str]
    snapshot: dict[Side, SideSnapshot]


class PlayerInfo(_Model):
    name: str = Field(max_length=200)
    policy: str = Field(max_length=2000, description="The policy spec string, e.g. 'heuristic' or 'preset:run3'.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    since: int | None = Field(None, ge=0, le=MAX_TURNS, description=(
        "For a branch: the decision this policy took over at (first asked there, its generator fresh), so a "
        "branch of this branch asks it from there again; absent when it played from the first decision."))

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``since`` is written only when set, so recordings of whole battles keep the bytes they had before it."""
        data: dict[str, Any] = handler(self)
        if self.since is None:
            data.pop("since", None)
        return data


class Result(_Model):
    winner: Side | None
    reason: EndReason
    turns: int = Field(ge=0, le=MAX_TURNS)
    error: str | None = Field(None, description="One line on why the battle was aborted, if it was.")


class Versions(_Model):
    wolfeclick: str
    pokemon_showdown: str
    poke_env: str
    python: str


SourceKind = Literal["played", "tournament", "training", "branch", "imported", "ladder"]


class SourceInfo(_Model):
    """Where a recording came from, so the library can say it and filter by it; ``played`` when absent."""

    kind: SourceKind = "played"
    detail: str | None = Field(None, description="E.g. the tournament id, the importer's format name, the server.")
    parent: str | None = Field(None, description="For a branch: the id of the recording it was branched from.")
    branch_step: int | None = Field(None, ge=0, le=MAX_TURNS, description="For a branch: the decision index it took over at.")


class TeamInfo(_Model):
    """A side's team in a format that plays given teams (OU and the like), as the simulator's validator accepted it."""

    packed: str = Field(max_length=4000, description="Showdown's packed team string (what the simulator was fed).")
    name: str | None = Field(None, max_length=200, description="Where it came from: the team file's name.")
    species: list[str] = Field(default_factory=list, max_length=24, description="The species, in team order.")


class Recording(_Model):
    schema_: Literal["wolfeclick.recording/1"] = Field(SCHEMA_VERSION, alias="schema")
    id: str = Field(pattern=ID_PATTERN)
    created: str = Field(description="ISO 8601 UTC time the recording was written (not part of its identity).")
    format: str
    seed: int | None = Field(ge=0, le=MAX_SEED, description="The battle seed; null when unknown (imported recordings).")
    players: dict[Side, PlayerInfo] = Field(description="Both sides, p1 and p2.")
    result: Result
    versions: Versions
    log: list[str] = Field(description="Spectator protocol lines, as Showdown's replay viewer takes them.")
    inputlog: list[str] = Field(description="Every line the simulator was fed; enough to re-simulate the battle.")
    turns: list[TurnRecord]
    source: SourceInfo = Field(default_factory=SourceInfo, description="Where the recording came from.")
    teams: dict[Side, TeamInfo] | None = Field(None, description="Both sides' teams in a given-team format; absent "
                                                                "for random battles (their teams come from the seed).")

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True, allow_inf_nan=False,
                              str_max_length=MAX_TEXT)

    @field_validator("players")
    @classmethod
    def _both_players(cls, value: dict[str, PlayerInfo]) -> dict[str, PlayerInfo]:
        missing = [side for side in SIDES if side not in value]
        if missing:
            raise ValueError(f"players must name both p1 and p2 (missing {', '.join(missing)})")
        return value

    @field_validator("teams")
    @classmethod
    def _both_teams(cls, value: dict[str, TeamInfo] | None) -> dict[str, TeamInfo] | None:
        if value is not None and set(value) != set(SIDES):
            raise ValueError("teams must name both p1 and p2")
        return value

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not is_valid_id(value):
            raise ValueError("id must be a safe file name")
        return value

    @field_validator("inputlog")
    @classmethod
    def _battle_input_only(cls, value: list[str]) -> list[str]:
        """What ``resim`` would feed the simulator: the door's rules (no ``>eval``, one line per entry)."""
        check_input_lines(value)  # UnsafeInput is a ValueError: reported as this field's one-line error
        check_ending_last(value)
        return value

    def reward_totals(self) -> dict[Side, dict[str, float]]:
        """Per side: shaped reward, outcome and their sum, over the whole battle."""
        totals: dict[Side, dict[str, float]] = {}
        for side in SIDES:
            shaped = sum(t.decisions[side].reward.total for t in self.turns if side in t.decisions)
            outcome = sum(t.decisions[side].reward.outcome for t in self.turns if side in t.decisions)
            totals[side] = {"shaped": round(shaped, 4), "outcome": outcome, "total": round(shaped + outcome, 4)}
        return totals

    def to_json(self) -> str:
        """The canonical serialisation: stable key order, so equal battles give equal bytes. ``teams`` is written
        only when there are teams, so random-battle recordings keep the bytes they had before teams existed."""
        exclude = {"teams"} if self.teams is None else None
        return self.model_dump_json(by_alias=True, indent=1, exclude=exclude) + "\n"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a recording, as exported to docs/."""
    return Recording.model_json_schema(by_alias=True)
