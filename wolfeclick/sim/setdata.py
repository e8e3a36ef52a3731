"""A random-battle format's set data, read from the installed simulator: the edge of ``wolfeclick.game.sets``.

Two sources, both Showdown's own: ``dist/data/random-battles/genN/sets.json`` in the installed package (each
species' level and roles: movepool, abilities, tera types) and the format's team generator itself, asked by the
bridge's ``set-tally`` op for ``TALLY_TEAMS`` teams from a fixed seed (which moves, item, ability and tera type it
actually combines, and how often). The tally is the same on every machine with the same simulator, so it is kept in
``$WOLFECLICK_CACHE/setdata`` under the lock's hash after the first time (about 15 s for gen9 on 2 cores).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from wolfeclick.errors import InputError
from wolfeclick.game.sets import SetBook, book_from_data
from wolfeclick.sim.install import cache_root, lock_digest, showdown_dir
from wolfeclick.sim.process import SimProcess
from wolfeclick.sim.protocol import is_random_format

__all__ = ["TALLY_SEED", "TALLY_TEAMS", "load_book", "sets_json_path"]

TALLY_TEAMS = 6000
"""Teams the generator is asked for: about 70 sets per gen9 species (500-odd), 120 per gen4 species (295)."""
TALLY_SEED = [6, 1, 20, 26]
_GEN = re.compile(r"^gen([1-9])")
_BOOKS: dict[str, SetBook] = {}
_LOCK = threading.Lock()


def sets_json_path(format_id: str) -> Path:
    """Where the installed simulator keeps ``format_id``'s random-battle sets (its generation's ``sets.json``)."""
    match = _GEN.match(format_id)
    gen = match.group(1) if match else "9"
    return showdown_dir() / "dist" / "data" / "random-battles" / f"gen{gen}" / "sets.json"


def _cache_path(format_id: str) -> Path:
    return cache_root() / "setdata" / f"{format_id}-{lock_digest()}-{TALLY_TEAMS}.json"


def _read_sets_json(format_id: str) -> dict[str, Any]:
    path = sets_json_path(format_id)
    if not path.is_file():  # gen1 keeps its data in another shape: the tally alone serves it
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


async def _tally(format_id: str, process: SimProcess | None) -> dict[str, Any]:
    path = _cache_path(format_id)
    if path.is_file():
        cached: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return cached
    own = process is None
    if process is None:
        process = SimProcess()
        await process.start()
    try:
        reply = await process.call("set-tally", format=format_id, teams=TALLY_TEAMS, seed=TALLY_SEED)
    finally:
        if own:
            await process.close()
    species: dict[str, Any] = reply["species"]
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f"{path.name}.{os.getpid()}.partial")
    staging.write_text(json.dumps(species, sort_keys=True), encoding="utf-8")
    staging.replace(path)  # whole or not at all: another process may be reading it
    return species


async def load_book(format_id: str, process: SimProcess | None = None) -> SetBook:
    """``format_id``'s ``SetBook`` (made once per process; the tally from the cache, or from ``process``, or from a
    simulator of its own). A format that plays given teams has no generator to read: refused in one line."""
    if not is_random_format(format_id):
        raise InputError(f"{format_id}: only a random-battle format has set data to sample unseen Pokémon from")
    with _LOCK:
        if format_id in _BOOKS:
            return _BOOKS[format_id]
    tally = await _tally(format_id, process)
    book = book_from_data(format_id, tally, await asyncio.to_thread(_read_sets_json, format_id))
    with _LOCK:
        return _BOOKS.setdefault(format_id, book)
