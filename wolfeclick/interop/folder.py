"""Importing many files at once (``import DIR``): bounded reads of regular files only, the files imported side by
side in worker processes (or Ray tasks), each worker with one simulator for its server logs, the recordings saved as
a serial save in input order would, and counts of what was imported and what was refused, by reason."""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import multiprocessing.util
import os
import re
import stat
from collections import Counter, deque
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from wolfeclick.battle.store import (
    MAX_RECORDING_BYTES,
    EncodedRecording,
    RecordingError,
    file_kind,
    read_at_most,
    save_recording,
)
from wolfeclick.errors import InputError
from wolfeclick.extras import require
from wolfeclick.interop.public import ImportFormatError, now
from wolfeclick.interop.serverlog import FALLBACK_NOTE, RESIMULATED_NOTE, SimHost
from wolfeclick.interop.sniff import FORMATS, read_encoded

IMPORT_SUFFIXES = (".json", ".log", ".html", ".htm", ".txt")
"""What a folder is searched for (a file named on the command line is read whatever its name)."""


def read_bounded(path: Path, limit: int = MAX_RECORDING_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or a one-line ImportFormatError.

    A FIFO, a device (``/dev/zero``), a socket or a folder is refused without reading (the file is opened
    non-blocking, so a FIFO without a writer cannot hang the import), and at most ``limit + 1`` bytes are ever read,
    whatever ``st_size`` says."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ImportFormatError(f"cannot read: {exc.strerror or exc.__class__.__name__}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ImportFormatError(f"{file_kind(mode)}, not a battle file")
        os.set_blocking(fd, True)
        data = read_at_most(fd, limit + 1)
    except OSError as exc:
        raise ImportFormatError(f"cannot read: {exc.strerror or exc.__class__.__name__}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ImportFormatError(f"file is over {limit // (1024 * 1024)} MB; recordings are limited to "
                                f"{limit // (1024 * 1024)} MB")
    return data


def expand(paths: Iterable[Path]) -> list[Path]:
    """Each path, and for a folder every battle-looking file below it (by suffix, sorted, hidden ones skipped); a
    folder with none is a one-line ``InputError`` (an import that read nothing must not look as if all went well)."""
    files: list[Path] = []
    for path in paths:
        if Path(path).is_dir():
            found = sorted(p for p in Path(path).rglob("*") if p.suffix.lower() in IMPORT_SUFFIXES
                           and not any(part.startswith(".") for part in p.relative_to(path).parts)
                           and not p.is_dir())
            if not found:
                raise InputError(f"nothing to import in {path}: no {', '.join(IMPORT_SUFFIXES)} files below it")
            files.extend(found)
        else:
            files.append(Path(path))
    return files


def refusal_reason(message: str) -> str:
    """The kind of a refusal, for counting: the message without its file name, format, numbers and quoted parts."""
    text = message
    for name in sorted(FORMATS, key=len, reverse=True):  # "showdown replay page" before "showdown replay"
        text = text.replace(f"{name}: ", "")
    text = re.split(r"[0-9'\"(]|: ", text, maxsplit=1)[0]
    return text.strip(" :;,.") or message[:60]


_NOT_SINGLES = re.compile(r"^(\S+) battles are not supported yet")


@dataclass
class ImportSummary:
    imported: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    fallbacks: int = 0
    """Server logs whose input log could not be used (imported from their public log, the reason in the notes)."""
    resimulated: int = 0
    """Server logs re-simulated from their input log."""

    def lines(self) -> list[str]:
        """One line per class of outcome: imported, re-simulated (or not), refused as not singles, refused why."""
        total = self.imported + sum(self.refused.values())
        out = [f"imported {self.imported} of {total} file{'s' if total != 1 else ''}"]
        if self.resimulated or self.fallbacks:
            out.append(f"re-simulated {self.resimulated} server log{'s' if self.resimulated != 1 else ''} from "
                       f"{'its' if self.resimulated == 1 else 'their'} input log; {self.fallbacks} from "
                       f"{'its' if self.fallbacks == 1 else 'their'} public log only (input log not usable)")
        kinds: Counter[str] = Counter()
        others: Counter[str] = Counter()
        for reason, count in self.refused.items():
            match = _NOT_SINGLES.match(reason)
            (kinds if match else others)[match.group(1) if match else reason] += count
        for counts, label in ((kinds, "as not singles (not supported yet)"), (others, "for other reasons")):
            if counts:
                listed = ", ".join(f"{count} {reason}" for reason, count in
                                   sorted(counts.items(), key=lambda item: (-item[1], item[0])))
                out.append(f"refused {sum(counts.values())} {label}: {listed}")
        return out

    def line(self) -> str:
        """The same on one line (for a table cell)."""
        return "; ".join(self.lines())


@dataclass(frozen=True)
class Outcome:
    """What a worker hands back for one file: the recording's bytes, id and import notes, or the refusal."""

    id: str = ""
    data: bytes = b""
    notes: str = ""
    error: str | None = None


_HOST: SimHost | None = None
"""A worker's simulator for server logs (one per worker process, started at its first server log)."""


def _host() -> SimHost:
    global _HOST
    if _HOST is None:
        _HOST = SimHost()
    return _HOST


def import_data(data: bytes | ImportFormatError, created: str, host: SimHost | None = None) -> Outcome:
    """One file's bytes (or the error reading them) → its ``Outcome``; what a worker, local or on Ray, runs."""
    if isinstance(data, ImportFormatError):
        return Outcome(error=str(data))
    with collector_paused():
        return _imported(data, created, host)


def _imported(data: bytes, created: str, host: SimHost | None) -> Outcome:
    """The outcome alone: the recording (tens of thousands of objects) is gone when this returns, before the
    collector is on again (else the collector's first run traversed all of it: ~2 ms a protocol log)."""
    try:
        recording, text = read_encoded(data, "", host or _host(), created=created)
    except (ImportFormatError, RecordingError) as exc:
        return Outcome(error=str(exc))
    return Outcome(recording.id, text, str(recording.players["p1"].metadata.get("import", {}).get("notes", "")))


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one file's import, on again after (if it was on).

    An import allocates tens of thousands of objects that live until its recording is built (trackers, snapshot
    entries, the recording's dicts and models), so the collector ran every few hundred allocations and traversed
    them, and every few of those runs the whole heap (poke-env's data): a tenth of a protocol log's CPU
    (``docs/interop.md``, "Import speed"). One import leaves no cyclic garbage (``tests/test_interop_import_speed.py``);
    whatever a refused file's traceback holds is collected once the collector runs again."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _read_file(path: Path) -> bytes | ImportFormatError:
    try:
        return read_bounded(path)
    except ImportFormatError as exc:
        return exc


def import_path(path: Path, created: str) -> Outcome:
    if _PARENT is not None and os.getppid() != _PARENT:  # the import that asked was killed: stop, not go on alone
        os._exit(1)
    return import_data(_read_file(path), created)


ENGINES = ("local", "ray")
WINDOW = 3
"""Files in flight per worker: one being read, the next ones waiting, so no worker waits for the driver."""


def import_files(paths: Iterable[Path], out: Path, *, saved: Callable[[Path], None] | None = None,
                 refused: Callable[[Path, str], None] | None = None,
                 progress: Callable[[], None] | None = None, workers: int | None = None,
                 fell_back: Callable[[Path, str], None] | None = None, created: str | None = None,
                 engine: str = "local", address: str | None = None) -> ImportSummary:
    """Import every file (folders expanded) into ``out``; ``saved``/``refused`` hear of each file, in order, and
    ``fell_back`` of each server log imported from its public log (with the reason its input log was not used).

    ``workers`` files are imported at once (default: one per core), each in a worker process of its own with its
    own simulator for server logs (``engine="ray"``: Ray tasks, on the cluster at ``address`` or a local instance;
    the files are read here and their bytes sent). Every import of one run is stamped ``created`` (default: now),
    and the files are saved as a one-by-one save in input order would save them, so the same files and stamp give
    the same bytes out whatever the worker count, the engine or the order the workers finish in. A file that
    cannot be saved (full disk) ends the run with its StorageError; every file before it stays saved.
    """
    if engine not in ENGINES:
        raise InputError(f"unknown import engine {engine!r} (one of {', '.join(ENGINES)})")
    summary = ImportSummary()
    files = expand(paths)
    created = created or now()
    workers = max(1, min(workers or os.cpu_count() or 1, len(files) or 1))
    hooks = (saved, refused, fell_back, progress)
    with OrderedSaver(out) as saver:
        for path, outcome in zip(files, _outcomes(files, created, workers, engine, address)):
            saver.add(path, outcome, lambda path, outcome, written: _settle(path, outcome, written, summary, hooks))
    return summary


def _outcomes(files: list[Path], created: str, workers: int, engine: str, address: str | None) -> Iterator[Outcome]:
    """Each file's outcome, in input order."""
    if engine == "ray":
        yield from _ray_outcomes(files, created, workers, address)
        return
    if workers == 1:
        with SimHost() as host:  # started at the first server log, if any
            for path in files:
                yield import_data(_read_file(path), created, host)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)  # fork: no start-up imports
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_fresh_worker,
                             initargs=(os.getpid(),)) as pool:
        yield from _in_order((pool.submit(import_path, path, created) for path in files), WINDOW * workers)


_PARENT: int | None = None
"""A worker process's parent (the import it works for)."""


def _fresh_worker(parent: int) -> None:
    global _HOST, _PARENT
    _HOST = None  # a forked worker starts its own simulator (the parent's, if any, is not its to share)
    _PARENT = parent
    # closed as the worker exits (multiprocessing runs these finalizers, not atexit), its simulator waited for
    multiprocessing.util.Finalize(None, _close_host, exitpriority=10)


def _close_host() -> None:
    global _HOST
    if _HOST is not None:
        _HOST.close()
        _HOST = None


def _in_order(futures: Iterator[Any], window: int,
              get: Callable[[Any], Any] = lambda future: future.result()) -> Iterator[Any]:
    """The results of ``futures`` in order, at most ``window`` submitted ahead (a folder of thousands is never
    all in memory)."""
    pending: deque[Any] = deque()
    for future in futures:
        pending.append(future)
        if len(pending) >= window:
            yield get(pending.popleft())
    while pending:
        yield get(pending.popleft())


def _ray_outcomes(files: list[Path], created: str, workers: int, address: str | None) -> Iterator[Outcome]:
    require("ray", "importing on Ray")
    import ray

    own = False
    if not ray.is_initialized():
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING,
                                   "configure_logging": False}
        try:
            if address:
                ray.init(address=address, **options)
            else:
                ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, **options)
                own = True
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = address or "a local Ray instance"
            raise InputError(f"could not start or reach {where}: {str(exc).strip().splitlines()[0]}") from None
    task = ray.remote(import_data).options(num_cpus=1)
    try:
        refs = (task.remote(_read_file(path), created) for path in files)
        yield from _in_order(refs, WINDOW * workers, get=ray.get)
    finally:
        if own:
            ray.shutdown()


class OrderedSaver:
    """Saves outcomes as ``save_recording`` one by one in input order would, with the disk writes side by side.

    A recording whose id no earlier file of the run had and no file in ``out`` holds is claimed under that id
    whatever else is saved (a save only ever takes another name when its own is taken), so it is written at once
    on a writer thread: the writes and their ``fsync`` overlap. Any other (the id taken: the same battle again, or
    another one) waits for every earlier save and is then saved alone, exactly as a serial save would see the
    folder. ``settle`` hears of each file in input order, once its save is done."""

    def __init__(self, out: Path, writers: int = 4) -> None:
        self.out = Path(out)
        self.pool = ThreadPoolExecutor(writers, thread_name_prefix="wolfeclick-save")
        self.writers = writers
        self.seen: set[str] = set()
        self.pending: deque[tuple[Path, Outcome, Future | None, Callable]] = deque()

    def add(self, path: Path, outcome: Outcome, settle: Callable[[Path, Outcome, Path | None], None]) -> None:
        if outcome.error is not None:
            self.pending.append((path, outcome, None, settle))
        elif outcome.id not in self.seen and not (self.out / f"{outcome.id}.json").exists():
            self.seen.add(outcome.id)
            self.pending.append((path, outcome, self.pool.submit(self._save, outcome), settle))
        else:
            self._drain(everything=True)
            self.seen.add(outcome.id)
            done: Future = Future()
            done.set_result(self._save(outcome))
            self.pending.append((path, outcome, done, settle))
        self._drain(everything=len(self.pending) > 4 * self.writers)

    def _save(self, outcome: Outcome) -> Path:
        return save_recording(EncodedRecording(outcome.id, outcome.data), self.out)

    def _drain(self, everything: bool) -> None:
        while self.pending and (everything or self.pending[0][2] is None or self.pending[0][2].done()):
            path, outcome, future, settle = self.pending.popleft()
            settle(path, outcome, future.result() if future is not None else None)

    def __enter__(self) -> "OrderedSaver":
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self._drain(everything=True)
        finally:
            self.pool.shutdown(wait=True)


def _settle(path: Path, outcome: Outcome, written: Path | None, summary: ImportSummary, hooks: tuple) -> None:
    saved, refused, fell_back, progress = hooks
    if written is not None:
        summary.imported += 1
        if outcome.notes.startswith(RESIMULATED_NOTE):
            summary.resimulated += 1
        if outcome.notes.startswith(FALLBACK_NOTE):
            summary.fallbacks += 1
            if fell_back is not None:
                fell_back(path, outcome.notes.split(";", 1)[0])
        if saved is not None:
            saved(written)
    else:
        error = outcome.error or "unknown"
        summary.refused[refusal_reason(error)] += 1
        if refused is not None:
            refused(path, error)
    if progress is not None:
        progress()
