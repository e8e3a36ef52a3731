"""Run tournaments: schedule → battles (an engine: ``arena.engines``) → one result line per battle → summary.

Layout of one tournament, ``<out>/<tournament id>/``:

* ``tournament.json`` — the config and its id (written first; no timestamps);
* ``progress.jsonl`` — one row per finished battle, appended and flushed (fsync) as each ends, in completion
  order: the crash-safe record that ``resume`` reads;
* ``results.jsonl`` — the same rows sorted by battle index, written when the tournament completes; byte-identical
  for the same config, whatever the concurrency or how often the run was interrupted;
* ``summary.json`` — the table, pairings, ratings and SPRT verdict, written beside ``results.jsonl``;
* ``recordings/<recording id>.json`` — every battle's recording (unless turned off).

For a UI: ``run_tournament`` plays (or resumes) one, ``load_results`` reads one back from disk, and
``summary_from_rows`` / ``charts_from_rows`` turn rows into the table and Plotly figures, ``find_tournaments``
lists the tournaments under a results directory and ``glicko2_over`` rates policies across several of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from wolfeclick.arena.engines import Engine, LocalEngine, SpecJob
from wolfeclick.arena.glicko import Glicko2Rating, glicko2_run
from wolfeclick.arena.results import ResultRow, canonical_rows, check_rows, game_results, parse_rows, result_row, row_line, sprt_status
from wolfeclick.arena.schedule import TournamentConfig, build_schedule, check_specs
from wolfeclick.arena.standings import TournamentSummary, charts_from_rows, format_table, summary_from_rows
from wolfeclick.battle.schema import SourceInfo
from wolfeclick.battle.store import AnyRecording, read_limited, save_recording, storage_error, write_atomic
from wolfeclick.errors import InputError
from wolfeclick.policies.base import Policy

__all__ = [
    "CONFIG_FILE",
    "PROGRESS_FILE",
    "RESULTS_FILE",
    "SUMMARY_FILE",
    "RECORDINGS_DIR",
    "ResultRow",
    "TournamentConfig",
    "TournamentSummary",
    "tournament_dir",
    "run_tournament",
    "load_config",
    "load_results",
    "find_tournaments",
    "glicko2_over",
    "summary_from_rows",
    "charts_from_rows",
    "format_table",
]

CONFIG_FILE = "tournament.json"
PROGRESS_FILE = "progress.jsonl"
RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
RECORDINGS_DIR = "recordings"

ResultCallback = Callable[[ResultRow, int, int], None]
StartCallback = Callable[[int, int], None]


def tournament_dir(out_dir: Path | str, config: TournamentConfig) -> Path:
    """Where ``config``'s tournament lives under ``out_dir``."""
    return Path(out_dir) / config.id


def _config_text(config: TournamentConfig) -> str:
    return json.dumps({"id": config.id, **config.to_dict()}, indent=2, sort_keys=True) + "\n"


MAX_ROWS_BYTES = 256 * 1024 * 1024
"""A results file beyond this is refused unread (10,000 rows are about 3 MB)."""


def load_config(directory: Path | str) -> TournamentConfig:
    """The config stored in a tournament directory (ValueError, one line, if missing or not a config)."""
    path = Path(directory) / CONFIG_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{directory} is not a tournament directory (no {CONFIG_FILE})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} is not a tournament config")
    return TournamentConfig.from_dict(data)


def _read_progress(directory: Path, config: TournamentConfig) -> list[ResultRow]:
    """Rows already in ``progress.jsonl`` but ``aborted`` ones, which are dropped from the file to be played again.

    A torn last line (killed mid-write) is cut off the file too.
    """
    path = directory / PROGRESS_FILE
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    rows, torn = parse_rows(text, str(path))
    check_rows(rows, config)
    kept = [row for row in rows if row["reason"] != "aborted"]
    if torn or len(kept) < len(rows) or (text and not text.endswith("\n")):  # next row on a line of its own
        write_atomic(path, "".join(row_line(row) for row in kept))
    return kept


def load_results(directory: Path | str) -> tuple[TournamentConfig, list[ResultRow]]:
    """Read a tournament directory: its config and its rows in battle order.

    A finished tournament gives ``results.jsonl``; one still running (or interrupted) gives the rows of
    ``progress.jsonl`` so far, sorted the same way. Read-only: a torn last line is skipped, not repaired.
    """
    directory = Path(directory)
    config = load_config(directory)
    for name in (RESULTS_FILE, PROGRESS_FILE):
        path = directory / name
        if path.exists():  # a regular file of bounded size: a FIFO named results.jsonl cannot hang a history scan
            rows, _ = parse_rows(read_limited(path, MAX_ROWS_BYTES).decode("utf-8"), str(path))
            check_rows(rows, config)
            return config, canonical_rows(rows, config)
    return config, []


def find_tournaments(out_dir: Path | str) -> list[Path]:
    """Tournament directories directly under ``out_dir`` (those holding a ``tournament.json``), sorted by name."""
    root = Path(out_dir)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / CONFIG_FILE).is_file())


def _has_progress(directory: Path) -> bool:
    """Whether any battle of the tournament in ``directory`` has finished (a row in progress.jsonl)."""
    progress = directory / PROGRESS_FILE
    return progress.exists() and progress.stat().st_size > 0


def _persist(progress: Path, row: ResultRow, recording: AnyRecording | None,
             recordings: Path | None) -> ResultRow:
    """Save the recording (if kept), then append the row and fsync it: a row on disk implies its recording is.

    The recording comes marked as the tournament's (the engine was told to keep it); if its id is taken by a
    different battle (a shared replay library), it is saved under a free one and the row says which. Returns the
    row as written.
    """
    if recordings is not None:
        if recording is None:
            raise AssertionError(f"the engine kept no recording of {row['recording']}")
        saved = save_recording(recording, recordings)
        if saved.stem != row["recording"]:
            row = row | {"recording": saved.stem}
    try:
        with open(progress, "a", encoding="utf-8") as handle:
            handle.write(row_line(row))
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise storage_error(progress, exc) from None
    return row


def glicko2_over(directories: Sequence[Path | str]) -> dict[str, Glicko2Rating]:
    """Glicko-2 ratings after one rating period per tournament directory, taken in the order given.

    Where Bradley–Terry rates one tournament, this follows policies (e.g. successive checkpoints) across many.
    """
    return glicko2_run([game_results(load_results(d)[1]) for d in directories])


async def _next_or_stop(stream: Any, stop: asyncio.Event | None) -> Any:
    """The stream's next item, or None if ``stop`` is set first (the pending step is then cancelled).

    Raises StopAsyncIteration at the end of the stream.
    """
    step = asyncio.ensure_future(stream.__anext__())
    if stop is None:
        return await step
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({step, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if step.done():
        return step.result()
    step.cancel()
    await asyncio.gather(step, return_exceptions=True)
    return None


async def run_tournament(
    config: TournamentConfig,
    out_dir: Path | str,
    *,
    concurrency: int = 1,
    resume: bool = False,
    keep_recordings: bool = True,
    recordings_dir: Path | None = None,
    policies: Mapping[str, Policy] | None = None,
    llm_options: Mapping[str, Any] | None = None,
    on_start: StartCallback | None = None,
    on_result: ResultCallback | None = None,
    stop: asyncio.Event | None = None,
    engine: Engine | None = None,
) -> TournamentSummary:
    """Play ``config``'s tournament under ``out_dir/<id>/`` and return its summary.

    * A new tournament needs a fresh directory; an existing one is continued only with ``resume=True``, which
      skips every battle already in ``progress.jsonl`` and plays the rest (a finished one just rewrites its
      results, byte-identical).
    * Recordings go to ``recordings_dir`` if given (the app passes its replay library), else ``<id>/recordings/``.
    * A battle that ends ``aborted`` (its simulator died) is played once more (same seed, same battle) before it
      is recorded as aborted; ``resume`` plays every aborted row again.
    * ``policies`` maps specs to ready policies (e.g. a model the UI has loaded); other specs are built with
      ``make_policy(spec, **llm_options)``.
    * ``on_start(done, total)`` is called once before play, ``on_result(row, done, total)`` after each battle
      (``done`` counts rows so far, resumed ones included; ``total`` is the scheduled number of battles).
    * With an SPRT in the config, pairs are checked in order after each battle; once it decides, no further
      battles start and those in flight are cancelled.
    * Setting ``stop`` cancels the battles in flight and returns early with ``complete=False``; ``resume``
      later finishes the job.
    * ``engine`` plays the battles (``arena.engines``: ``LocalEngine`` by default, or ``RayEngine``); the files
      written are the same whichever plays, and a tournament started on one engine can be resumed on another.

    ``results.jsonl`` and ``summary.json`` are written only when the tournament is complete.
    """
    directory = tournament_dir(out_dir, config)
    config_path = directory / CONFIG_FILE
    exists = config_path.exists()
    if exists and not resume and not _has_progress(directory):
        exists = False  # an earlier run stopped before any battle finished: nothing to keep, start afresh
    if exists:
        if not resume:
            raise InputError(f"{directory} already holds this tournament; pass --resume to finish it, "
                             "or remove the directory")
        if load_config(directory) != config:
            raise InputError(f"{config_path} holds a different config than this tournament")

    schedule = build_schedule(config)
    rows = _read_progress(directory, config) if exists else []
    done = {row["index"] for row in rows}
    status = sprt_status(rows, config)
    decided = status is not None and status[1] is not None
    pending = [] if decided else [b for b in schedule if b.index not in done]

    engine = engine if engine is not None else LocalEngine()
    lineup: Any = None
    if pending:  # before anything is written, so a bad spec leaves no directory behind
        specs = sorted({s for b in pending for s in (b.p1, b.p2)})
        # all of them checked before the engine builds any: a typo is not told after a checkpoint has loaded
        check_specs([s for s in specs if s not in (policies or {})], **dict(llm_options or {}))
        lineup = engine.prepare(specs, dict(policies or {}), dict(llm_options or {}))
    if not exists:
        write_atomic(config_path, _config_text(config))
    if on_start is not None:
        on_start(len(done), len(schedule))

    if pending:
        deal = config.deal()  # a given-team format: each seat's team from the pair's seed (same in both games)
        jobs = [SpecJob(b.p1, b.p2, config.format, b.seed, config.max_turns, b.battle_id,
                        teams=deal.infos(b.seed) if deal else None)
                for b in pending]
        recordings = (Path(recordings_dir) if recordings_dir else directory / RECORDINGS_DIR) if keep_recordings else None
        keep = SourceInfo(kind="tournament", detail=config.id) if recordings is not None else None
        stream = engine.play(jobs, lineup, concurrency=concurrency, keep=keep)
        async with contextlib.aclosing(stream):
            while True:
                try:
                    item = await _next_or_stop(stream, stop)
                except StopAsyncIteration:
                    break
                if item is None:  # stopped by the caller
                    break
                position, finished = item
                battle = pending[position]
                row = result_row(config.id, battle, finished.facts)
                # File work (two fsyncs) runs in a thread: the battles still in flight go on meanwhile.
                row = await asyncio.to_thread(_persist, directory / PROGRESS_FILE, row, finished.recording,
                                              recordings)
                rows.append(row)
                done.add(battle.index)
                if on_result is not None:
                    on_result(row, len(done), len(schedule))
                if config.sprt is not None:
                    status = sprt_status(rows, config)
                    if status is not None and status[1] is not None:
                        break

    summary = summary_from_rows(rows, config)
    if summary.complete:
        final = canonical_rows(rows, config)
        write_atomic(directory / RESULTS_FILE, "".join(row_line(row) for row in final))
        write_atomic(directory / SUMMARY_FILE, summary.to_json())
    return summary
