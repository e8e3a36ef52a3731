"""Where the pinned Pokémon Showdown simulator lives, and installing it there on first use.

The wheel carries the npm manifest and lock (``showdown/package.json``, ``showdown/package-lock.json``), not the
145 MB of Node packages: those are installed once with ``npm ci`` into a cache folder named after the lock's hash
(so two versions of the Arena never share or clobber one install), either by ``wolfeclick setup`` or by the first
battle. ``$WOLFECLICK_SHOWDOWN`` points at an existing ``pokemon-showdown`` package instead and is never installed
into. Everything here is I/O at the edge of the ``sim`` layer.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO

from wolfeclick.errors import WolfeClickError
from wolfeclick.settings import settings

__all__ = ["MANIFEST_DIR", "cache_root", "compile_cache_dir", "install_dir", "showdown_dir", "ensure_showdown",
           "ShowdownMissing"]

MANIFEST_DIR = Path(__file__).with_name("showdown")
"""The pinned ``package.json`` and ``package-lock.json`` shipped inside the package."""


class ShowdownMissing(WolfeClickError, RuntimeError):
    """The simulator is not installed and cannot be installed here (no npm, a failed ``npm ci``)."""

    exit_code = 1


def cache_root() -> Path:
    """``$WOLFECLICK_CACHE``, else ``$XDG_CACHE_HOME/wolfeclick``, else ``~/.cache/wolfeclick``."""
    return settings().cache


def lock_digest() -> str:
    """The first 12 hex digits of the shipped lock's SHA-256: the install folder's name changes with the lock."""
    return hashlib.sha256((MANIFEST_DIR / "package-lock.json").read_bytes()).hexdigest()[:12]


def install_dir() -> Path:
    """The folder ``npm ci`` installs into (it holds the manifest, the lock and ``node_modules``)."""
    return cache_root() / f"showdown-{lock_digest()}"


def compile_cache_dir() -> Path:
    """Where simulator processes keep V8's compiled code for Showdown's modules (``compile_cache.js``)."""
    return cache_root() / "node-compile-cache"


def showdown_dir() -> Path:
    """The ``pokemon-showdown`` package the bridge and the local server run: ``$WOLFECLICK_SHOWDOWN`` or the cache's."""
    explicit = settings().showdown
    if explicit is not None:
        return explicit
    return install_dir() / "node_modules" / "pokemon-showdown"


def ensure_showdown(*, quiet: bool = False) -> Path:
    """The simulator's package folder, installed first if it is missing; a one-line ``ShowdownMissing`` if it can't be.

    The install runs ``npm ci`` in a temporary folder beside the final one and renames it into place, under a file
    lock, so two processes starting their first battle at once install once and never see half an install.
    """
    package = showdown_dir()
    if (package / "package.json").is_file():
        return package
    if settings().showdown is not None:
        raise ShowdownMissing(f"pokemon-showdown is not installed at {package} ($WOLFECLICK_SHOWDOWN); unset it to "
                              "use the Arena's own copy, or run `npm ci` there")
    npm = shutil.which("npm")
    if not shutil.which("node") and not settings().node:
        raise ShowdownMissing("Node.js was not found on PATH: install Node.js >= 20 and npm, then run `wolfeclick setup`")
    if not npm:
        raise ShowdownMissing("npm was not found on PATH: install npm (with Node.js >= 20), then run `wolfeclick setup`")
    final = install_dir()
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        with open(final.parent / f"{final.name}.lock", "a+") as lock:  # "a+": the holder's pid is kept to read
            _take_lock(lock, quiet=quiet)
            if (package / "package.json").is_file():  # another process installed it while this one waited
                return package
            _npm_ci(npm, final, quiet=quiet)
    except OSError as exc:
        raise ShowdownMissing(f"could not install the simulator into {final}: {exc.strerror or exc}") from exc
    return package


def _take_lock(lock: IO[str], *, quiet: bool) -> None:
    """The install lock, saying once that this process waits for another install (by its pid, which the holder
    writes into the lock file): a second ``wolfeclick setup`` was silent for the minutes the first one took."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read(20).strip()
        if not quiet:
            who = f" (pid {holder})" if holder.isdigit() else ""
            print(f"Waiting for another install of the simulator{who} to finish…", file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))
    lock.flush()


def _npm_ci(npm: str, final: Path, *, quiet: bool) -> None:
    staging = final.with_name(f"{final.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(MANIFEST_DIR / name, staging / name)
    if not quiet:
        print(f"Installing the Pokémon Showdown simulator (npm ci, about 2 minutes, once) into {final}",
              file=sys.stderr, flush=True)
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=staging,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        last = next((line for line in reversed(done.stdout.splitlines()) if line.strip()), "no output")
        raise ShowdownMissing(f"`npm ci` failed installing the simulator into {final} (exit {done.returncode}): {last}")
    shutil.rmtree(final, ignore_errors=True)  # a stale folder without the package (an older interrupted install)
    staging.rename(final)
