"""The battle view: TurnRecords → one HTML panel per decision (plus an end-of-battle panel). Pure; no Gradio, no I/O.

Live battles and replays use exactly this code on exactly the same ``TurnRecord`` objects. ``BattleView`` holds
what is worth computing once per battle (the narration of every turn, the chart series); ``viewer_payload.py`` turns it
into what the browser steps through without asking the server again.

One truth per view:
- HP: every number and bar is the *public* percentage (``public_hp``), as Showdown shows spectators and as the
  narration (which reads the spectator log) tells it.
- A decision is shown with what followed it once that is known (``settled``); until then its reward and its
  outcome are marked as still to come, never half shown.
- The battle's end is its own step, drawn from the log after the last decision (fainted is fainted).

Every string that comes from a recording (names, species, raw model output, state text, protocol lines) goes
through ``html.escape`` before it reaches the page: recordings can be uploaded, so they are untrusted.
Figures are plain Plotly JSON dicts (``go.Figure(d)`` accepts them); building them as dicts keeps a step cheap.
"""

from __future__ import annotations

import copy
import functools
import html
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from wolfeclick.battle.schema import PokemonSnapshot, Recording, SideDecision, SideSnapshot, TurnRecord
from wolfeclick.game.state import mean_team_hp
from wolfeclick.settings import settings
from wolfeclick.sides import SIDES, Side, other
from wolfeclick.ui.narrate import Narrator, Sentence, public_hp
from wolfeclick.ui.presentation import played_by, result_text

__all__ = [
    "BattleMeta",
    "shown_names",
    "BattleView",
    "render_turn",
    "sprite_url",
    "step_for_turn",
    "public_hp",
    "SIDE_COLORS",
]

SIDE_COLORS = {"p1": "#2563eb", "p2": "#dc2626"}
SPRITE_BASE = "https://play.pokemonshowdown.com/sprites/gen5/"
STATUS_LABELS = {"brn": "BRN", "par": "PAR", "slp": "SLP", "frz": "FRZ", "psn": "PSN", "tox": "TOX"}
MAX_TEXT = 20_000
"""Long texts (a state, a raw output) are cut here: a page must stay responsive whatever a recording holds."""


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _to_id(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@functools.lru_cache(maxsize=1)
def _pokedex() -> Mapping[str, Any]:
    try:
        from poke_env.data import GenData

        return GenData.from_gen(9).pokedex
    except Exception:  # the view must render without poke-env data too
        return {}


def sprites_enabled() -> bool:
    return settings().sprites


@functools.lru_cache(maxsize=4096)
def sprite_url(species: str) -> str | None:
    """Showdown's public gen-5-style sprite for a species (loaded by the viewer's browser, never by the server).

    Forms use ``base-forme`` ids (``Rotom-Wash`` → ``rotom-wash``); names the Pokédex does not know get none. The
    result only ever holds ``[a-z0-9-]``.
    """
    key = _to_id(species)
    dex = _pokedex()
    if not key or (dex and key not in dex):  # only species the Pokédex knows get a sprite
        return None
    entry = dex.get(key) or {}
    base, forme = entry.get("baseSpecies"), entry.get("forme")
    sprite = f"{_to_id(base)}-{_to_id(forme)}" if base and forme and _to_id(base) != key else key
    sprite = re.sub(r"[^a-z0-9-]", "", sprite)
    return f"{SPRITE_BASE}{sprite}.png" if sprite else None


def shown_names(recording: Recording) -> dict[str, str]:
    """Each side's name as every page shows it: the recorded one, or both parts of a side a branch took over
    (``presentation.played_by``). The view's header, the Replays list and the analysis card all read this."""
    return played_by({s: p.name for s, p in recording.players.items()},
                     {s: p.policy for s, p in recording.players.items()}, recording.source.kind == "branch")


@dataclass(frozen=True)
class BattleMeta:
    """What the view needs to know about a battle besides its turns."""

    id: str | None
    format: str
    seed: int | None
    names: dict[str, str]
    policies: dict[str, str]
    result: dict[str, Any] | None = None
    created: str | None = None

    @classmethod
    def of(cls, recording: Recording) -> "BattleMeta":
        return cls(
            id=recording.id, format=recording.format, seed=recording.seed, names=shown_names(recording),
            policies={s: p.policy for s, p in recording.players.items()},
            result=recording.result.model_dump(), created=recording.created,
        )


def step_for_turn(turns: Sequence[TurnRecord], turn: int) -> int:
    """The first decision point of game turn ``turn`` (or the nearest after it; the last one past the end)."""
    for i, record in enumerate(turns):
        if record.turn >= turn:
            return i
    return max(0, len(turns) - 1)


# --------------------------------------------------------------------------------------------------------------
# HTML pieces
# --------------------------------------------------------------------------------------------------------------
def public_team_hp(snap: SideSnapshot | None) -> float:
    """Mean public HP over all six slots (unseen slots count as full), the HP chart's value."""
    if snap is None:
        return 100.0
    return round(mean_team_hp([0 if mon.fainted else public_hp(mon.hp) for mon in snap.team]), 2)


def _hp_color(hp: float) -> str:
    return "#16a34a" if hp > 50 else "#ca8a04" if hp > 20 else "#dc2626"


def _status_badge(status: str | None) -> str:
    if not status:
        return ""
    label = STATUS_LABELS.get(status.lower(), status.upper()[:4])
    return f'<span class="wc-status wc-status-{esc(label.lower())}">{esc(label)}</span>'


def _sprite(species: str, css: str = "wc-sprite") -> str:
    if not sprites_enabled():
        return ""
    url = sprite_url(species)
    if not url:
        return ""
    # The name is always printed beside the sprite, so a sprite that fails to load is simply removed.
    return f'<img class="{css}" src="{url}" alt="" loading="lazy" referrerpolicy="no-referrer" onerror="this.remove()">'


def _hp_bar(hp: int) -> str:
    return (f'<div class="wc-hpbar" title="{hp}% HP"><div class="wc-hpfill" '
            f'style="width:{hp}%;background:{_hp_color(hp)}"></div></div>')


def _active_card(side: str, name: str, snap: SideSnapshot | None) -> str:
    """The side's active Pokémon (public HP), with the team's mean HP under it."""
    color = SIDE_COLORS[side]
    if snap is None or snap.active is None:
        body = '<div class="wc-muted">no active Pokémon</div>'
    else:
        hp = public_hp(snap.active_hp)
        fainted = hp == 0
        body = (
            f'<div class="wc-active-row{" wc-fainted" if fainted else ""}">'
            f'{_sprite(snap.active, "wc-sprite wc-sprite-big")}'
            f'<div class="wc-active-info"><div class="wc-mon-name">{esc(snap.active)} {_status_badge(snap.active_status)}</div>'
            f'{_hp_bar(hp)}<div class="wc-hp-text">{"fainted" if fainted else f"{hp}% HP"}</div></div></div>'
        )
    team = ""
    if snap is not None:
        team = f'<div class="wc-muted">team HP {public_team_hp(snap):.0f}% · {snap.fainted} fainted</div>'
    return (f'<div class="wc-card wc-active" style="border-top:4px solid {color}">'
            f'<div class="wc-side-label wc-c-{side}" style="color:{color}">{esc(side)} · {esc(name)}</div>{body}{team}</div>')


def _slot(mon: PokemonSnapshot) -> str:
    classes = ["wc-slot"]
    hp = 0 if mon.fainted else public_hp(mon.hp)
    if mon.fainted:
        classes.append("wc-fainted")
    if mon.active:
        classes.append("wc-slot-active")
    return (f'<div class="{" ".join(classes)}" title="{esc(mon.species)}: {hp}% HP">'
            f'{_sprite(mon.species, "wc-sprite wc-sprite-small")}'
            f'<div class="wc-slot-name">{esc(mon.species)}</div>{_hp_bar(hp)}'
            f'<div class="wc-slot-hp">{"fainted" if mon.fainted else f"{hp}%"} {_status_badge(mon.status)}</div>'
            f'</div>')


UNKNOWN_SLOT = ('<div class="wc-slot wc-unknown" title="not revealed yet"><div class="wc-qmark">?</div>'
                '<div class="wc-slot-name">unknown</div></div>')


def _team_row(side: str, snap: SideSnapshot | None, hide_unrevealed: bool | None) -> str:
    """One side's six slots. ``hide_unrevealed``: True shows unrevealed Pokémon as unknown, False shows them, None
    renders both faces so the viewer's viewpoint switch is a CSS class (``wc-persp-p1``/``-p2``) in the browser."""
    if snap is None:
        return ""
    slots = []
    for mon in snap.team:
        if mon.revealed or mon.fainted or mon.active:
            slots.append(_slot(mon))
        elif hide_unrevealed is None:
            slots.append(f'<div class="wc-unrevealed"><div class="wc-face-real">{_slot(mon)}</div>'
                         f'<div class="wc-face-unknown">{UNKNOWN_SLOT}</div></div>')
        else:
            slots.append(UNKNOWN_SLOT if hide_unrevealed else _slot(mon))
    return (f'<div class="wc-team wc-team-{side}" style="border-left:4px solid {SIDE_COLORS[side]}">'
            f'{"".join(slots)}</div>')


def _narration(sentences: Sequence[Sentence], empty: str) -> str:
    if not sentences:
        return f'<div class="wc-muted">{esc(empty)}</div>'
    items = []
    for s in sentences:
        side_class = f" wc-ev-{s.side}" if s.side in SIDES else ""
        items.append(f'<li class="wc-ev wc-ev-{esc(s.kind)}{side_class}">{esc(s.text)}</li>')
    return f'<ul class="wc-events">{"".join(items)}</ul>'


def _scores(info: Mapping[str, Any], chosen: str | None) -> str:
    """Candidate scores, if the policy reported any (``candidates`` as the checkpoint policies write them:
    ``[{"action", "choice", "logprob", "mean_logprob", …}]``; a ``{name: score}`` dict or pairs also work)."""
    raw = None
    for key in ("candidates", "scores", "candidate_scores"):
        if key in info:
            raw = info[key]
            break
    rows: list[tuple[int, str, Any, Any]] = []
    if isinstance(raw, Mapping):
        rows = [(i, str(k), v, None) for i, (k, v) in enumerate(raw.items())]
    elif isinstance(raw, list):
        for i, item in enumerate(raw[:200]):
            if isinstance(item, Mapping):
                name = item.get("choice") or item.get("text") or item.get("name") or item.get("action")
                if name is None:
                    continue
                kind = item.get("action") if item.get("choice") is not None else None
                label = f"{kind} {name}" if kind in ("move", "switch") else str(name)
                score = next((item[k] for k in ("logprob", "score", "sum", "prob") if k in item), None)
                rows.append((i, label, score, item.get("mean_logprob", item.get("mean"))))
            elif isinstance(item, (list, tuple)) and len(item) >= 2:
                rows.append((i, str(item[0]), item[1], None))
    if not rows:
        return ""
    chosen_index = info.get("chosen") if isinstance(info.get("chosen"), int) else None
    has_mean = any(isinstance(r[3], (int, float)) for r in rows)

    def number(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "" if value is None else _cut(json.dumps(value, default=str), 120)
        return f"{value:.4f}"

    def sort_key(row: tuple[int, str, Any, Any]) -> float:
        return -float(row[2]) if isinstance(row[2], (int, float)) and not isinstance(row[2], bool) else 0.0

    rows.sort(key=sort_key)
    body = []
    for i, name, score, mean in rows[:12]:
        picked = i == chosen_index if chosen_index is not None else (
            chosen is not None and name.lower().endswith(chosen.lower()))
        mark = ' class="wc-chosen"' if picked else ""
        mean_cell = f"<td class='wc-num'>{esc(number(mean))}</td>" if has_mean else ""
        body.append(f"<tr{mark}><td>{esc(name)}</td><td class='wc-num'>{esc(number(score))}</td>{mean_cell}</tr>")
    more = f'<div class="wc-muted">… {len(rows) - 12} more</div>' if len(rows) > 12 else ""
    head = "<th>candidate</th><th>log-prob</th>" + ("<th>per token</th>" if has_mean else "")
    return (f'<div class="wc-subhead">Candidate scores</div><table class="wc-table"><tr>{head}</tr>'
            f'{"".join(body)}</table>{more}')


PENDING_REWARD = "shown with what followed, once the simulator reaches the next decision"


def _reward_table(decision: SideDecision, settled: bool) -> str:
    if not settled:
        return (f'<div class="wc-subhead">Reward for this decision</div>'
                f'<div class="wc-muted wc-pending">Still to come: {PENDING_REWARD}.</div>')
    reward = decision.reward
    rows = "".join(
        f"<tr><td>{esc(name)}</td><td class='wc-num'>{value:+.3f}</td></tr>"
        for name, value in reward.components.items()
    )
    rows += f"<tr class='wc-total'><td>shaped total</td><td class='wc-num'>{reward.total:+.3f}</td></tr>"
    if reward.outcome:
        rows += f"<tr class='wc-total'><td>outcome</td><td class='wc-num'>{reward.outcome:+.3f}</td></tr>"
    return f'<div class="wc-subhead">Reward for this decision</div><table class="wc-table">{rows}</table>'


def action_text(decision: SideDecision) -> str:
    """What a side did, in words: "move Ice Beam", "switch to Pikachu", "simulator default"."""
    if decision.action is None:
        return "simulator default"
    if decision.action.action == "switch":
        return f"switch to {decision.action.choice}"
    if decision.action.action == "team":
        return f"lead with {decision.action.choice}"
    return f"{decision.action.action} {decision.action.choice}"


def _details(key: str, summary: str, body: str) -> str:
    """A collapsible block; ``data-key`` lets the viewer keep it open or closed across steps and live updates."""
    return (f'<details class="wc-details" data-key="{key}"><summary>{summary}</summary>'
            f'<pre class="wc-pre">{body}</pre></details>')


def _rescore_lines(lines: Sequence[str]) -> str:
    """What stored rescores say about this decision (``rescore.panel_line``, one line per policy asked)."""
    if not lines:
        return ""
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return f'<div class="wc-rescore"><div class="wc-subhead">Asked afterwards</div><ul>{items}</ul></div>'


def _decision_panel(side: str, name: str, decision: SideDecision, settled: bool, text_limit: int,
                    notes: Sequence[str] = ()) -> str:
    color = SIDE_COLORS[side]
    if decision.illegal:
        reason = f": {decision.illegal_reason}" if decision.illegal_reason else ""
        badge = f'<span class="wc-badge wc-illegal" title="{esc(decision.illegal_reason or "")}">illegal{esc(_cut(reason, 160))}</span>'
    else:
        badge = '<span class="wc-badge wc-legal">legal</span>'
    chosen = decision.action.choice if decision.action else None
    rejected = ""
    if decision.rejected:
        rejected = f'<div class="wc-muted">refused by the simulator first: {esc(", ".join(decision.rejected))}</div>'
    raw = ""
    if decision.raw_output is not None:
        raw = f'<div class="wc-subhead">Raw output</div><pre class="wc-pre wc-raw">{esc(_cut(decision.raw_output, 4000))}</pre>'
    info = {k: v for k, v in decision.policy_info.items()
            if k not in ("scores", "candidate_scores", "candidates", "prompt")}
    extras = ""
    if info:
        extras = _details(f"info-{side}", "Policy details", esc(_cut(json.dumps(info, indent=1, default=str), 4000)))
    prompt = decision.policy_info.get("prompt")
    prompt_html = ""
    if isinstance(prompt, str) and prompt:
        prompt_html = _details(f"prompt-{side}", "Full prompt", esc(_cut(prompt, text_limit)))
    latency = "not measured" if decision.latency_ms is None else f"{decision.latency_ms:.1f} ms"  # imports
    return (
        f'<div class="wc-card wc-decision wc-dec-{side}" style="border-top:4px solid {color}">'
        f'<div class="wc-side-label wc-c-{side}" style="color:{color}">{esc(side)} · {esc(name)} decided</div>'
        f'<div class="wc-action">{esc(action_text(decision))} {badge}</div>'
        f'<div class="wc-muted">command <code>{esc(decision.command or "unknown")}</code> · latency {latency}'
        f' · {len(decision.legal_actions)} legal options</div>{rejected}{_rescore_lines(notes)}'
        f'{_scores(decision.policy_info, chosen)}{_reward_table(decision, settled)}{raw}'
        f'{_details(f"state-{side}", "State it saw", esc(_cut(decision.seen(), text_limit)))}'
        f'{prompt_html}{extras}</div>'
    )


def _secret_panel(side: str, name: str) -> str:
    """The other side's decision while a person plays against it: nothing it knew or chose, one line why."""
    color = SIDE_COLORS[side]
    return (f'<div class="wc-card wc-decision wc-dec-{side} wc-dec-secret" style="border-top:4px solid {color}">'
            f'<div class="wc-side-label wc-c-{side}" style="color:{color}">{esc(side)} · {esc(name)} decided</div>'
            '<div class="wc-muted">What it saw and chose stays hidden until the battle ends: you see what it did '
            'in the narration, as in a real battle.</div></div>')


# --------------------------------------------------------------------------------------------------------------
# The end of the battle
# --------------------------------------------------------------------------------------------------------------
def _same_mon(name: str, species: str) -> bool:
    a, b = _to_id(name), _to_id(species)
    return bool(a) and (a == b or b.startswith(a) or a.startswith(b))


def end_snapshot(snap: SideSnapshot | None, side: str, hp: Mapping[str, float],
                 active: str | None) -> SideSnapshot | None:
    """The last decision's snapshot of one side brought forward to the end of the log: the narrator's public HP
    for every Pokémon the log mentions (``hp`` keyed ``"p1:Name"``), fainted at 0, and the last one sent out."""
    if snap is None:
        return None
    team = []
    for mon in snap.team:
        known = next((v for k, v in hp.items() if k.split(":", 1)[0] == side and _same_mon(k.split(":", 1)[1],
                                                                                           mon.species)), None)
        now = mon.hp if known is None else known
        is_active = _same_mon(active, mon.species) if active else mon.active
        team.append(mon.model_copy(update={"hp": now, "fainted": mon.fainted or now <= 0, "active": is_active,
                                           "revealed": mon.revealed or is_active}))
    current = next((m for m in team if m.active), None)
    return snap.model_copy(update={
        "team": team, "fainted": sum(1 for m in team if m.fainted),
        "active": current.species if current else snap.active,
        "active_hp": current.hp if current else snap.active_hp,
        "team_hp": round(mean_team_hp([0.0 if m.fainted else m.hp for m in team]), 2),
    })


# --------------------------------------------------------------------------------------------------------------
# The view
# --------------------------------------------------------------------------------------------------------------
def _cumulative(turns: Sequence[TurnRecord]) -> dict[str, list[float]]:
    series: dict[str, list[float]] = {s: [] for s in SIDES}
    for record in turns:
        for side in SIDES:
            previous = series[side][-1] if series[side] else 0.0
            decision = record.decisions.get(side)
            gained = decision.reward.total + decision.reward.outcome if decision is not None else 0.0
            series[side].append(round(previous + gained, 4))
    return series


@dataclass
class BattleView:
    """A battle as the viewer shows it; grows turn by turn while live (``add``), completed by ``finish``.

    Steps are the decisions, then (once finished) one end-of-battle step: ``steps`` counts both.
    """

    meta: BattleMeta
    turns: list[TurnRecord] = field(default_factory=list)
    narration: list[list[Sentence]] = field(default_factory=list)
    tail: list[Sentence] | None = None
    _narrator: Narrator | None = None
    _hp: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SIDES})
    _x: list[int] = field(default_factory=list)
    _end: dict[Side, SideSnapshot | None] | None = None
    _shown: list[dict[Side, SideSnapshot | None]] = field(default_factory=list)
    """Each decision's snapshots with the spectator log's HP (``end_snapshot``): the view's one HP source."""
    notes: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    """Lines stored rescores add to decision panels: ``{decision index: {side: [line, …]}}``."""
    display: dict[str, str] = field(default_factory=dict)
    """Names shown instead of the recorded ones (``rename``), kept when the battle finishes."""

    def __post_init__(self) -> None:
        self._narrator = Narrator(names=dict(self.meta.names))
        pending = list(self.turns)
        self.turns = []
        for record in pending:
            self.add(record)

    @classmethod
    def of(cls, recording: Recording) -> "BattleView":
        view = cls(BattleMeta.of(recording), list(recording.turns))
        view.finish(recording)
        return view

    def __len__(self) -> int:
        return len(self.turns)

    def with_notes(self, notes: dict[int, dict[str, list[str]]]) -> "BattleView":
        """The same finished battle with rescore lines in its decision panels (a shallow copy: the cached view
        itself is never changed, and nothing is narrated again)."""
        other = copy.copy(self)
        other.notes = notes
        return other

    @property
    def finished(self) -> bool:
        return self.meta.result is not None

    @property
    def steps(self) -> int:
        """Decisions, plus the end-of-battle step once the battle is over."""
        return len(self.turns) + (1 if self.finished and self._end is not None else 0)

    def settled(self, index: int) -> bool:
        """Whether what followed decision ``index`` is known (the next decision arrived, or the battle ended)."""
        return self.finished or index + 1 < len(self.turns)

    # --- growing -----------------------------------------------------------------------------------------
    def add(self, record: TurnRecord) -> None:
        assert self._narrator is not None
        self.turns.append(record)
        self.narration.append(self._narrator.feed(record.events))
        self._x.append(record.turn)
        # One HP source per view: the spectator log, as narrated up to this decision (the snapshot's one-decimal
        # percent only where the log has not told a Pokémon's HP yet), written by ``public_hp`` everywhere.
        hp = dict(self._narrator.hp)
        shown = {side: end_snapshot(record.snapshot.get(side), side, hp, None) for side in SIDES}
        self._shown.append(shown)
        for side in SIDES:
            self._hp[side].append(public_team_hp(shown[side]))

    def finish(self, recording: Recording) -> None:
        """Take the final result and narrate what happened after the last decision point."""
        assert self._narrator is not None
        self.meta = BattleMeta.of(recording)
        if self.display:
            self.meta = replace(self.meta, names={**self.meta.names, **self.display})
        consumed = sum(len(t.events) for t in self.turns)
        tail_lines = recording.log[consumed:] if consumed <= len(recording.log) else []
        self.tail = self._narrator.feed(tail_lines)
        if self.turns:
            last = self.turns[-1]
            self._end = {side: end_snapshot(last.snapshot.get(side), side, self._narrator.hp,
                                            self._narrator.active.get(side)) for side in SIDES}
        else:  # ended before any decision (a forfeit at team preview): the end is its one step, with its result
            self._end = {side: None for side in SIDES}

    # --- numbers the charts and the turn list use ------------------------------------------------------------
    def series(self) -> dict[str, Any]:
        """x (turn of each step), team HP and cumulative reward per side, one value per step (end step included)."""
        x = list(self._x)
        hp = {s: list(v) for s, v in self._hp.items()}
        reward = _cumulative(self.turns)
        if self.steps > len(self.turns):
            end_turn = int((self.meta.result or {}).get("turns") or (x[-1] if x else 0))
            x.append(max(end_turn, x[-1] if x else 0))
            for side in SIDES:
                hp[side].append(public_team_hp(self._end.get(side)) if self._end else hp[side][-1])
                reward[side].append(reward[side][-1] if reward[side] else 0.0)
        return {"x": x, "hp": hp, "reward": reward}

    def step_turn(self, index: int) -> int:
        if index >= len(self.turns):
            return int((self.meta.result or {}).get("turns") or (self.turns[-1].turn if self.turns else 0))
        return self.turns[index].turn

    def clamp(self, index: int) -> int:
        return max(0, min(int(index), self.steps - 1)) if self.steps else 0

    # --- rendering ---------------------------------------------------------------------------------------
    def _header(self, inner: str) -> str:
        meta = self.meta
        names = {s: meta.names.get(s, s) for s in SIDES}
        return (f'<div class="wc-header"><span class="wc-title">{esc(meta.format)}</span> · '
                f'<span class="wc-c-p1" style="color:{SIDE_COLORS["p1"]}">{esc(names["p1"])}</span> vs '
                f'<span class="wc-c-p2" style="color:{SIDE_COLORS["p2"]}">{esc(names["p2"])}</span>{inner}</div>')

    def _field(self, snaps: Mapping[Side, SideSnapshot | None], perspective: str | None) -> str:
        names = {s: self.meta.names.get(s, s) for s in SIDES}
        hide = {side: None if perspective is None else perspective != side for side in SIDES}
        return (f'<div class="wc-field">{_active_card("p1", names["p1"], snaps.get("p1"))}'
                f'<div class="wc-vs">vs</div>{_active_card("p2", names["p2"], snaps.get("p2"))}</div>'
                f'<div class="wc-teams">{_team_row("p1", snaps.get("p1"), hide["p1"])}'
                f'{_team_row("p2", snaps.get("p2"), hide["p2"])}</div>')

    def html(self, index: int, perspective: str | None = "p1", text_limit: int = MAX_TEXT,
             secret: str | None = None) -> str:
        """One step as HTML. ``perspective`` None renders both viewpoints (the browser picks one by CSS).

        ``secret``: the side whose private knowledge is withheld from this page (a person plays the other side and
        the battle is not over): its unrevealed Pokémon are not in the HTML at all (no CSS trick to undo) and its
        decision panel (state, prompt, scores, output, even the choice) is replaced by one line."""
        if secret in SIDES:
            perspective = other(secret)
        if not self.turns and not self.steps:
            return (f'<div class="wc-view">{self._header("")}'
                    f'<div class="wc-card wc-muted">Waiting for the first decision…</div></div>')
        index = self.clamp(index)
        if index >= len(self.turns):
            return self._end_html(index, perspective)
        record = self.turns[index]
        names = {s: self.meta.names.get(s, s) for s in SIDES}
        settled = self.settled(index)
        header = self._header(
            f'<span class="wc-turn" data-turn="{record.turn}" data-step="{index}">Turn {record.turn}</span>'
            f'<span class="wc-muted">decision {index + 1} of {len(self.turns)}{"" if self.finished else " so far"}'
            f' · {esc(result_text(self.meta.result, self.meta.names))}</span>')
        before = _narration(self.narration[index], "Nothing happened since the previous decision.")
        if index + 1 < len(self.turns):
            after = _narration(self.narration[index + 1], "Nothing happened before the next decision.")
        elif self.tail is not None:
            after = _narration(self.tail, "The battle ended.")
        else:
            after = ('<div class="wc-muted wc-pending">Still to come: what follows is shown once the simulator '
                     'reaches the next decision.</div>')
        story = (f'<div class="wc-story"><div class="wc-card"><div class="wc-subhead">Leading up to this decision</div>'
                 f'{before}</div><div class="wc-card"><div class="wc-subhead">What followed</div>{after}</div></div>')
        order = list(SIDES) if perspective in (None, "p1") else list(reversed(SIDES))
        panels = "".join(
            _secret_panel(side, names[side]) if side == secret else
            _decision_panel(side, names[side], record.decisions[side], settled, text_limit,
                            self.notes.get(index, {}).get(side, ()))
            for side in order if side in record.decisions
        )
        if not panels:
            panels = '<div class="wc-card wc-muted">No side had to decide here.</div>'
        return (f'<div class="wc-view">{header}{self._field(self._shown[index], perspective)}{story}'
                f'<div class="wc-decisions">{panels}</div></div>')

    def _end_html(self, index: int, perspective: str | None) -> str:
        turn = self.step_turn(index)
        header = self._header(
            f'<span class="wc-turn" data-turn="{turn}" data-step="{index}">End</span>'
            f'<span class="wc-muted">{esc(result_text(self.meta.result, self.meta.names))}</span>')
        story = (f'<div class="wc-story"><div class="wc-card"><div class="wc-subhead">After the last decision</div>'
                 f'{_narration(self.tail or [], "Nothing happened after the last decision.")}</div></div>')
        return f'<div class="wc-view wc-end">{header}{self._field(self._end or {}, perspective)}{story}</div>'

    def rename(self, names: Mapping[str, str]) -> None:
        """Show some sides under other names from now on (a person's side is "You"), the narration included."""
        if not names:
            return
        merged = {**self.meta.names, **names}
        self.display = dict(names)
        self.meta = replace(self.meta, names=merged)
        assert self._narrator is not None
        self._narrator.names.update(names)

    def turn_row(self, index: int, secret: str | None = None) -> dict[str, Any]:
        """One line of the turn list: turn, both actions (not the ``secret`` side's), the knockouts that followed."""
        if index >= len(self.turns):
            return {"turn": self.step_turn(index), "label": "End", "p1": "", "p2": "",
                    "kos": [s.text for s in (self.tail or []) if s.kind == "faint"],
                    "text": result_text(self.meta.result, self.meta.names)}
        record = self.turns[index]
        followed = self.narration[index + 1] if index + 1 < len(self.turns) else (self.tail or [])
        acts: dict[str, str] = {side: ("hidden" if side == secret else action_text(record.decisions[side]))
                if side in record.decisions else "" for side in SIDES}
        return {"turn": record.turn, "label": f"T{record.turn}", **acts,
                "kos": [s.text for s in followed if s.kind == "faint"] if self.settled(index) else [], "text": ""}

    def render(self, index: int, perspective: str = "p1") -> str:
        """One step as HTML for one viewpoint (the API's form)."""
        return self.html(index, perspective if perspective in SIDES else "p1")


def render_turn(meta: BattleMeta | Recording, turns: Iterable[TurnRecord] | None, index: int,
                perspective: str = "p1") -> str:
    """One step of a battle as HTML. Pass a Recording, or a BattleMeta and the turns so far (live)."""
    if isinstance(meta, Recording):
        view = BattleView.of(meta)
    else:
        view = BattleView(meta, list(turns or []))
    return view.render(index, perspective)
