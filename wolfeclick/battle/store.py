"""Recordings on disk: atomic writes, strict reads, and one-line reasons when a file is not a valid recording."""

from __future__ import annotations

import functools
import gzip
import os
import secrets
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson
from pydantic import ValidationError

from wolfeclick.battle.schema import SCHEMA_VERSION, Recording, SourceInfo, is_valid_id
from wolfeclick.digits import ascii_int
from wolfeclick.errors import InputError, StorageError, WolfeClickError

MAX_RECORDING_BYTES = 20 * 1024 * 1024
"""Larger files are refused unread: a 300-turn battle with full LLM prompts is a few MB."""
MAX_JSON_DEPTH = 64
GZIP_MAGIC = b"\x1f\x8b"
"""A recording file that starts with these bytes is gzip-compressed JSON (training episodes are saved so); every
reader takes both, through ``parse_recording``."""
GZIP_LEVEL = 6


class RecordingError(WolfeClickError, ValueError):
    """A file that is not a valid recording; the message is one line, fit to show a user."""


TEMP_SUFFIX = ".tmp"
PID_DIGITS = 10
"""Process ids are below 2**32: a longer run of digits in a temporary's name is not a pid (nothing to check)."""


def _temp_name(path: Path) -> Path:
    """``.<name>.<pid>.<random>.tmp`` beside ``path``: hidden, and naming the process that writes it."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(directory: Path) -> int:
    """Delete temporary files left in ``directory`` by writers that were killed mid-write; return how many.

    A writer's own process id is in its temporary file's name, so files of live writers are never touched.
    """
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
            continue
        parts = name[: -len(TEMP_SUFFIX)].rsplit(".", 2)
        pid = ascii_int(parts[1], PID_DIGITS) if len(parts) == 3 else None
        if pid is None or _alive(pid):
            continue  # not one of ours (or a writer still alive): left alone
        try:
            os.unlink(entry.path)
            removed += 1
        except OSError:
            pass
    return removed


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_new(path: Path, data: bytes, *, replace: bool) -> None:
    """Write ``data`` to a temporary file beside ``path``, then move it into place (``replace``) or link it there
    (no replace: fails with FileExistsError if the name is taken, atomically, even across processes)."""
    temp = _temp_name(path)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, 0o644)  # recordings are meant to be read by the app's user too, whatever the umask
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temp, path)
        else:
            os.link(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def storage_error(path: Path, exc: OSError) -> StorageError:
    """The one-line error for a file that could not be written: which file, and the system's reason."""
    return StorageError(f"cannot save {path}: {exc.strerror or exc.__class__.__name__}")


def write_atomic(path: Path, text: str | bytes, *, replace: bool = True) -> Path:
    """Write ``text`` to ``path`` atomically; an OSError (full disk, read-only folder) becomes one StorageError line."""
    path = Path(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(path, exc) from None
    remove_stale_temporaries(path.parent)
    try:
        _write_new(path, data, replace=replace)
    except FileExistsError:
        if replace:
            raise StorageError(f"cannot save {path}: File exists") from None
        raise  # the no-replace claim lost: the caller picks another name
    except OSError as exc:
        raise storage_error(path, exc) from None
    return path


def compress_recording(data: bytes) -> bytes:
    """A recording's JSON as it is stored compressed: gzip with no time or file name in its header, so the same
    recording always gives the same bytes."""
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def inflate(data: bytes, limit: int = MAX_RECORDING_BYTES) -> bytes:
    """``data`` as JSON bytes: decompressed if it is gzip (at most ``limit`` bytes come out: a small file that
    inflates to gigabytes is refused, not read), else as it is. A corrupt gzip file is a one-line RecordingError."""
    if not data.startswith(GZIP_MAGIC):
        return data
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error:
        raise RecordingError("not a valid gzip-compressed recording (corrupt)") from None
    _check_size(len(out), limit)
    if not inflater.eof or inflater.unused_data:
        raise RecordingError("not a valid gzip-compressed recording (truncated, or more than one member)")
    return out


def json_size(path: Path, size: int) -> int:
    """How many bytes of JSON the recording file at ``path`` (``size`` bytes on disk) holds: ``size``, or for a gzip
    file the length its trailer states (what memory budgets charge; a file whose trailer lies fails to inflate, so
    it is never parsed, let alone kept)."""
    if size < 18:  # the smallest gzip file: a 10-byte header and an 8-byte trailer
        return size
    try:
        with open(path, "rb") as handle:
            if handle.read(len(GZIP_MAGIC)) != GZIP_MAGIC:
                return size
            handle.seek(size - 4)
            return max(size, int.from_bytes(handle.read(4), "little"))
    except OSError:
        return size


def recording_files(paths: Iterable[Path]) -> list[Path]:
    """Files as given; a folder stands for the ``*.json`` files directly inside it (sorted, symbolic links skipped).

    A folder with none is a one-line ``InputError``: a command that read nothing must not look as if all went well."""
    files: list[Path] = []
    for path in map(Path, paths):
        if not path.is_dir():
            files.append(path)
            continue
        inside = [p for p in sorted(path.glob("*.json")) if not p.is_symlink()]
        if not inside:
            raise InputError(f"no recordings in {path}: a folder stands for the *.json files directly inside it")
        files.extend(inside)
    return files


def _identity(recording: Recording) -> dict[str, Any]:
    """What makes two recordings the same battle record: everything but the write time and measured latencies."""
    data = recording.model_dump(mode="json", by_alias=True, exclude={"created"})
    for turn in data["turns"]:
        for decision in turn["decisions"].values():
            decision.pop("latency_ms", None)
    return data


def same_battle(a: Recording, b: Recording) -> bool:
    """True when ``a`` and ``b`` record the same battle the same way (a replay of one seeded battle, say)."""
    return _identity(a) == _identity(b)


def begins(whole: Recording, partial: Recording) -> bool:
    """True when ``partial`` (a checkpoint: the battle so far) records how the battle ``whole`` records began: the
    same battle (format, seed, players, versions, teams, source), its turn records and log the first of ``whole``'s.

    Its result aside, and its input lines but for their count: a checkpoint holds them as they were sent, a finished
    recording as the simulator wrote them (``>p1 move 4`` there is ``>p1 move earthquake`` here); the turn records'
    choices and the log already say what was played."""
    if any(len(getattr(partial, name)) > len(getattr(whole, name)) for name in ("turns", "log", "inputlog")):
        return False
    start = whole.model_copy(update={"turns": whole.turns[:len(partial.turns)], "log": whole.log[:len(partial.log)],
                                     "inputlog": partial.inputlog, "result": partial.result})
    return same_battle(start, partial)


def _candidate_ids(base: str) -> Iterator[str]:
    yield base
    stem = base[:110]
    for number in range(2, 100_000):
        yield f"{stem}-{number}"
    raise StorageError(f"no free recording id left for {base}")


@dataclass(frozen=True)
class EncodedRecording:
    """A recording already in its canonical bytes (``Recording.to_json``, UTF-8), with its id.

    What a battle played in another process travels as: bytes cost next to nothing to send and are written to disk
    as they are; they are parsed back only when the recording's id is taken by another battle (see
    ``RecordingSaver``).
    """

    id: str
    data: bytes

    @classmethod
    def of(cls, recording: Recording) -> EncodedRecording:
        return cls(recording.id, recording.to_json().encode("utf-8"))

    def decode(self) -> Recording:
        """The recording itself; parsed once however often a save needs it (one free-id search may ask per id)."""
        return self._parsed

    @functools.cached_property
    def _parsed(self) -> Recording:
        return parse_recording(self.data)


AnyRecording = Recording | EncodedRecording
"""What the savers take: a recording, or one already encoded."""


class RecordingSaver:
    """Saves one battle run — its periodic checkpoints and its final recording — under one id no other battle has.

    Ids derive from format, seed and policies, so a rerun of a seed, a stopped Live battle or a one-turn API battle
    would otherwise replace a different, complete recording. The first save claims the recording's id if it is
    free (or already holds this very battle), else the first free of ``<id>-2``, ``<id>-3``… (only the plain id is
    read and compared, so thousands of training rollouts of one seed stay cheap); the claim is an atomic no-replace link,
    so two runs — even in two processes — never get one id. Later saves of the same run replace their own file.
    An ``EncodedRecording`` is written as it is, and parsed only to be compared or given another id.

    A run saved as it goes hands its partial saves to ``checkpoint``: a checkpoint is never the same battle as a
    finished recording, so the same battle played again would otherwise leave its id at its first checkpoint.
    """

    def __init__(self, directory: Path | str, *, compress: bool = False) -> None:
        self.directory = Path(directory)
        self.id: str | None = None
        self._held: Recording | None = None
        """The recording the plain id holds while this run's checkpoints are its beginning (nothing written yet)."""
        self.compress = compress
        """Store the JSON gzip-compressed (``compress_recording``): a tenth of the size or less, read the same way."""

    @property
    def path(self) -> Path | None:
        return self.directory / f"{self.id}.json" if self.id else None

    def checkpoint(self, partial: AnyRecording) -> Path:
        """Save the battle so far (what a crash would leave), unless the plain id holds a recording this battle so far
        is the beginning of (the same seed and policies played before): then nothing is written — that file already
        holds all of it — and the run keeps the id until its final ``save`` shows whether it is the same battle
        (refreshed in place) or another (it moves to the next free id, as any other battle would)."""
        partial = _decoded(partial)
        if self.id is None:
            path = self.directory / f"{partial.id}.json"
            try:
                existing = load_recording(path) if path.is_file() else None
            except RecordingError:
                existing = None  # unreadable: save() leaves it alone
            if existing is not None and begins(existing, partial):
                self.id, self._held = partial.id, existing
                return path
        elif self._held is not None:
            if begins(self._held, partial):
                return self.directory / f"{self.id}.json"
            self.id = self._held = None  # it went otherwise: a new id, from the plain one on
        return self.save(partial)

    def save(self, recording: AnyRecording) -> Path:
        """Write ``recording`` (under the claimed id, which may differ from ``recording.id``); return its path."""
        if self._held is not None:
            held, self._held = self._held, None
            if not same_battle(held, _decoded(recording)):
                self.id = None  # the held id's battle ended otherwise: claim a free id from the plain one on
        if self.id is not None:
            return write_atomic(self.directory / f"{self.id}.json", self._stored(_text_with_id(recording, self.id)))
        for candidate in _candidate_ids(recording.id):
            path = self.directory / f"{candidate}.json"
            text = self._stored(_text_with_id(recording, candidate))
            try:
                write_atomic(path, text, replace=False)
            except FileExistsError:
                if candidate != recording.id:
                    continue  # only the plain id is shared by a replay of the same battle: no need to read it
                try:
                    existing = load_recording(path)
                except RecordingError:
                    continue  # something unreadable holds the name: leave it alone, take the next
                if not same_battle(existing, _decoded(recording)):
                    continue
                write_atomic(path, text)  # the same battle again: refresh it in place
            self.id = candidate
            return path
        raise AssertionError("unreachable")

    def _stored(self, text: str | bytes) -> str | bytes:
        if not self.compress:
            return text
        return compress_recording(text.encode("utf-8") if isinstance(text, str) else text)


def _decoded(recording: AnyRecording) -> Recording:
    return recording.decode() if isinstance(recording, EncodedRecording) else recording


def _text_with_id(recording: AnyRecording, recording_id: str) -> str | bytes:
    """The file's text of ``recording`` under ``recording_id`` (encoded bytes kept as they are when the id is theirs)."""
    if isinstance(recording, EncodedRecording) and recording.id == recording_id:
        return recording.data
    return _with_id(_decoded(recording), recording_id).to_json()


def _with_id(recording: Recording, recording_id: str) -> Recording:
    return recording if recording.id == recording_id else recording.model_copy(update={"id": recording_id})


def save_recording(recording: AnyRecording, directory: Path, *, compress: bool = False) -> Path:
    """Save one finished recording under ``<directory>/<id>.json``, never replacing a different battle's file;
    ``compress``: gzip-compressed (still ``.json``: every reader takes both)."""
    return RecordingSaver(directory, compress=compress).save(recording)


def rewrite_recording(path: Path, recording: Recording) -> Path:
    """Replace the recording file at ``path`` with ``recording``, stored as the file there was (compressed or not)."""
    path = Path(path)
    text = recording.to_json()
    with open(path, "rb") as handle:
        compressed = handle.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    return write_atomic(path, compress_recording(text.encode("utf-8")) if compressed else text)


def _depth_ok(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Reject absurd nesting before ``json.loads`` recurses into it."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return False
        elif char in "]}":
            depth -= 1
    return True


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "recording"
    kind = error["type"]
    if kind == "missing":
        return f"missing field '{where}'"
    if kind == "extra_forbidden":
        return f"unexpected field '{where}'"
    more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    message = error["msg"]
    if kind.startswith("int") and isinstance(error.get("input"), float):
        message = "must be a whole number of at most 63 bits"  # orjson reads wider integers as floats
    return f"field '{where}': {message}{more}"


def _check_size(size: int, limit: int = MAX_RECORDING_BYTES) -> None:
    if size > limit:
        what = f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit} bytes"
        raise RecordingError(f"file is {'more than ' if size == limit + 1 else ''}{size / 1e6:.1f} MB; "
                             f"recordings are limited to {what}")


def parse_recording(data: bytes | str) -> Recording:
    """Validate recording text (or its gzip-compressed bytes); raise RecordingError with one line saying what is
    wrong."""
    _check_size(len(data))
    if isinstance(data, bytes):
        data = inflate(data)
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordingError("file is not UTF-8 text") from None
    if not _depth_ok(data):
        raise RecordingError(f"JSON is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        raw = orjson.loads(data)  # strict JSON: no NaN/Infinity, no lone surrogates, no integer beyond 64 bits
    except orjson.JSONDecodeError as exc:
        raise RecordingError(f"not valid JSON (truncated, corrupt or out of range): {exc.msg} at line {exc.lineno}") from None
    if not isinstance(raw, dict):
        raise RecordingError("not a recording: the top level is not a JSON object")
    if "schema" not in raw:
        raise RecordingError("missing field 'schema'")
    if raw["schema"] != SCHEMA_VERSION:
        raise RecordingError(f"unsupported schema version {str(raw['schema'])[:60]!r}; expected {SCHEMA_VERSION!r}")
    try:
        return Recording.model_validate(raw)
    except ValidationError as exc:
        raise RecordingError(_first_error(exc)) from None


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words (from its ``st_mode``), for one-line refusals."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def read_at_most(fd: int, count: int) -> bytes:
    """Up to ``count`` bytes from ``fd``, whatever its size claims (a file that grows, a device): the bounded read
    every reader of files it did not write uses, after checking the descriptor is a regular file."""
    chunks, total = [], 0
    while total < count:
        chunk = os.read(fd, min(1 << 20, count - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_limited(path: Path | str, limit: int = MAX_RECORDING_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; RecordingError (one line) for anything else.

    Opened without blocking and checked on the open descriptor, so a FIFO named ``*.json`` cannot hang a reader and
    a symlink to ``/dev/zero`` cannot fill memory; the read itself stops at ``limit + 1`` bytes, whatever
    ``st_size`` claimed (a file that grows while it is read)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise RecordingError(f"{path.name} is a folder, not a recording file") from None
    except OSError as exc:
        raise RecordingError(f"cannot read {path.name}: {exc.strerror or exc.__class__.__name__}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise RecordingError(f"{path.name} is a folder, not a recording file")
        if not stat.S_ISREG(info.st_mode):
            raise RecordingError(f"{path.name} is not a regular file ({file_kind(info.st_mode)})")
        _check_size(info.st_size, limit)
        data = read_at_most(fd, limit + 1)
        _check_size(len(data), limit)
        return data
    except OSError as exc:
        raise RecordingError(f"cannot read {path.name}: {exc.strerror or exc.__class__.__name__}") from None
    finally:
        os.close(fd)


def load_recording(path: Path) -> Recording:
    """Read and validate a recording file: the one strict loader every reader of recordings goes through
    (a regular file, at most ``MAX_RECORDING_BYTES``, nested at most ``MAX_JSON_DEPTH`` deep, the schema's types)."""
    return parse_recording(read_limited(path))


UPLOAD_PREFIX = "upload-"
"""The Arena names every uploaded file ``upload-<sha256[:16]>.json``; no other writer uses the prefix."""
UPLOADED = SourceInfo(kind="imported", detail="upload")


def refuse_compressed_upload(data: bytes) -> None:
    """Uploads are taken as JSON only: a gzip file could hold up to the recording limit behind a few kilobytes, past
    the operator's upload limit (which counts the bytes received). A one-line RecordingError that says what to do."""
    if data.startswith(GZIP_MAGIC):
        raise RecordingError("the file is gzip-compressed (as training episodes are saved): upload the JSON it holds "
                             "(gzip -dc FILE > FILE.json, or the viewer's JSON download)")


def as_filed(recording: Recording, path: Path) -> Recording:
    """``recording`` as the Arena files it: its id is its file's name, and an upload's source is ``imported``
    (``upload``) whatever the file claims or was read from — an uploaded file is stored byte for byte, so what it
    says about where it came from is the uploader's word, never the Arena's (the format an importer read it from
    stays in its players' ``metadata.import``)."""
    update: dict[str, Any] = {}
    stem = Path(path).stem
    if recording.id != stem:
        update["id"] = stem
    if stem.startswith(UPLOAD_PREFIX) and recording.source != UPLOADED:
        update["source"] = UPLOADED
    return recording.model_copy(update=update) if update else recording


def resolve_in(directory: Path, recording_id: str) -> Path:
    """The file of a recording id inside ``directory``; ids that are not safe names never reach the filesystem."""
    if not is_valid_id(recording_id):
        raise RecordingError("invalid replay id")
    path = Path(directory) / f"{recording_id}.json"
    if path.resolve().parent != Path(directory).resolve():
        raise RecordingError("invalid replay id")
    return path
