"""One visitor runs the heaviest job the public app allows; another steps a replay meanwhile (issue 44, item 3).

    .venv/bin/python -m benchmarks.visitors [--seconds 40] [--steps 40]

Starts ``app.py`` on a free 127.0.0.1 port with its default visitor bounds (``WOLFECLICK_APP_*``, ``docs/app.md``,
*Trust*) and a fresh library holding the sample recordings, then for each heavy job in turn:

- ``compare``: client A runs the largest Compare the app allows (the cheap served policies, battles per pairing up
  to ``$WOLFECLICK_APP_MAX_BATTLES`` in all) through ``/compare_run``;
- ``live``: ``$WOLFECLICK_APP_MAX_LIVE`` clients each stream battles through ``/battle_stream`` at once (every live
  slot the app has, unpaced);
- ``analysis``: client A analyses the longest sample replay at the largest K (``$WOLFECLICK_APP_MAX_K``), every
  option of both sides, through the page's own event.

While a job runs (``--seconds`` at most, then it is stopped), client B steps a replay with ``/replay_turn``; the
latency of B's steps, alone and under each job, is the result (goal: p95 <= 1 s). Bounded: three phases of
``--seconds`` each; the server binds 127.0.0.1 only and is stopped at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmarks import harness
from devkit.appserver import running_app

NAME = "visitors"
HEADING = "## A visitor's heavy job against another's stepping"
SAMPLES = harness.ROOT / "recordings"
GOAL_P95_MS = 1000.0


def longest_sample() -> str:
    """The sample recording with the most decisions (the heaviest analysis a visitor can ask of the samples)."""
    from wolfeclick.battle.store import parse_recording

    sizes = {p.stem: len(parse_recording(p.read_bytes()).turns) for p in SAMPLES.glob("*.json")}
    return max(sorted(sizes), key=lambda stem: sizes[stem])


def page_event(url: str, name: str, data: list[Any], session: str, read: bool = True,
               seen: list[str] | None = None, headers: dict[str, str] | None = None,
               leave: threading.Event | None = None) -> Any:
    """Join the queue for the page event ``name`` as the browser does (``/gradio_api/queue/join`` by its index: the
    analysis is a page event, not a named API endpoint) and return a thread reading its stream to the end (each
    message's line into ``seen``), or until ``leave`` is set: then it closes the stream, as a visitor who closes the
    page does (the app stops a job whose visitor has gone)."""
    import httpx

    config = httpx.get(url + "config", timeout=30, headers=headers).json()
    index = next((i for i, d in enumerate(config["dependencies"]) if d.get("api_name") == name), None)
    if index is None:
        raise SystemExit(f"no event {name!r} in the page's config")
    joined = httpx.post(url + "gradio_api/queue/join", json={"data": data, "fn_index": index, "session_hash": session,
                                                           "event_data": None, "trigger_id": None}, timeout=30,
                        headers=headers)
    joined.raise_for_status()

    def drain() -> None:
        with httpx.stream("GET", url + f"gradio_api/queue/data?session_hash={session}", timeout=None,
                          headers=headers) as stream:
            for line in stream.iter_lines():
                if seen is not None and line.strip():
                    seen.append(line)
                if '"process_completed"' in line or (leave is not None and leave.is_set()):
                    return

    reader = threading.Thread(target=drain if read else lambda: None, daemon=True)
    reader.start()
    return reader


def replay_stepper(client: Any, replay_id: str) -> Callable[[], float]:
    """A visitor stepping ``replay_id`` through ``/replay_turn`` decision after decision (round again at the end),
    warmed by five steps: each call makes one step and returns its seconds (a step that errs stops the run)."""
    steps = client.predict(replay_id, 0, "p1", api_name="/replay_turn")["steps"]
    counter = iter(range(10**9))

    def step_once() -> float:
        began = time.perf_counter()
        out = client.predict(replay_id, next(counter) % steps, "p1", api_name="/replay_turn")
        assert "error" not in out, out
        return time.perf_counter() - began

    for _ in range(5):
        step_once()
    return step_once


def measure(seconds: float, steps_alone: int) -> dict[str, Any]:
    """Client B's step times alone and under each heavy job, with what each job did; the app's bounds."""
    from devkit.appserver import app_client
    from wolfeclick.ui.context import Settings

    bounds = Settings.from_env()
    root = Path(tempfile.mkdtemp(prefix="wolfeclick-visitor-bench-"))
    (root / "recordings").mkdir()
    for path in SAMPLES.glob("*.json"):
        shutil.copy(path, root / "recordings" / path.name)
    stepped = "gen4randombattle-s1-heuristic-vs-random"
    analysed = longest_sample()
    rows: list[dict[str, Any]] = []
    started_busy, started_at = harness.machine_busy(), time.monotonic()
    try:
        with running_app(root) as (url, _pid):
            step_once = replay_stepper(app_client(url), stepped)
            rows.append(row("alone", [step_once() for _ in range(steps_alone)], ""))

            def under(job: Callable[[threading.Event], str], name: str) -> None:
                """B steps while ``job`` runs in a thread (it must return once the event is set)."""
                done, stop = threading.Event(), threading.Event()
                said: list[str] = []

                def run() -> None:
                    try:
                        said.append(job(stop))
                    except Exception as exc:  # noqa: BLE001 - reported in the row, the benchmark goes on
                        said.append(f"failed: {str(exc)[:120]}")
                    finally:
                        done.set()

                thread = threading.Thread(target=run, daemon=True)
                thread.start()
                time.sleep(2.0)  # let the job get going before B measures
                until = time.monotonic() + seconds
                timings: list[float] = []
                while not done.is_set() and time.monotonic() < until:
                    timings.append(step_once())
                stop.set()
                thread.join(120)
                rows.append(row(name, timings, said[0] if said else "still running"))

            cheap = ["random", "maxdamage", "heuristic"]
            per_pairing = max(2, (bounds.max_battles // 3) // 2 * 2)

            def compare(stop: threading.Event) -> str:
                client = app_client(url)
                job = client.submit(cheap, per_pairing, "gen9randombattle", "1", "score", "local",
                                    api_name="/compare_run")
                stop.wait()
                client.predict(api_name="/compare_stop")
                job.result(timeout=120)
                return f"{len(cheap)} policies, {per_pairing} battles per pairing ({3 * per_pairing} battles)"

            def live(stop: threading.Event) -> str:
                played = [0]

                def one_slot(seed: int) -> None:
                    client = app_client(url)
                    while not stop.is_set():
                        for event in client.submit("heuristic", "random", "gen9randombattle", seed, 300,
                                                   api_name="/battle_stream"):
                            if isinstance(event, dict) and event.get("done"):
                                played[0] += 1
                        seed += 1000

                threads = [threading.Thread(target=one_slot, args=(n,), daemon=True) for n in range(bounds.max_live)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                return f"{bounds.max_live} battle streams at once, {played[0]} battles played"

            def analysis(stop: threading.Event) -> str:
                seen: list[str] = []
                job = page_event(url, "analysis_start", [analysed, bounds.max_k, "both"], "bench-analyst", seen=seen)
                stop.wait()
                page_event(url, "analysis_stop", [], "bench-analyst", read=False)
                job.join(120)
                progress = re.findall(r"(\d+) of (\d+) rollouts", " ".join(seen))
                if not progress:
                    raise RuntimeError(f"the analysis showed no progress: {' '.join(seen)[-300:]}")
                done, total = max(progress, key=lambda pair: int(pair[0]))
                return (f"K = {bounds.max_k}, every option of both sides, {analysed}: {done} of {total} rollouts "
                        "played when stopped")

            under(compare, "while A runs the largest Compare")
            under(live, "while every live slot streams")
            under(analysis, "while A analyses at the largest K")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    busy = (harness.machine_busy() - started_busy) / max(1e-9, time.monotonic() - started_at)
    return {"bounds": {"max_k": bounds.max_k, "max_battles": bounds.max_battles, "max_live": bounds.max_live},
            "rows": rows, "machine_busy_cores": busy}


def row(name: str, values: list[float], what: str) -> dict[str, Any]:
    """One phase: B's step times summarised (n, median, p95 by ``harness.percentile``, worst, in ms) and the job."""
    if not values:
        return {"name": name, "n": 0, "job": what, "times_s": []}
    return {"name": name, "n": len(values), "median_ms": statistics.median(values) * 1000,
            "p95_ms": harness.percentile(values, 0.95) * 1000, "worst_ms": max(values) * 1000, "job": what,
            "times_s": values}


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    b = r["bounds"]

    def cells(phase: dict[str, Any]) -> str:
        if not phase["n"]:
            return f"| {phase['name']} | 0 | – | – | – | {phase['job']} |"
        return (f"| {phase['name']} | {phase['n']} | {phase['median_ms']:.0f} | {phase['p95_ms']:.0f} | "
                f"{phase['worst_ms']:.0f} | {phase['job']} |")

    over = [phase["name"] for phase in r["rows"] if phase["n"] and phase["p95_ms"] > GOAL_P95_MS]
    verdict = ("Every phase's p95 is under the 1 s goal." if not over else
               f"Over the 1 s goal at p95: {', '.join(over)}.")
    return "\n".join([
        HEADING, "",
        f"`{result.command}` with the app's default visitor bounds (K ≤ {b['max_k']}, ≤ {b['max_battles']} battles a "
        f"Compare, {b['max_live']} live slots): client B steps a 33-decision replay with `/replay_turn` alone, then "
        f"while one heavy job runs (each at most {p['seconds']:g} s). Goal: B's p95 ≤ 1 s. The whole machine (the app "
        f"included) was busy {r['machine_busy_cores']:.2f} cores on average.", "",
        harness.describe(result), "",
        "| client B's steps | n | median ms | p95 ms | worst ms | the job |", "| --- | --- | --- | --- | --- | --- |",
        *(cells(phase) for phase in r["rows"]), "",
        verdict,
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="how long each heavy job runs (at most)")
    parser.add_argument("--steps", type=int, default=40, help="client B's steps alone, before the jobs")
    args = parser.parse_args(argv)
    if not 5 <= args.seconds <= 300:
        parser.error("--seconds 5..300")
    with harness.measure() as run:
        results = measure(args.seconds, args.steps)
    harness.finish(NAME, argv, {"seconds": args.seconds, "steps": args.steps, "cores": os.cpu_count()}, results, run,
                   args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
