"""The analysis file (``wolfeclick.analysis/1``): win probabilities, option values, turning points and mistakes.

Stored beside the recordings as rescores are, in ``<recordings>/analyses/<recording id>/<policy>-k<K>-s<seed>.json``.
It holds no timings or dates, so the same recording, policy, K and seed give the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from wolfeclick.battle.runner import slug
from wolfeclick.battle.schema import ActionRecord
from wolfeclick.battle.store import write_atomic
from wolfeclick.sides import Side

ANALYSIS_SCHEMA: Final = "wolfeclick.analysis/1"
ANALYSIS_DIR = "analyses"
MAX_FILE = 20 * 1024 * 1024


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Estimate(_Model):
    """K rollouts from one state. ``value`` is the side's score rate (a tie or turn limit counts half) and
    ``low``/``high`` its 95% Wilson interval."""

    side: Side
    rollouts: int = Field(ge=0)
    wins: int = Field(ge=0)
    losses: int = Field(ge=0)
    draws: int = Field(ge=0, description="Ties and turn limits.")
    value: float = Field(ge=0, le=1)
    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)


class OptionValue(_Model):
    """One legal action at a decision, followed by the rollout policy."""

    action: ActionRecord
    estimate: Estimate
    rank: int = Field(ge=1, description="1 = the best option (ties share a rank).")
    stopped_early: bool = Field(False, description="Racing stopped this option after ``estimate.rollouts`` "
                                                   "rollouts: its interval lay wholly below the leader's.")


class DecisionOptions(_Model):
    side: Side
    options: list[OptionValue] = Field(description="Best first.")
    played: ActionRecord | None
    played_rank: int | None
    loss: float | None = Field(None, description="The best option's value less the played one's.")
    mistake: bool = Field(False, description="The played option's interval lies wholly below the best one's and "
                                             "its loss is at least the analysis' margin.")


class AnalysedDecision(_Model):
    index: int = Field(ge=0)
    turn: int = Field(ge=0)
    deciding: list[Side]
    win: Estimate = Field(description="p1's win probability from the true state at this decision.")
    options: dict[Side, DecisionOptions] = Field(default_factory=dict)


class TurningPoint(_Model):
    """Where p1's win probability moved most: from decision ``index`` to the next one (or to the end)."""

    index: int
    turn: int
    before: float
    after: float
    swing: float = Field(description="after − before, for p1.")


class Mistake(_Model):
    index: int
    turn: int
    side: Side
    played: ActionRecord | None
    best: ActionRecord
    loss: float


class Analysis(_Model):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, populate_by_name=True)

    schema_: Literal["wolfeclick.analysis/1"] = Field(ANALYSIS_SCHEMA, alias="schema")
    recording: str
    policy: str = Field(description="The rollout policy spec, for both sides.")
    k: int = Field(ge=1, description="Rollouts per estimate (racing: the most any estimate gets).")
    sampling: Literal["uniform", "racing"] = Field("uniform", description="uniform: every estimate has K rollouts; "
                                                   "racing: rounds of ``batch``, options stopped early, win "
                                                   "probabilities stopped at ``width`` (docs/analysis.md).")
    batch: int | None = Field(None, ge=1, description="Racing: rollouts per live estimate per round.")
    width: float | None = Field(None, ge=0, description="Racing: a win probability stops once its interval is at "
                                                        "most this wide.")
    seed: int = Field(ge=0)
    margin: float = Field(description="The least loss in win probability that makes a mistake.")
    sees: Literal["both teams", "from an inferred state"] = Field(
        "both teams", description="both teams: rollouts start from the simulator's true state (they know both teams, "
                                  "which neither player did); from an inferred state: a public replay's decisions "
                                  "built from a player's inferred view, the opponent's hidden sets sampled.")
    winner: Side | None
    decisions: list[AnalysedDecision]
    turning_points: list[TurningPoint]
    mistakes: list[Mistake]

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=1) + "\n"


def analysis_path(recordings_dir: Path, recording_id: str, policy: str, k: int, seed: int,
                  sampling: str = "uniform") -> Path:
    """Where an analysis is stored; a raced one gets ``-racing`` so that it never overwrites a uniform one."""
    tail = "-racing" if sampling == "racing" else ""
    return Path(recordings_dir) / ANALYSIS_DIR / recording_id / f"{slug(policy)}-k{k}-s{seed}{tail}.json"


def save_analysis(analysis: Analysis, recordings_dir: Path) -> Path:
    return write_atomic(analysis_path(recordings_dir, analysis.recording, analysis.policy, analysis.k, analysis.seed,
                                      analysis.sampling), analysis.to_json())


def load_analyses(recordings_dir: Path, recording_id: str) -> tuple[list[Analysis], int]:
    """The analyses stored for one recording (sorted by file name) and how many files there were unreadable."""
    folder = Path(recordings_dir) / ANALYSIS_DIR / recording_id
    if not folder.is_dir() or folder.is_symlink():
        return [], 0
    found: list[Analysis] = []
    broken = 0
    for path in sorted(folder.glob("*.json")):
        try:
            if path.is_symlink() or path.stat().st_size > MAX_FILE:
                raise ValueError(path.name)
            analysis = Analysis.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            broken += 1
            continue
        if analysis.recording == recording_id:
            found.append(analysis)
        else:
            broken += 1
    return found, broken


def pick_analysis(analyses: list[Analysis]) -> Analysis | None:
    """Of several analyses of one recording, the one with most rollouts (then uniform before racing, by policy and
    seed): the most exact."""
    return min(analyses, key=lambda a: (-a.k, a.sampling != "uniform", a.policy, a.seed), default=None)
