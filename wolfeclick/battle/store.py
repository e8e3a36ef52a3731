"""Recordings on disk: atomic writes, strict reads, and one-line reasons when a file is not a valid recording."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from wolfeclick.battle.schema import SCHEMA_VERSION, Recording, is_valid_id
from wolfeclick.errors import StorageError, WolfeClickError

MAX_RECORDING_BYTES = 20 * 1024 * 1024
"""Larger files are refused unread: a 300-turn battle with full LLM prompts is a few MB."""
MAX_JSON_DEPTH = 64


class RecordingError(WolfeClickError, ValueError):
    """A file that is not a valid recording; the message is one line, fit to show a user."""


def storage_error(path: Path, exc: OSError) -> StorageError:
    """``cannot save recordings/x.json: Read-only file system`` from the OSError of a write."""
    return StorageError(f"cannot save {path}: {exc.strerror or exc.__class__.__name__}")


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` via a temporary file and a rename, so a reader never sees half a file.

    Any OSError (read-only folder, full disk...) becomes a one-line ``StorageError``; no temporary file is left.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise storage_error(path, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; recordings are meant to be read by the app's user too
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise storage_error(path, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save_recording(recording: Recording, directory: Path) -> Path:
    """Save under ``<directory>/<id>.json`` (the id is a safe file name by construction)."""
    return write_atomic(Path(directory) / f"{recording.id}.json", recording.to_json())


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
    return f"field '{where}': {error['msg']}{more}"


def _check_size(size: int) -> None:
    if size > MAX_RECORDING_BYTES:
        raise RecordingError(f"file is {size / 1e6:.1f} MB; recordings are limited to "
                             f"{MAX_RECORDING_BYTES // (1024 * 1024)} MB")


def parse_recording(data: bytes | str) -> Recording:
    """Validate recording text; raise RecordingError with one line saying what is wrong."""
    _check_size(len(data))
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordingError("file is not UTF-8 text") from None
    if not _depth_ok(data):
        raise RecordingError(f"JSON is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        raw = json.loads(data)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"not valid JSON (truncated or corrupt): {exc.msg} at line {exc.lineno}") from None
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


def load_recording(path: Path) -> Recording:
    """Read and validate a recording file."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RecordingError(f"cannot read {path.name}: {exc.strerror}") from None
    _check_size(size)
    return parse_recording(path.read_bytes())


def resolve_in(directory: Path, recording_id: str) -> Path:
    """The file of a recording id inside ``directory``; ids that are not safe names never reach the filesystem."""
    if not is_valid_id(recording_id):
        raise RecordingError("invalid replay id")
    path = Path(directory) / f"{recording_id}.json"
    if path.resolve().parent != Path(directory).resolve():
        raise RecordingError("invalid replay id")
    return path
