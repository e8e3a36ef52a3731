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

import hashlib
import json
import logging
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from wolfeclick.arena.results import ResultRow
from wolfeclick.arena.tournament import RECORDINGS_DIR, find_tournaments, load_results
from wolfeclick.battle.schema import MAX_SEED, MAX_TURNS, Recording, is_valid_id
from wolfeclick.battle.store import UPLOAD_PREFIX, RecordingError, as_filed, load_recording
from wolfeclick.errors import one_line
from wolfeclick.sides import SIDES
from wolfeclick.sim.protocol import forced_ending

__all__ = [
    "INDEX_FILE",
    "CHECKPOINT_KEYS",
    "BattleEntry",
    "Scan",
    "ScanCache",
    "Verifier",
    "scan_history",
    "unplayed",
    "unratable",
    "write_index",
    "read_index",
    "rebuild_index",
]

INDEX_FILE = "history.sqlite"
_log = logging.getLogger("wolfeclick.history")

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
    recordings or rows left out because they cannot be rated (path or battle order): a side's policy unknown (an
    imported battle between people), a mirror match, the same battle again under another id, an upload whose
    re-simulation did not reproduce it. ``reasons`` says why for each skipped or unrated one; ``unverified`` are
    the left-out imports (`docs/leaderboard.md`)."""

    entries: list[BattleEntry]
    skipped: list[str]
    unrated: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    unverified: list[str] = field(default_factory=list)

    def refused_line(self) -> str | None:
        """One line counting and naming the files that could not be read, or None."""
        return _one_line(f"{len(self.skipped)} file(s) skipped (not a readable tournament or recording)",
                         self.skipped, self.reasons)

    def left_out_line(self) -> str | None:
        """One line counting and naming what was read but left out of the ratings, or None."""
        return _one_line(f"{len(self.unrated)} recording(s) left out", self.unrated, self.reasons)


_NAMED = 5
"""How many refused files one line names (the count covers them all)."""


def _one_line(head: str, names: list[str], reasons: dict[str, str]) -> str | None:
    if not names:
        return None
    shown = "; ".join(f"{Path(n).name}: {reasons.get(n, 'unreadable')}" for n in names[:_NAMED])
    more = f"; and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    return f"{head}: {shown}{more}".replace("\n", " ")


Verifier = Callable[[Path, Recording], "str | None"]
"""Re-simulates an imported recording: None when it reproduces its log and result, else one line on why not."""

UNKNOWN_POLICY = "a side's policy is unknown (imported battles)"


def unratable(entry: BattleEntry) -> str | None:
    """Why ``entry`` cannot be one game of the ratings (a mirror match, a blank side, a winner who did not play),
    or None. The leaderboard leaves such entries out and says so, whatever wrote them."""
    if not entry.p1 or not entry.p2:
        return UNKNOWN_POLICY
    if entry.p1 == entry.p2:
        return f"a mirror match ({entry.p1[:60]} vs itself): nothing to rate"
    if entry.winner is not None and entry.winner not in (entry.p1, entry.p2):
        return f"its winner {entry.winner[:60]!r} is neither player"
    if entry.decisions_p1 + entry.decisions_p2 == 0:
        return NO_DECISION
    return None


NO_DECISION = "no decision was played: nothing to rate"


def unplayed(recording: Recording) -> str | None:
    """Why a recording's result was not played out by its policies, or None: only played battles are rated.

    A result the simulator was told (``>forcewin``, ``>forcelose``, ``>forcetie``) is not a game, with one exception:
    a battle played here whose failing policy forfeited (the runner's own ``>forcelose``, its error recorded) lost it
    by failing. An upload never gets that exception (anyone can write the line); neither does a battle in which no
    decision was made."""
    ending = forced_ending(recording.inputlog)
    own_forfeit = (ending is not None and ending.startswith(">forcelose ") and recording.source.kind != "imported"
                   and recording.result.reason == "forfeit" and bool(recording.result.error))
    if ending is not None and not own_forfeit:
        return f"its ending was forced ({ending}), not played"
    if not any(turn.decisions for turn in recording.turns):
        return NO_DECISION
    return None


def _checkpoint(meta: Any) -> str:
    meta = meta if isinstance(meta, dict) else {}
    return json.dumps({k: meta[k] for k in CHECKPOINT_KEYS if meta.get(k) is not None}, sort_keys=True)


def _from_recording(recording: Recording) -> BattleEntry:
    """An entry from a validated recording (only the header and per-turn flags are read)."""
    players, result = recording.players, recording.result
    specs = {side: players[side].policy for side in SIDES}
    counts = {side: [0, 0] for side in SIDES}
    for turn in recording.turns:
        for side, decision in turn.decisions.items():
            counts[side][0] += 1
            counts[side][1] += bool(decision.illegal)
    return BattleEntry(
        battle=recording.id, source=recording.source.kind, detail=recording.source.detail,
        format=recording.format, simulator=recording.versions.pokemon_showdown, created=recording.created,
        seed=recording.seed, pair=None, p1=specs["p1"], p2=specs["p2"],
        p1_checkpoint=_checkpoint(players["p1"].metadata), p2_checkpoint=_checkpoint(players["p2"].metadata),
        winner=specs[result.winner] if result.winner else None, reason=result.reason, turns=result.turns,
        decisions_p1=counts["p1"][0], decisions_p2=counts["p2"][0], illegal_p1=counts["p1"][1],
        illegal_p2=counts["p2"][1],
    )


def _from_row(row: ResultRow, format_id: str) -> BattleEntry:
    """An entry from a tournament's result row. Its types were checked as it was read (``parse_rows``); its
    numbers and ids are checked here (a hand-edited row is refused, not passed on to SQLite or the ratings)."""
    for key, value in (("seed", row["seed"]), ("pair", row["pair"]), ("turns", row["turns"])):
        if not 0 <= value <= MAX_SEED:
            raise ValueError(f"field {key!r} is out of range")
    for key, counts in (("decisions", row["decisions"]), ("illegal", row["illegal"])):
        if not all(_count(counts[side]) for side in SIDES):
            raise ValueError(f"field {key!r} is not a count per side")
    if not is_valid_id(row["recording"]):
        raise ValueError("field 'recording' is not a recording id")
    return BattleEntry(
        battle=row["recording"], source="tournament", detail=row["tournament"], format=format_id, simulator=None,
        created=None, seed=row["seed"], pair=f"{row['tournament']}:{row['pair']}", p1=row["p1"], p2=row["p2"],
        p1_checkpoint="{}", p2_checkpoint="{}", winner=row["winner"], reason=row["reason"], turns=row["turns"],
        decisions_p1=row["decisions"]["p1"], decisions_p2=row["decisions"]["p2"],
        illegal_p1=row["illegal"]["p1"], illegal_p2=row["illegal"]["p2"],
    )


def _count(value: object) -> bool:
    """Whether ``value`` is a plain whole number of decisions (not a bool, within a battle's bounds)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TURNS


def _merge(row: BattleEntry, recording: BattleEntry) -> BattleEntry:
    """A tournament row completed by its recording: the row's pairing facts, the recording's provenance.

    Each checkpoint follows its policy, not its seat: a battle played on a server (``showdown:`` seats) may have
    been seated the other way round from the row. The seed is the recording's: null for such a battle, whose seed
    the server chose (the row's is the schedule's)."""
    checkpoints = {recording.p1: recording.p1_checkpoint, recording.p2: recording.p2_checkpoint}
    return replace(row, simulator=recording.simulator, created=recording.created, seed=recording.seed,
                   p1_checkpoint=checkpoints.get(row.p1, "{}"), p2_checkpoint=checkpoints.get(row.p2, "{}"))


def _battle_key(recording: Recording) -> str | None:
    """What makes two recordings one battle whatever their ids: the simulator's whole input (seed and choices)."""
    if not recording.inputlog:
        return None
    return hashlib.sha256("\n".join(recording.inputlog).encode("utf-8", "surrogatepass")).hexdigest()


UPLOADS_APART = ("an upload: this server rates only the battles played on it (its operator may count verified "
                 "uploads too)")
PENDING = "unverified: queued for re-simulation (it counts once checked)"
"""What a ``Verifier`` that never waits (``arena.verify.BackgroundVerifier``) says of a file it has not checked yet:
such a read is not kept in the scan cache, so the next scan asks again."""


def scan_history(results_dir: Path | str | None, recording_dirs: Sequence[Path | str] = (), *,
                 verify: Verifier | None = None, cache: ScanCache | None = None, uploads: bool = True) -> Scan:
    """Every battle under ``results_dir`` (tournament rows and their ``recordings/``) and ``recording_dirs``.

    Reads files only (through the strict loader, ``store.load_recording``); writes nothing. A row whose recording is
    found is merged with it; a recording found twice — by id, or by its input log under another id — counts once;
    an unreadable tournament, row or recording is listed in ``skipped`` and the rest still counts. An imported
    recording (an upload or ``import``: ``source`` is set by the Arena) counts only once ``verify`` says its
    re-simulation reproduces it; without ``verify`` it is left out as unverified. ``uploads=False`` leaves the
    app's uploads (``upload-*.json``) out unread, as shown apart. Symbolic links are skipped (logged for the
    operator, never read). ``cache`` (``ScanCache``) keeps what each unchanged file gave across scans.
    """
    rows: dict[str, BattleEntry] = {}
    folders: list[Path] = []
    skipped: list[str] = []
    unrated: list[str] = []
    unverified: list[str] = []
    reasons: dict[str, str] = {}

    def leave_out(name: str, why: str) -> None:
        unrated.append(name)
        reasons[name] = why

    for directory in find_tournaments(results_dir) if results_dir is not None else []:
        try:
            config, found = load_results(directory)
        except (ValueError, OSError) as exc:
            skipped.append(str(directory))
            reasons[str(directory)] = one_line(exc)
            continue
        for number, row in enumerate(found):
            name = f"{directory}/results.jsonl#{number + 1}"
            try:
                entry = _from_row(row, config.format)
            except (ValueError, KeyError, TypeError) as exc:
                skipped.append(name)
                reasons[name] = f"row {number + 1}: {one_line(exc)}"
                continue
            why = unratable(entry)
            if why is not None:
                leave_out(name, why)
                continue
            rows[entry.battle] = entry
        folders.append(directory / RECORDINGS_DIR)
    folders += [Path(d) for d in recording_dirs]
    recordings: dict[str, BattleEntry] = {}
    keys: dict[str, str] = {}
    seen: set[Path] = set()
    looked: set[str] = set()
    for folder in folders:
        if not folder.is_dir() or folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        for path in sorted(folder.glob("*.json")):
            name = str(path)
            if path.is_symlink():  # it could point anywhere: never opened, never named to a visitor
                _log.info("history: skipped the symbolic link %s", name)
                continue
            if not uploads and path.name.startswith(UPLOAD_PREFIX):
                leave_out(name, UPLOADS_APART)
                continue
            looked.add(name)
            read = _read_cached(path, verify, cache)
            if read.entry is None:
                skipped.append(name)
                reasons[name] = read.why or "unreadable"
                continue
            entry, why, key = read.entry, read.why, read.key
            if entry.battle in recordings:
                continue  # the same recording in two folders (a tournament's own and the library)
            if read.unverified:
                unverified.append(name)
            if why is None and key is not None and keys.get(key, entry.battle) != entry.battle:
                why = f"the same battle as {keys[key]} (the same input log)"
            if why is not None:
                leave_out(name, why)
                continue
            if key is not None:
                keys.setdefault(key, entry.battle)
            recordings[entry.battle] = entry
    for gone in set(cache or ()) - looked:  # deleted files leave the cache too
        del cache[gone]  # type: ignore[union-attr]
    entries = dict(recordings)
    for battle, entry in rows.items():
        entries[battle] = _merge(entry, recordings[battle]) if battle in recordings else entry
    return Scan([entries[k] for k in sorted(entries)], sorted(skipped), sorted(unrated), reasons, sorted(unverified))


@dataclass(frozen=True)
class _Read:
    """What one recording file gave before the scan's cross-file checks: its entry (None: refused, ``why`` says
    why), why it is left out (unratable, unverified) and the key of its input log."""

    entry: BattleEntry | None
    why: str | None = None
    unverified: bool = False
    key: str | None = None


ScanCache = dict[str, "tuple[tuple[int, ...], _Read]"]
"""``path → (stat stamp, _Read)``: a caller that scans again and again (the app) keeps one, so an unchanged file is
read and validated once, not at every rebuild."""


def _read_recording(path: Path, verify: Verifier | None) -> _Read:
    try:
        if not is_valid_id(path.stem):
            raise RecordingError("its name is not a recording id")
        recording = as_filed(load_recording(path), path)  # the id is the file's name; uploads are imports
    except RecordingError as exc:
        return _Read(None, str(exc))
    entry = _from_recording(recording)
    why, unverified = unplayed(recording) or unratable(entry), False
    if why is None and recording.source.kind == "imported":  # checked first: a fake never claims a battle
        why = _unverified(path, recording, verify)
        unverified = why is not None
    return _Read(entry, why, unverified, _battle_key(recording))


def _read_cached(path: Path, verify: Verifier | None, cache: ScanCache | None) -> _Read:
    try:
        info = os.stat(path)
        stamp: tuple[int, ...] | None = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)
    except OSError:
        stamp = None
    if cache is not None and stamp is not None:
        hit = cache.get(str(path))
        if hit is not None and hit[0] == stamp:
            return hit[1]
    read = _read_recording(path, verify)
    if cache is not None and stamp is not None and (verify is not None or not read.unverified) \
            and read.why != PENDING:
        cache[str(path)] = (stamp, read)
    return read


def _unverified(path: Path, recording: Recording, verify: Verifier | None) -> str | None:
    """Why an imported recording does not count (yet), or None once its re-simulation reproduced it."""
    if not recording.inputlog:
        return "unverified: an import with no input log to re-simulate"
    if verify is None:
        return "unverified: not re-simulated yet"
    why = verify(path, recording)
    return None if why is None else f"unverified: {why}"


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
                  path: Path | str | None = None, *, verify: Verifier | None = None,
                  cache: ScanCache | None = None, uploads: bool = True) -> tuple[Path, Scan]:
    """Scan the files and rewrite the index (default ``<results_dir>/history.sqlite``); returns it and the scan."""
    scan = scan_history(results_dir, recording_dirs, verify=verify, cache=cache, uploads=uploads)
    target = Path(path) if path is not None else Path(results_dir) / INDEX_FILE
    return write_index(scan.entries, target), scan
