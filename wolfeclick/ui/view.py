"""The battle view: TurnRecords → one HTML string and two Plotly figures. Pure; no Gradio, no I/O.

Live battles and replays use exactly this code on exactly the same ``TurnRecord`` objects. ``BattleView`` holds
what is worth computing once per battle (the narration of every turn, the chart series) so that rendering one turn
of a 300-turn battle costs a few milliseconds; ``render_turn`` is the one-call form.

Every string that comes from a recording (names, species, raw model output, state text, protocol lines) goes
through ``html.escape`` before it reaches the page: recordings can be uploaded, so they are untrusted.
Figures are plain Plotly JSON dicts (``go.Figure(d)`` accepts them); building them as dicts keeps a step cheap.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from wolfeclick.battle.schema import Recording, SideDecision, SideSnapshot, TurnRecord
from wolfeclick.ui.narrate import Narrator, Sentence

__all__ = [
    "BattleMeta",
    "BattleView",
    "render_turn",
    "sprite_url",
    "step_for_turn",
    "SIDE_COLORS",
]

SIDES = ("p1", "p2")
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
    return os.environ.get("WOLFECLICK_SPRITES", "1").strip().lower() not in ("0", "false", "no", "off")


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
            id=recording.id, format=recording.format, seed=recording.seed,
            names={s: p.name for s, p in recording.players.items()},
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


def _hp_bar(hp: float) -> str:
    hp = max(0.0, min(100.0, float(hp)))
    return (f'<div class="wc-hpbar" title="{hp:.0f}% HP"><div class="wc-hpfill" '
            f'style="width:{hp:.1f}%;background:{_hp_color(hp)}"></div></div>')


def _active_card(side: str, name: str, snap: SideSnapshot | None) -> str:
    color = SIDE_COLORS[side]
    if snap is None or snap.active is None:
        body = '<div class="wc-muted">no active Pokémon</div>'
    else:
        hp = snap.active_hp if snap.active_hp is not None else 0.0
        body = (
            f'<div class="wc-active-row">{_sprite(snap.active, "wc-sprite wc-sprite-big")}'
            f'<div class="wc-active-info"><div class="wc-mon-name">{esc(snap.active)} {_status_badge(snap.active_status)}</div>'
            f'{_hp_bar(hp)}<div class="wc-hp-text">{hp:.0f}% HP</div></div></div>'
        )
    team = ""
    if snap is not None:
        team = (f'<div class="wc-muted">team HP {snap.team_hp:.0f}% · {snap.fainted} fainted</div>')
    return (f'<div class="wc-card wc-active" style="border-top:4px solid {color}">'
            f'<div class="wc-side-label" style="color:{color}">{esc(side)} · {esc(name)}</div>{body}{team}</div>')


def _team_row(side: str, snap: SideSnapshot | None, hide_unrevealed: bool) -> str:
    if snap is None:
        return ""
    slots = []
    for mon in snap.team:
        if hide_unrevealed and not mon.revealed and not mon.fainted and not mon.active:
            slots.append('<div class="wc-slot wc-unknown" title="not revealed yet"><div class="wc-qmark">?</div>'
                         '<div class="wc-slot-name">unknown</div></div>')
            continue
        classes = ["wc-slot"]
        if mon.fainted:
            classes.append("wc-fainted")
        if mon.active:
            classes.append("wc-slot-active")
        slots.append(
            f'<div class="{" ".join(classes)}" title="{esc(mon.species)}: {mon.hp:.0f}% HP">'
            f'{_sprite(mon.species, "wc-sprite wc-sprite-small")}'
            f'<div class="wc-slot-name">{esc(mon.species)}</div>{_hp_bar(0.0 if mon.fainted else mon.hp)}'
            f'<div class="wc-slot-hp">{"fainted" if mon.fainted else f"{mon.hp:.0f}%"} {_status_badge(mon.status)}</div>'
            f'</div>'
        )
    return f'<div class="wc-team" style="border-left:4px solid {SIDE_COLORS[side]}">{"".join(slots)}</div>'


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


def _reward_table(decision: SideDecision, final: bool) -> str:
    reward = decision.reward
    rows = "".join(
        f"<tr><td>{esc(name)}</td><td class='wc-num'>{value:+.3f}</td></tr>"
        for name, value in reward.components.items()
    )
    if not reward.components and not final:
        rows = "<tr><td colspan=2 class='wc-muted'>known once the next decision is made</td></tr>"
    rows += f"<tr class='wc-total'><td>shaped total</td><td class='wc-num'>{reward.total:+.3f}</td></tr>"
    if reward.outcome:
        rows += f"<tr class='wc-total'><td>outcome</td><td class='wc-num'>{reward.outcome:+.3f}</td></tr>"
    return f'<div class="wc-subhead">Reward for this decision</div><table class="wc-table">{rows}</table>'


def _decision_panel(side: str, name: str, decision: SideDecision, final: bool) -> str:
    color = SIDE_COLORS[side]
    if decision.illegal:
        reason = f": {decision.illegal_reason}" if decision.illegal_reason else ""
        badge = f'<span class="wc-badge wc-illegal" title="{esc(decision.illegal_reason or "")}">illegal{esc(_cut(reason, 160))}</span>'
    else:
        badge = '<span class="wc-badge wc-legal">legal</span>'
    if decision.action is None:
        action = "simulator default"
    elif decision.action.action == "switch":
        action = f"switch to {decision.action.choice}"
    else:
        action = f"{decision.action.action} {decision.action.choice}"
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
        extras = (f'<details class="wc-details"><summary>Policy details</summary><pre class="wc-pre">'
                  f'{esc(_cut(json.dumps(info, indent=1, default=str), 4000))}</pre></details>')
    prompt = decision.policy_info.get("prompt")
    prompt_html = ""
    if isinstance(prompt, str) and prompt:
        prompt_html = (f'<details class="wc-details"><summary>Full prompt</summary><pre class="wc-pre">'
                       f'{esc(_cut(prompt))}</pre></details>')
    latency = "not measured" if decision.latency_ms is None else f"{decision.latency_ms:.1f} ms"
    return (
        f'<div class="wc-card wc-decision" style="border-top:4px solid {color}">'
        f'<div class="wc-side-label" style="color:{color}">{esc(side)} · {esc(name)} decided</div>'
        f'<div class="wc-action">{esc(action)} {badge}</div>'
        f'<div class="wc-muted">command <code>{esc(decision.command or "unknown")}</code> · latency {latency}'
        f' · {len(decision.legal_actions)} legal options</div>{rejected}'
        f'{_scores(decision.policy_info, chosen)}{_reward_table(decision, final)}{raw}'
        f'<details class="wc-details"><summary>State it saw</summary><pre class="wc-pre">{esc(_cut(decision.state))}</pre></details>'
        f'{prompt_html}{extras}</div>'
    )


def _result_text(meta: BattleMeta) -> str:
    result = meta.result
    if not result:
        return "in progress"
    winner = result.get("winner")
    reason = result.get("reason")
    if winner in SIDES:
        text = f"{meta.names.get(winner, winner)} ({winner}) won"
        if reason == "forfeit":
            text += " by forfeit"
    elif reason == "tie":
        text = "tie"
    elif reason == "turn_limit":
        text = "stopped at the turn limit"
    elif reason == "aborted":
        text = "aborted"
    else:
        text = str(reason)
    text += f" after {result.get('turns', 0)} turns"
    if result.get("error"):
        text += f" ({_cut(str(result['error']), 200)})"
    return text


# --------------------------------------------------------------------------------------------------------------
# The view
# --------------------------------------------------------------------------------------------------------------
def _layout(title: str, y_title: str, y_range: list[float] | None) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": 14}, "x": 0.01, "xanchor": "left"},
        "height": 280,
        "margin": {"l": 50, "r": 40, "t": 36, "b": 70},
        "xaxis": {"title": {"text": "turn", "standoff": 4}, "zeroline": False},
        "yaxis": {"title": {"text": y_title}},
        "legend": {"orientation": "h", "y": -0.32, "x": 0},
        "modebar": {"orientation": "v"},
        "template": "plotly_white",
        "paper_bgcolor": "rgba(0,0,0,0)",
    }
    if y_range:
        layout["yaxis"]["range"] = y_range
    return layout


@dataclass
class BattleView:
    """A battle as the viewer shows it; grows turn by turn while live (``add``), completed by ``finish``."""

    meta: BattleMeta
    turns: list[TurnRecord] = field(default_factory=list)
    narration: list[list[Sentence]] = field(default_factory=list)
    tail: list[Sentence] | None = None
    _narrator: Narrator | None = None
    _hp: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SIDES})
    _reward: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SIDES})
    _x: list[int] = field(default_factory=list)
    _end_hp: dict[str, float] | None = None

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

    # --- growing -----------------------------------------------------------------------------------------
    def add(self, record: TurnRecord) -> None:
        assert self._narrator is not None
        self.turns.append(record)
        self._narrator.hp_delta = {s: 0.0 for s in SIDES}
        self.narration.append(self._narrator.feed(record.events))
        self._x.append(record.turn)
        for side in SIDES:
            snap = record.snapshot.get(side)
            self._hp[side].append(snap.team_hp if snap is not None else (self._hp[side][-1] if self._hp[side] else 100.0))
            previous = self._reward[side][-1] if self._reward[side] else 0.0
            decision = record.decisions.get(side)
            gained = decision.reward.total + decision.reward.outcome if decision is not None else 0.0
            self._reward[side].append(round(previous + gained, 4))

    def finish(self, recording: Recording) -> None:
        """Take the final result and narrate what happened after the last decision point."""
        assert self._narrator is not None
        self.meta = BattleMeta.of(recording)
        consumed = sum(len(t.events) for t in self.turns)
        tail_lines = recording.log[consumed:] if consumed <= len(recording.log) else []
        self._narrator.hp_delta = {s: 0.0 for s in SIDES}
        self.tail = self._narrator.feed(tail_lines)
        if self.turns:
            last = self.turns[-1]
            self._end_hp = {}
            for side in SIDES:
                snap = last.snapshot.get(side)
                base = snap.team_hp if snap is not None else 100.0
                self._end_hp[side] = round(max(0.0, min(100.0, base + self._narrator.hp_delta[side] / 6.0)), 1)
        # rewards settled after the last decision changed records' totals; recompute the cumulative series
        self._reward = {s: [] for s in SIDES}
        for record in self.turns:
            for side in SIDES:
                previous = self._reward[side][-1] if self._reward[side] else 0.0
                decision = record.decisions.get(side)
                gained = decision.reward.total + decision.reward.outcome if decision is not None else 0.0
                self._reward[side].append(round(previous + gained, 4))

    # --- rendering ---------------------------------------------------------------------------------------
    def clamp(self, index: int) -> int:
        return max(0, min(int(index), len(self.turns) - 1)) if self.turns else 0

    def html(self, index: int, perspective: str = "p1") -> str:
        meta = self.meta
        names = {s: meta.names.get(s, s) for s in SIDES}
        header_title = (f'<span class="wc-title">{esc(meta.format)}</span> · '
                        f'<span style="color:{SIDE_COLORS["p1"]}">{esc(names["p1"])}</span> vs '
                        f'<span style="color:{SIDE_COLORS["p2"]}">{esc(names["p2"])}</span>')
        if not self.turns:
            return (f'<div class="wc-view"><div class="wc-header">{header_title}</div>'
                    f'<div class="wc-card wc-muted">Waiting for the first decision…</div></div>')
        index = self.clamp(index)
        record = self.turns[index]
        final = meta.result is not None
        opponent = "p2" if perspective == "p1" else "p1"
        header = (
            f'<div class="wc-header">{header_title}'
            f'<span class="wc-turn" data-turn="{record.turn}" data-step="{index}">Turn {record.turn}</span>'
            f'<span class="wc-muted">decision {index + 1} of {len(self.turns)}'
            f'{"" if final else " so far"} · {esc(_result_text(meta))}</span></div>'
        )
        field_html = (f'<div class="wc-field">{_active_card("p1", names["p1"], record.snapshot.get("p1"))}'
                      f'<div class="wc-vs">vs</div>{_active_card("p2", names["p2"], record.snapshot.get("p2"))}</div>')
        teams = (f'<div class="wc-teams">{_team_row("p1", record.snapshot.get("p1"), perspective != "p1")}'
                 f'{_team_row("p2", record.snapshot.get("p2"), opponent == "p2")}</div>')
        before = _narration(self.narration[index], "Nothing happened since the previous decision.")
        if index + 1 < len(self.turns):
            after = _narration(self.narration[index + 1], "Nothing happened before the next decision.")
        elif self.tail is not None:
            after = _narration(self.tail, "The battle ended.")
        else:
            after = '<div class="wc-muted">Waiting for the simulator…</div>'
        story = (f'<div class="wc-story"><div class="wc-card"><div class="wc-subhead">Leading up to this decision</div>'
                 f'{before}</div><div class="wc-card"><div class="wc-subhead">What followed</div>{after}</div></div>')
        order = [perspective, opponent]
        panels = "".join(
            _decision_panel(side, names[side], record.decisions[side], final or index + 1 < len(self.turns))
            for side in order if side in record.decisions
        )
        if not panels:
            panels = '<div class="wc-card wc-muted">No side had to decide here.</div>'
        return (f'<div class="wc-view">{header}{field_html}{teams}{story}'
                f'<div class="wc-decisions">{panels}</div></div>')

    def _series_figure(self, series: Mapping[str, list[float]], index: int, title: str, y_title: str,
                       y_range: list[float] | None, end: Mapping[str, float] | None) -> dict[str, Any]:
        index = self.clamp(index)
        x = list(self._x)
        data = []
        end_x = (self.meta.result or {}).get("turns", x[-1] if x else 0) if end else None
        for side in SIDES:
            ys = list(series[side])
            xs = list(x)
            if end is not None and x:
                xs.append(end_x)
                ys.append(end[side])
            data.append({
                "type": "scatter", "mode": "lines", "name": f"{side} · {self.meta.names.get(side, side)}",
                "x": xs, "y": ys, "line": {"color": SIDE_COLORS[side], "shape": "hv"},
                "hovertemplate": "turn %{x}: %{y:.1f}<extra>" + side + "</extra>",
            })
        layout = _layout(title, y_title, y_range)
        if x:
            current = x[index]
            data.append({
                "type": "scatter", "mode": "markers", "name": "this turn", "showlegend": False,
                "x": [current, current], "y": [series["p1"][index], series["p2"][index]],
                "marker": {"size": 10, "color": [SIDE_COLORS["p1"], SIDE_COLORS["p2"]],
                           "line": {"width": 2, "color": "#111"}},
                "hoverinfo": "skip",
            })
            layout["shapes"] = [{"type": "line", "xref": "x", "yref": "paper", "x0": current, "x1": current,
                                 "y0": 0, "y1": 1, "line": {"color": "#6b7280", "dash": "dot", "width": 2}}]
        return {"data": data, "layout": layout}

    def hp_figure(self, index: int) -> dict[str, Any]:
        return self._series_figure(self._hp, index, "Team HP over the battle", "mean HP % (6 slots)", [0, 105],
                                   self._end_hp)

    def reward_figure(self, index: int) -> dict[str, Any]:
        return self._series_figure(self._reward, index, "Cumulative reward", "reward", None, None)

    def render(self, index: int, perspective: str = "p1") -> tuple[str, dict[str, Any], dict[str, Any]]:
        return self.html(index, perspective), self.hp_figure(index), self.reward_figure(index)


def render_turn(meta: BattleMeta | Recording, turns: Iterable[TurnRecord] | None, index: int,
                perspective: str = "p1") -> tuple[str, dict[str, Any], dict[str, Any]]:
    """One turn of a battle as (html, team-HP figure, cumulative-reward figure). Pass a Recording, or a
    BattleMeta and the turns so far (live)."""
    if isinstance(meta, Recording):
        view = BattleView.of(meta)
    else:
        view = BattleView(meta, list(turns or []))
    return view.render(index, perspective)
