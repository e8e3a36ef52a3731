"""Importing many files at once (``import DIR``): bounded reads of regular files only, one simulator shared by
every server log, and counts of what was imported and what was refused, by reason."""

from __future__ import annotations

import os
import re
import stat
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import MAX_RECORDING_BYTES, RecordingError, file_kind, read_at_most, save_recording
from wolfeclick.errors import InputError
from wolfeclick.interop.public import ImportFormatError
from wolfeclick.interop.serverlog import FALLBACK_NOTE, RESIMULATED_NOTE, SimHost
from wolfeclick.interop.sniff import FORMATS, read_any
from wolfeclick.sim.process import default_processes

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


def _read(path: Path, host: SimHost) -> Recording | ImportFormatError | RecordingError:
    try:
        return read_any(read_bounded(path), "", host)
    except (ImportFormatError, RecordingError) as exc:
        return exc


def import_files(paths: Iterable[Path], out: Path, *, saved: Callable[[Path], None] | None = None,
                 refused: Callable[[Path, str], None] | None = None,
                 progress: Callable[[], None] | None = None, workers: int | None = None,
                 fell_back: Callable[[Path, str], None] | None = None) -> ImportSummary:
    """Import every file (folders expanded) into ``out``; ``saved``/``refused`` hear of each file, in order, and
    ``fell_back`` of each server log imported from its public log (with the reason its input log was not used).

    ``workers`` files are read at once (default: one per core), each server log on a simulator of its own, so the
    simulator and Python work side by side; recordings are saved in input order as they are done. A file that
    cannot be saved (full disk) ends the run with its StorageError; every file before it stays saved.
    """
    summary = ImportSummary()
    files = expand(paths)
    workers = max(1, min(workers or default_processes(), len(files) or 1))
    with SimHost(workers) as host, ThreadPoolExecutor(workers, thread_name_prefix="wolfeclick-import") as pool:
        pending: deque[tuple[Path, Future]] = deque()
        for path in files:
            pending.append((path, pool.submit(_read, path, host)))
            if len(pending) > 2 * workers:  # a bounded window: a folder of thousands is never all in memory
                _settle(*pending.popleft(), out, summary, (saved, refused, fell_back, progress))
        while pending:
            _settle(*pending.popleft(), out, summary, (saved, refused, fell_back, progress))
    return summary


def _settle(path: Path, future: Future, out: Path, summary: ImportSummary, hooks: tuple) -> None:
    saved, refused, fell_back, progress = hooks
    result = future.result()
    if isinstance(result, Recording):
        written = save_recording(result, out)
        summary.imported += 1
        notes = str(result.players["p1"].metadata.get("import", {}).get("notes", ""))
        if notes.startswith(RESIMULATED_NOTE):
            summary.resimulated += 1
        if notes.startswith(FALLBACK_NOTE):
            summary.fallbacks += 1
            if fell_back is not None:
                fell_back(path, notes.split(";", 1)[0])
        if saved is not None:
            saved(written)
    else:
        summary.refused[refusal_reason(str(result))] += 1
        if refused is not None:
            refused(path, str(result))
    if progress is not None:
        progress()
