"""One entry point for every battle file a user may bring: ``read_any`` recognises the format from the content.

Recognised: a schema-v1 recording (validated as is), an OpenEnv-WolfeClick ``record_battle.py`` log, its
``replay_battle.json``, a Showdown server battle log (re-simulated from its input log: ``serverlog``), a Showdown
replay-site JSON, a saved replay page and a bare Showdown protocol log. The file name is only used in messages; the
user never picks a format. Anything else — and any import whose recording would pass the recording limit — is a
one-line ``ImportFormatError`` (or ``RecordingError`` for a recording that fails its schema).
"""

from __future__ import annotations

import orjson

from wolfeclick.battle.schema import Recording
from wolfeclick.battle.store import (
    MAX_JSON_DEPTH,
    MAX_RECORDING_BYTES,
    _check_size,
    _depth_ok,
    inflate,
    parse_recording,
)
from wolfeclick.interop import reference_logs, serverlog, showdown
from wolfeclick.interop.public import ImportFormatError

FORMATS = ("wolfeclick recording", reference_logs.RECORD_FORMAT, reference_logs.REPLAY_FORMAT, showdown.REPLAY_FORMAT,
           showdown.LOG_FORMAT, serverlog.SERVER_FORMAT, showdown.PAGE_FORMAT)

__all__ = ["read_any", "read_encoded", "sniff", "FORMATS", "ImportFormatError"]


def _text(data: bytes) -> str:
    _check_size(len(data))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFormatError("file is not UTF-8 text") from None


def sniff(data: bytes) -> str:
    """The name of the format ``data`` is in (one of ``FORMATS``), or a one-line ImportFormatError."""
    return _read(data)[0]


def read_any(data: bytes, name: str = "", host: serverlog.SimHost | None = None, *,
             created: str | None = None) -> Recording:
    """The recording held in (or imported from) ``data``; ``name`` only labels error messages. ``host`` is the
    simulator that re-simulates server logs (many files share one; else each server log starts its own).
    ``created``: the time an import is stamped with (default: now); a WolfeClick recording keeps its own."""
    return read_encoded(data, name, host, created=created)[0]


def read_encoded(data: bytes, name: str = "", host: serverlog.SimHost | None = None, *,
                 created: str | None = None) -> tuple[Recording, bytes]:
    """``read_any``'s recording and its file's bytes (``Recording.to_json``, UTF-8), made once: a folder import
    sends the bytes from its workers and writes them as they are."""
    try:
        kind, build = _read(data, host)
        recording = build()
        if kind == FORMATS[0]:
            return recording, recording.to_json().encode("utf-8")
        if created is not None:
            recording = recording.model_copy(update={"created": created})
        return recording, check_output(recording, kind)
    except ImportFormatError as exc:
        raise ImportFormatError(f"{name}: {exc}" if name else str(exc)) from None


def check_output(recording: Recording, kind: str) -> bytes:
    """The recording's bytes; refuses, before anything is written, an import whose recording would pass the
    recording limit (which ``validate`` and the app would then refuse to open)."""
    data = recording.to_json().encode("utf-8")
    if len(data) > MAX_RECORDING_BYTES:
        raise ImportFormatError(f"{kind}: the recording would be {len(data) / 1e6:.1f} MB; recordings are limited "
                                f"to {MAX_RECORDING_BYTES // (1024 * 1024)} MB")
    return data


def _read(data: bytes, host: serverlog.SimHost | None = None):
    data = inflate(data)  # a gzip-compressed file (as training episodes are saved) is read as what it holds
    text = _text(data)
    head = text.lstrip()[:1]
    if head in ("{", "["):
        if not _depth_ok(text):
            raise ImportFormatError(f"JSON is nested more than {MAX_JSON_DEPTH} levels deep")
        try:
            raw = orjson.loads(text)  # strict: no NaN/Infinity, no lone surrogates, no integer beyond 64 bits
        except orjson.JSONDecodeError as exc:
            raise ImportFormatError(f"not valid JSON (truncated, corrupt or out of range): {exc.msg} at line "
                                    f"{exc.lineno}") from None
        if isinstance(raw, dict) and "schema" in raw:
            return FORMATS[0], lambda: parse_recording(data)
        if serverlog.looks_like_server_log(raw):
            return serverlog.SERVER_FORMAT, lambda: serverlog.read_server_log(raw, data, host)
        if reference_logs.looks_like_replay(raw):
            return reference_logs.REPLAY_FORMAT, lambda: reference_logs.read_replay_battle(raw, data)
        if reference_logs.looks_like_record(raw):
            return reference_logs.RECORD_FORMAT, lambda: reference_logs.read_record_battle(raw, data)
        if showdown.looks_like_replay(raw):
            return showdown.REPLAY_FORMAT, lambda: showdown.read_showdown_replay(raw, data)
        if isinstance(raw, dict):
            keys = ", ".join(sorted(str(k) for k in raw)[:6]) or "none"
            raise ImportFormatError(f"unrecognised JSON (top-level keys: {keys[:120]}); expected a recording, an "
                                    "OpenEnv-WolfeClick battle log or replay, or a Showdown replay")
        raise ImportFormatError(f"unrecognised JSON (the top level is a {type(raw).__name__}, not an object)")
    if head == "<" or (showdown.PAGE_MARK in text and not showdown.looks_like_log(text)):
        return showdown.PAGE_FORMAT, lambda: showdown.read_showdown_page(text, data)
    if showdown.looks_like_log(text):
        return showdown.LOG_FORMAT, lambda: showdown.read_showdown_log(text, data)
    raise ImportFormatError("not a battle file: neither JSON, a Showdown protocol log nor a saved replay page")
