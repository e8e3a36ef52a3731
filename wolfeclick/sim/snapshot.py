"""The simulator's startup snapshot (``snapshot.js``): built once, kept in the cache, started from by every simulator.

A simulator process started from the snapshot has Showdown loaded and the random formats' data read already, so its
first battle costs less CPU (docs/testing.md, ``benchmarks.sim_start``); it plays the same bytes as one started
plainly (``bridge.js``). A blob fits one Node executable, one Showdown install and one version of the host's
sources: its name is a digest of all three, so a change to any builds a new one. Building it takes a few seconds,
once; where it fails (or a blob will not start), the reason is kept beside it and simulators start plainly: slower,
nothing else. ``WOLFECLICK_SIM_SNAPSHOT=0`` turns it off.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

from wolfeclick.sim.install import cache_root

HERE = Path(__file__).parent
BUILDER = HERE / "snapshot.js"
HOST = HERE / "bridge_host.js"
SOURCES = (BUILDER, HOST, HERE / "policies.js")
"""What the snapshot holds of this project: a change to any of them is a new blob."""


def snapshot_dir() -> Path:
    return cache_root() / "node-snapshot"


def _stat_key(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"


def blob_path(node: str, showdown: Path, *, builder: Path = BUILDER) -> Path:
    """Where the blob for this Node executable, Showdown install and host sources is (or would be) kept.

    Node and Showdown are known by their files' identity (path, size, modification time: no process is started to
    ask), the sources by their bytes."""
    digest = hashlib.sha256()
    for part in (_stat_key(Path(node)), _stat_key(showdown / "package.json"),
                 _stat_key(showdown / "dist" / "sim" / "battle.js")):
        digest.update(part.encode() + b"\0")
    for source in (builder, *SOURCES[1:]):
        digest.update(source.read_bytes() + b"\0")
    return snapshot_dir() / f"bridge-{digest.hexdigest()[:24]}.blob"  # `ps` shows a simulator's blob by name


def failure_path(blob: Path) -> Path:
    """Beside a blob that could not be built or would not start: why, so that no later start tries it again."""
    return blob.with_suffix(".failed")


def mark_failed(blob: Path, why: str) -> None:
    """Keep ``why`` beside ``blob`` and remove the blob, best effort (a cache that cannot be written costs speed)."""
    try:
        blob.unlink(missing_ok=True)
        failure_path(blob).write_text(why.strip()[-2000:] + "\n")
    except OSError:
        pass


async def ensure_blob(node: str, showdown: Path, *, builder: Path = BUILDER) -> Path | None:
    """The blob to start a simulator from, built first if there is none; None where it failed before or fails now.

    Processes starting side by side may each build one: each writes a name of its own and renames it into place, so
    no process reads half a blob."""
    try:
        blob = blob_path(node, showdown, builder=builder)
    except OSError:  # Node or Showdown not where they were said to be: the plain start says what is missing
        return None
    if blob.is_file():
        return blob
    if failure_path(blob).exists():
        return None
    try:
        blob.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(blob.parent, os.W_OK):  # nowhere to keep it (nor its failure): each start would build again
        return None
    partial = blob.with_name(f"{blob.name}.{os.getpid()}.tmp")
    proc = await asyncio.create_subprocess_exec(
        node, "--snapshot-blob", str(partial), "--build-snapshot", str(builder), str(showdown), str(HOST),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    if proc.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        lines = [line for line in err.decode(errors="replace").splitlines() if line.strip()]
        mark_failed(blob, f"building the snapshot failed (exit {proc.returncode}): {' | '.join(lines[-3:])}")
        return None
    try:
        partial.replace(blob)
    except OSError:
        partial.unlink(missing_ok=True)
        return None
    _prune(blob)
    return blob


KEPT = 4
"""Blobs kept in the folder (about 32 MB each): each change of Node, Showdown or the host's sources builds a new one."""


def _prune(built: Path) -> None:
    """Remove all but the ``KEPT`` newest blobs, ``built`` among them, best effort. A process starting from a removed
    one has it open already; one about to finds it gone, starts plainly and notes why, for that blob only."""
    try:
        blobs = sorted((p for p in built.parent.glob("bridge-*.blob") if p != built),
                       key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in blobs[KEPT - 1:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
