"""Tournament engines: who plays a tournament's battles. The driver (``run_tournament``) owns every file.

A tournament's pending battles are cut into ``SpecJob``s (policy *specs*, not policies, so a job can travel to
another process or machine). An engine plays them and streams ``(job position, FinishedBattle)`` back as each
battle ends: what the driver needs and no more — the row's ``BattleFacts`` and, only when the tournament keeps
recordings, the recording to save (already marked with the tournament's ``SourceInfo``). The driver writes
``progress.jsonl``, recordings, ``results.jsonl`` and ``summary.json`` exactly as before. Placement never changes a
battle (see ``battle.runner``), so every engine gives the same rows and the same recordings.

* ``LocalEngine`` — this process: ``battle.batch.run_jobs`` on a local simulator pool (what ``bench`` always did);
  a battle with a server seat (``battle.remote.ServerSeat``: ``showdown:USER``, a bot on a Showdown server) is played
  on that server instead, one at a time, before the embedded ones, and its row kept in the schedule's seats.
* ``RayEngine`` (``engines.ray_engine``, imported only when asked for: Ray is optional) — simulator-worker actors
  and model-server actors on a Ray cluster, or a local Ray instance sized to this machine.

Each engine has two steps: ``prepare(specs, policies, llm_options)`` checks (and, locally, builds) the policies
before the driver writes anything, so a bad spec leaves no directory behind; ``play(jobs, lineup, concurrency=…,
keep=…)`` is an async generator to be closed with ``contextlib.aclosing`` (closing it early stops the battles in
flight). ``keep`` is the ``SourceInfo`` to mark kept recordings with, or None when none are kept.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.arena.engines.base import (
    Engine,
    FinishedBattle,
    LocalEngine,
    SpecJob,
    battle_job,
    finished_battle,
    server_seat,
)
from wolfeclick.errors import InputError
from wolfeclick.extras import require

__all__ = ["ENGINES", "SpecJob", "FinishedBattle", "finished_battle", "battle_job", "server_seat", "Engine",
           "LocalEngine", "make_engine"]

ENGINES = ("local", "ray")


def make_engine(name: str | None = "local", *, address: str | None = None, **options: Any) -> Engine:
    """The engine called ``name`` (``local`` or ``ray``); ``address`` (``auto``, ``HOST:PORT``) is Ray's only.

    Ray is imported here only for ``ray``, so the local path (the app, ``bench``) never loads it.
    """
    name = (name or "local").strip().lower()
    if name == "local":
        if address:
            raise InputError("--address needs --engine ray")
        return LocalEngine()
    if name == "ray":
        require("ray", "the ray engine")
        from wolfeclick.arena.engines.ray_engine import RayEngine

        return RayEngine(address=address, **options)
    raise InputError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
