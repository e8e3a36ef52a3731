"""Small tournaments for the Compare tab: an adapter over ``wolfeclick.arena.tournament``. No Gradio.

A comparison is a ``TournamentConfig`` run by ``run_tournament`` (results as JSON lines under
``results/<tournament id>/``, resumable, with Wilson intervals and Bradley–Terry ratings); each finished battle is
passed back as it arrives so the page can redraw. Its recordings go to the replay library, so every battle in the
battles table is one click from the Replays tab.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Sequence

from wolfeclick.arena import tournament as tournaments
from wolfeclick.arena.engines import make_engine
from wolfeclick.arena.intervals import bounds_text
from wolfeclick.arena.results import ResultRow
from wolfeclick.arena.schedule import build_schedule
from wolfeclick.arena.standings import charts_from_rows, summary_from_rows
from wolfeclick.battle.live_battles import LiveError, PolicyCache, builds_once, check_format
from wolfeclick.battle.schema import is_valid_id
from wolfeclick.battle.stream import Stream
from wolfeclick.errors import WolfeClickError, whole_on_one_line
from wolfeclick.ui.presentation import compare_label, verdict_rows

__all__ = ["CompareUpdate", "run_compare", "load_compare", "list_compares", "TABLE_HEADERS", "BATTLE_HEADERS",
           "VERDICT_HEADERS"]

VERDICT_HEADERS = ["pairing", "verdict", "favoured", "why", "more pairs needed"]
TABLE_HEADERS = ["policy", "battles", "wins", "losses", "ties", "win rate", "95% CI", "rating", "rating 95% CI"]
BATTLE_HEADERS = ["#", "p1", "p2", "winner", "ended", "turns", "replay"]
MAX_POLICIES = 8
MAX_BATTLES_PER_PAIRING = 200
LIVE_BOOTSTRAP_ROUNDS = 100
"""Bootstrap refits while results stream in (the final summary uses the tournament module's full count)."""


@dataclass
class CompareUpdate:
    done: int
    total: int
    message: str
    table: list[list[Any]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    finished: bool = False
    tournament: str | None = None
    battles: list[list[Any]] = field(default_factory=list)
    """One row per finished battle (``BATTLE_HEADERS``), the last cell a link that opens its replay."""
    verdicts: list[list[str]] = field(default_factory=list)
    """Per pairing (``VERDICT_HEADERS``), when the tournament summary carries verdicts."""


def check_specs(specs: Sequence[str]) -> list[str]:
    cleaned: list[str] = []
    for spec in specs:
        spec = (spec or "").strip()
        if spec and spec not in cleaned:
            if len(spec) > 300:
                raise LiveError("a policy spec is too long")
            cleaned.append(spec)
    if len(cleaned) < 2:
        raise LiveError("choose at least two different policies to compare")
    if len(cleaned) > MAX_POLICIES:
        raise LiveError(f"compare at most {MAX_POLICIES} policies at once")
    return cleaned


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _table_from_summary(summary: Any) -> list[list[Any]]:
    rows = []
    for row in summary.table:
        rows.append([row.policy, row.battles, row.wins, row.losses, row.ties, _pct(row.win_rate),
                     f"{_pct(row.ci_low)}–{_pct(row.ci_high)}", f"{row.rating:.0f}",
                     bounds_text(row.rating_low, row.rating_high, row.rating_open)])
    return rows


def _battle_rows(rows: list[ResultRow]) -> list[list[Any]]:
    """Finished battles in schedule order; recording ids are safe names, so the link needs no escaping."""
    table = []
    for row in sorted(rows, key=lambda r: r["index"]):
        link = f"[open](?replay={row['recording']})" if is_valid_id(row["recording"]) else ""
        table.append([row["index"], row["p1"], row["p2"], row["winner"] or "–", row["reason"], row["turns"], link])
    return table


def _verdicts(summary: Any) -> list[list[str]]:
    """The verdict table: the arena's ``verdict_rows`` when it has one, else read from the summary's dict."""
    try:
        data = summary.to_dict()
    except AttributeError:
        data = summary if isinstance(summary, dict) else {}
    return verdict_rows(data)


def _notes(summary: Any) -> str:
    """The summary's notes (too few battles, a failed Bradley–Terry fit, fixed-sample verdicts), one per line."""
    def plain(text: str) -> str:  # policy names are typed or read from files: text, never Markdown or HTML
        return re.sub(r"([\\`*_{}\[\]()#+!|~>-])", r"\\\1", html.escape(text, quote=False))

    return "".join(f"\n\n*Note:* {plain(note)}" for note in getattr(summary, "notes", []))


def _figures(rows: list[ResultRow], summary: Any, config: Any) -> dict[str, Any]:
    charts = charts_from_rows(rows, summary, config)
    return {key: charts.get(key) for key in ("win_rate", "heatmap", "ratings")}


async def run_compare(
    specs: Sequence[str],
    battles_per_pairing: int,
    format_id: str,
    seed: int,
    *,
    cache: PolicyCache,
    out_dir: Path,
    recordings: Path,
    mode: str = "score",
    concurrency: int | None = None,
    stop: asyncio.Event | None = None,
    engine: str = "local",
    max_battles: int | None = None,
) -> AsyncIterator[CompareUpdate]:
    """Play every pairing of ``specs``; yield an update after each battle (and one at the start). Results go
    to ``out_dir/<tournament id>/``, recordings to ``recordings``. ``engine``: ``local`` or ``ray`` (a local Ray
    instance; the same results). ``max_battles``: a tournament of more battles is refused before any is played."""
    specs = check_specs(specs)
    format_id = check_format(format_id)
    battles_per_pairing = int(battles_per_pairing)
    if not 1 <= battles_per_pairing <= MAX_BATTLES_PER_PAIRING:
        raise LiveError(f"battles per pairing must be between 1 and {MAX_BATTLES_PER_PAIRING}")
    concurrency = concurrency or max(1, min(4, os.cpu_count() or 1))
    try:  # every spec checked with the config, before the first checkpoint loads
        config = tournaments.TournamentConfig(players=tuple(specs), pairs=max(1, (battles_per_pairing + 1) // 2),
                                              format=format_id, seed=seed).checked(mode=mode)
    except WolfeClickError as exc:
        raise LiveError(whole_on_one_line(exc)) from None
    planned = len(build_schedule(config))
    if max_battles is not None and planned > max_battles:
        raise LiveError(f"that is {planned} battles; this app plays at most {max_battles} in one comparison "
                        "(fewer policies or battles per pairing)")
    # checkpoints come from the shared cache (loaded once for Live and Compare alike)
    policies = {}
    for spec in specs:
        if not cache.loaded(spec, mode) and builds_once(spec):  # a checkpoint: loading takes a while
            yield CompareUpdate(0, 0, f"Loading {spec}…")
        policies[spec] = await asyncio.to_thread(cache.build, spec, mode)
    try:
        chosen = make_engine(engine)
    except WolfeClickError as exc:
        raise LiveError(whole_on_one_line(exc)) from None
    async for update in _run_tournament(config, policies, mode, concurrency, stop, out_dir, recordings, chosen):
        yield update


async def _run_tournament(config: tournaments.TournamentConfig, policies: dict[str, Any], mode: str,
                          concurrency: int, stop: asyncio.Event | None, out_dir: Path, recordings: Path,
                          engine: Any = None) -> AsyncIterator[CompareUpdate]:
    stream: Stream[tuple[str, Any]] = Stream()
    totals = {"done": 0, "total": 0}

    def on_start(done: int, total: int) -> None:
        totals.update(done=done, total=total)

    def on_result(row: ResultRow, done: int, total: int) -> None:
        totals.update(done=done, total=total)
        stream.put(("row", row))

    async def play() -> None:  # what it raises is raised where the page reads: a WolfeClickError as one line
        try:
            summary = await tournaments.run_tournament(
                config, out_dir, concurrency=concurrency, resume=True, recordings_dir=recordings,
                policies=policies,
                llm_options={"mode": mode}, on_start=on_start, on_result=on_result, stop=stop, engine=engine)
        except WolfeClickError as exc:
            raise LiveError(f"the tournament stopped: {whole_on_one_line(exc)}") from None
        stream.put(("end", summary))

    stream.spawn(play())
    rows: list[ResultRow] = []
    try:
        # earlier rows of a resumed tournament
        _, previous = tournaments.load_results(tournaments.tournament_dir(out_dir, config)) \
            if (tournaments.tournament_dir(out_dir, config) / tournaments.CONFIG_FILE).exists() else (None, [])
        rows.extend(previous)
        yield CompareUpdate(len(rows), len(build_schedule(config)), f"Tournament {config.id}: starting…",
                            tournament=config.id, battles=_battle_rows(rows))
        async for kind, item in stream:
            if kind == "row":
                rows = [r for r in rows if r["index"] != item["index"]] + [item]
                summary = summary_from_rows(rows, config, bootstrap_rounds=LIVE_BOOTSTRAP_ROUNDS)
                yield CompareUpdate(totals["done"], totals["total"],
                                    f"{totals['done']} of {totals['total']} battles played",
                                    _table_from_summary(summary), _figures(rows, summary, config),
                                    tournament=config.id, battles=_battle_rows(rows))
            else:  # the end, with the tournament's summary
                _, rows = tournaments.load_results(tournaments.tournament_dir(out_dir, config))
                summary = item
                state = "complete" if summary.complete else "stopped early (run it again to resume)"
                yield CompareUpdate(summary.battles, totals["total"] or summary.battles,
                                    f"Tournament {config.id}: {summary.battles} battles, {state}. "
                                    f"Results in results/{config.id}/" + _notes(summary),
                                    _table_from_summary(summary), _figures(rows, summary, config),
                                    finished=True, tournament=config.id, battles=_battle_rows(rows),
                                    verdicts=_verdicts(summary))
                return
    finally:
        await stream.aclose()


def list_compares(out_dir: Path) -> list[tuple[str, str]]:
    """(label, tournament id) of earlier comparisons, newest first; the label has the date, the players and the
    battle count (tournament ids alone differ only by a hash)."""
    import datetime

    root = Path(out_dir)
    if not root.is_dir():
        return []
    found = []
    for directory in tournaments.find_tournaments(root):
        if not is_valid_id(directory.name) or directory.is_symlink():
            continue
        try:
            config, rows = tournaments.load_results(directory)
            mtime = directory.stat().st_mtime
        except (ValueError, OSError):
            continue
        date = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        label = compare_label(directory.name, list(config.players + config.vs), config.format, date, len(rows),
                              len(build_schedule(config)))
        found.append((mtime, label, directory.name))
    found.sort(reverse=True)
    return [(label, name) for _, label, name in found]


def load_compare(tournament_id: str, out_dir: Path) -> CompareUpdate:
    """An earlier comparison's table and charts. The id is checked like a replay id and resolved inside results/."""
    root = Path(out_dir).resolve()
    if not isinstance(tournament_id, str) or not is_valid_id(tournament_id.strip()):
        raise LiveError("invalid tournament id")
    directory = root / tournament_id.strip()
    if directory.resolve().parent != root or not (directory / tournaments.CONFIG_FILE).is_file():
        raise LiveError("no such tournament")
    try:
        config, rows = tournaments.load_results(directory)
    except ValueError as exc:
        raise LiveError(whole_on_one_line(exc)) from None
    summary = summary_from_rows(rows, config)
    state = "complete" if summary.complete else "incomplete (run it again to resume)"
    return CompareUpdate(summary.battles, summary.scheduled or summary.battles,
                         f"Tournament {config.id}: {summary.battles} battles, {state}." + _notes(summary),
                         _table_from_summary(summary), _figures(rows, summary, config), finished=True,
                         tournament=config.id, battles=_battle_rows(rows), verdicts=_verdicts(summary))
