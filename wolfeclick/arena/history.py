"""One history of every finished battle on disk, indexed in SQLite: the input of the standing leaderboard.

The files are the truth and the index is only a cache: ``rebuild_index`` scans the tournaments under a results
folder (their result rows) and any recording folders (``record`` batches, Live, training, branches — each marked
by its ``source``), and rewrites ``<results>/history.sqlite`` from scratch. Delete it and nothing is lost.

A battle is identified by its recording id: a tournament row and the recording it names, or the same recording
found in two folders (a tournament's own ``recordings/`` and the app's library), are one battle, counted once.
The row supplies the tournament and pair; the recording, when there is one, supplies the time, the simulator
version and what each checkpoint resolved to. Entries are kept in id order, so the same files always give the
same index and the same leaderboard.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from wolfeclick.arena.tournament import RECORDINGS_DIR, find_tournaments, load_results

__all__ = [
    "INDEX_FILE",
    "CHECKPOINT_KEYS",
    "BattleEntry",
    "Scan",
    "scan_history",
    "write_index",
    "read_index",
    "rebuild_index",
]

INDEX_FILE = "history.sqlite"

#: What a player's recorded metadata says about its checkpoint, kept in the index.
CHECKPOINT_KEYS = ("checkpoint", "base", "adapter", "preset", "profile", "mode", "quant", "implementation")


@dataclass(frozen=True)
class BattleEntry:
    """One finished (or aborted) battle, as the leaderboard needs it.

    ``pair`` is the resampling unit: ``"<tournament>:<pair number>"`` for a tournament battle, shared by the two
    seat-swapped games of one seed, else None (a battle of its own). ``p1_checkpoint``/``p2_checkpoint`` are
    JSON objects of the recorded `CHECKPOINT_KEYS` (``"{}"`` without a recording). ``created`` is the
    recording's ISO time, None for a tournament row whose recording was not kept. ``seed`` is None for a battle
    whose seed nobody knows (imported, or played on a server).
    """

    battle: str
    source: str
    detail: str | None
    format: str
    simulator: str | None
    created: str | None
    seed: int | None
    pair: str | None
    p1: str
    p2: str
    p1_checkpoint: str
    p2_checkpoint: str
    winner: str | None
    reason: str
    turns: int
    decisions_p1: int
    decisions_p2: int
    illegal_p1: int
    illegal_p2: int


@dataclass(frozen=True)
class Scan:
    """What a scan found: the entries (id order), the files it could not read (path order), and the readable
    recordings left out because a side's policy is unknown (an imported battle between people: nothing to rate)."""

    entries: list[BattleEntry]
    skipped: list[str]
    unrated: list[str] = field(default_factory=list)


class _Unrated(Exception):
    """A readable recording with a side whose policy nobody recorded."""


def _checkpoint(meta: Any) -> str:
    meta = meta if isinstance(meta, dict) else {}
    return json.dumps({k: meta[k] for k in CHECKPOINT_KEYS if meta.get(k) is not None}, sort_keys=True)


def _from_recording(data: dict[str, Any]) -> BattleEntry:
    """An entry from a recording's JSON (only the header and per-turn flags are read)."""
    players, result = data["players"], data["result"]
    specs = {side: players[side]["policy"] for side in ("p1", "p2")}
    if not all(specs.values()):
        raise _Unrated(data["id"])
    turns = data.get("turns") or []
    counts = {side: [0, 0] for side in ("p1", "p2")}
    for turn in turns:
        for side, decision in (turn.get("decisions") or {}).items():
            if side in counts:
                counts[side][0] += 1
                counts[side][1] += bool(decision.get("illegal"))
    source = data.get("source") or {}
    return BattleEntry(
        battle=data["id"], source=source.get("kind", "played"), detail=source.get("detail"),
        format=data["format"], simulator=(data.get("versions") or {}).get("pokemon_showdown"),
        created=data.get("created"), seed=None if data["seed"] is None else int(data["seed"]), pair=None, p1=specs["p1"], p2=specs["p2"],
        p1_checkpoint=_checkpoint(players["p1"].get("metadata")), p2_checkpoint=_checkpoint(players["p2"].get("metadata")),
        winner=specs[result["winner"]] if result.get("winner") else None, reason=result["reason"],
        turns=int(result["turns"]), decisions_p1=counts["p1"][0], decisions_p2=counts["p2"][0],
        illegal_p1=counts["p1"][1], illegal_p2=counts["p2"][1],
    )


def _from_row(row: dict[str, Any], format_id: str) -> BattleEntry:
    return BattleEntry(
        battle=row["recording"], source="tournament", detail=row["tournament"], format=format_id, simulator=None,
        created=None, seed=int(row["seed"]), pair=f"{row['tournament']}:{row['pair']}", p1=row["p1"], p2=row["p2"],
        p1_checkpoint="{}", p2_checkpoint="{}", winner=row["winner"], reason=row["reason"], turns=int(row["turns"]),
        decisions_p1=int(row["decisions"]["p1"]), decisions_p2=int(row["decisions"]["p2"]),
        illegal_p1=int(row["illegal"]["p1"]), illegal_p2=int(row["illegal"]["p2"]),
    )


def _merge(row: BattleEntry, recording: BattleEntry) -> BattleEntry:
    """A tournament row completed by its recording: the row's pairing facts, the recording's provenance."""
    return replace(row, simulator=recording.simulator, created=recording.created,
                   p1_checkpoint=recording.p1_checkpoint, p2_checkpoint=recording.p2_checkpoint)


def scan_history(results_dir: Path | str | None, recording_dirs: Sequence[Path | str] = ()) -> Scan:
    """Every battle under ``results_dir`` (tournament rows and their ``recordings/``) and ``recording_dirs``.

    Reads files only; writes nothing. A row whose recording is found is merged with it; a recording found
    twice counts once; an unreadable tournament or recording is listed in ``skipped`` and the rest still counts.
    """
    rows: dict[str, BattleEntry] = {}
    folders: list[Path] = []
    skipped: list[str] = []
    unrated: list[str] = []
    for directory in find_tournaments(results_dir) if results_dir is not None else []:
        try:
            config, found = load_results(directory)
        except (ValueError, OSError):
            skipped.append(str(directory))
            continue
        for row in found:
            rows[row["recording"]] = _from_row(row, config.format)
        folders.append(directory / RECORDINGS_DIR)
    folders += [Path(d) for d in recording_dirs]
    recordings: dict[str, BattleEntry] = {}
    seen: set[Path] = set()
    for folder in folders:
        if not folder.is_dir() or folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        for path in sorted(folder.glob("*.json")):
            try:
                entry = _from_recording(json.loads(path.read_text(encoding="utf-8")))
            except _Unrated:
                unrated.append(str(path))
                continue
            except (ValueError, KeyError, TypeError, AttributeError, OSError):
                skipped.append(str(path))
                continue
            recordings.setdefault(entry.battle, entry)
    entries = dict(recordings)
    for battle, row in rows.items():
        entries[battle] = _merge(row, recordings[battle]) if battle in recordings else row
    return Scan([entries[k] for k in sorted(entries)], sorted(skipped), sorted(unrated))


_COLUMNS = [f.name for f in fields(BattleEntry)]


def write_index(entries: Iterable[BattleEntry], path: Path | str) -> Path:
    """Write ``entries`` to a fresh SQLite file at ``path`` (built beside it, then renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".history-", suffix=".sqlite", dir=path.parent)
    os.close(handle)
    try:
        with sqlite3.connect(temp) as db:
            db.execute(f"CREATE TABLE battles ({', '.join(_COLUMNS)}, PRIMARY KEY (battle))")
            db.executemany(f"INSERT INTO battles VALUES ({', '.join('?' * len(_COLUMNS))})",
                           [tuple(asdict(e).values()) for e in entries])
            db.execute("CREATE INDEX battles_by_format ON battles (format, created)")
        db.close()
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return path


def read_index(path: Path | str, *, format_id: str | None = None, since: str | None = None,
               sources: Sequence[str] | None = None) -> list[BattleEntry]:
    """Entries of an index, in id order, optionally only one format, those created on or after ``since`` (an
    ISO date or time; undated rows are then left out) and those from the given ``sources`` kinds."""
    where, args = [], []
    if format_id is not None:
        where.append("format = ?")
        args.append(format_id)
    if since is not None:
        where.append("created IS NOT NULL AND created >= ?")
        args.append(since)
    if sources:
        where.append(f"source IN ({', '.join('?' * len(sources))})")
        args += list(sources)
    query = f"SELECT {', '.join(_COLUMNS)} FROM battles"
    if where:
        query += " WHERE " + " AND ".join(where)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(query + " ORDER BY battle", args).fetchall()
    db.close()
    return [BattleEntry(*row) for row in rows]


def rebuild_index(results_dir: Path | str, recording_dirs: Sequence[Path | str] = (),
                  path: Path | str | None = None) -> tuple[Path, Scan]:
    """Scan the files and rewrite the index (default ``<results_dir>/history.sqlite``); returns it and the scan."""
    scan = scan_history(results_dir, recording_dirs)
    target = Path(path) if path is not None else Path(results_dir) / INDEX_FILE
    return write_index(scan.entries, target), scan
