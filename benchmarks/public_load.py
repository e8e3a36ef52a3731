"""One visitor hogs the public app at every quota while another steps a replay (issue 60), on the real app.

Starts ``app.py`` on a free 127.0.0.1 port with its default visitor bounds and quotas (``WOLFECLICK_APP_*``,
``docs/app.md``, *Trust*), then for ``--minutes``:

- visitor A (one address, many pages: every page a new Gradio session) keeps asking for everything at once:
  ``--pages`` live battle streams (``/battle_stream``, restarted when they end or are refused), the largest Compare
  (``/compare_run``, again and again), an analysis at the largest K beside it (refused while the Compare runs: one
  heavy job per visitor), heavy uploads (``/replay_upload``, about 19 MB each, until the hourly and stored quotas
  refuse them) and 20 MB of random bytes POSTed to ``/gradio_api/upload`` with no event, every 10 s;
- visitor B (another address) steps a 33-decision replay with ``/replay_turn`` the whole time;
- visitor C (a third address) starts a live battle once a minute and times its first turn.

Addresses are told apart by ``X-Forwarded-For``, which uvicorn trusts from 127.0.0.1 (a real deployment behind a
proxy sets ``FORWARDED_ALLOW_IPS`` to that proxy). The serving process's RSS (and its children's) is sampled every
5 s, and again after ``--quiet-s`` of quiet at the end (the app is told to drop sessions idle for
``--session-idle-s``, default 120 s, so that the quiet period shows what the process gives back; the app's own
default is 1800 s). Bounded: the server binds 127.0.0.1 only; every request
loop stops at the deadline and the server is stopped. ``--upload-mb`` sets the size of A's heavy uploads (19 MB:
the published runs; the smoke test's smaller ones only keep it cheap).

    .venv/bin/python -m benchmarks.public_load [--minutes 10] [--pages 6] [--session-idle-s 120] [--quiet-s S]
        [--upload-mb 19] [--steps 30]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from benchmarks.upload_load import heavy_recording, steps_row
from benchmarks.visitors import longest_sample, page_event, replay_stepper
from devkit.appserver import rss_mb, running_app

NAME = "public_load"
HEADING = "## One visitor hogging the public app"
SAMPLES = harness.ROOT / "recordings"
HOG, STEPPER, OTHER = "10.0.0.66", "10.0.0.2", "10.0.0.3"


def children_rss_mb(pid: int) -> float:
    """The RSS of every descendant of ``pid`` (simulators, the upload checker), summed."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        kids = [child for child, parent in parents.items() if parent == current]
        found += kids
        frontier += kids
    return sum(rss_mb(child) for child in found)


def summary(values: list[float]) -> dict[str, float]:
    """n, median, p95 (``harness.percentile``) and worst of step times, in ms."""
    if not values:
        return {"n": 0}
    return {"n": len(values), "median_ms": statistics.median(values) * 1000,
            "p95_ms": harness.percentile(values, 0.95) * 1000, "worst_ms": max(values) * 1000}


def measure(minutes: float, pages: int, session_idle_s: float, quiet_s: float, upload_mb: float,
            steps: int) -> dict[str, Any]:
    import httpx
    from gradio_client import handle_file

    from devkit.appserver import app_client
    from wolfeclick.ui.context import Settings

    bounds = Settings.from_env()
    root = Path(tempfile.mkdtemp(prefix="wolfeclick-public-load-"))
    (root / "recordings").mkdir()
    for path in SAMPLES.glob("*.json"):
        shutil.copy(path, root / "recordings" / path.name)
    heavy = []
    for number in range(8):
        path = root / f"heavy-{number}.json"
        path.write_bytes(heavy_recording(upload_mb, number))
        heavy.append(path)
    stepped, analysed = "gen4randombattle-s1-heuristic-vs-random", longest_sample()
    said: Counter[str] = Counter()
    lock = threading.Lock()

    def note(what: str) -> None:
        with lock:
            said[what] += 1

    steps_alone: list[float] = []
    steps_loaded: list[float] = []
    first_turns: list[float] = []
    rss: list[tuple[float, float, float]] = []
    started_busy, started_at, began_wall = harness.machine_busy(), time.monotonic(), time.time()
    try:
        with running_app(root, env={"WOLFECLICK_APP_SESSION_IDLE_S": f"{session_idle_s:g}"}) as (url, pid):
            opened: list[Any] = []

            def client(address: str) -> Any:
                """A new page (a Gradio session) of the visitor at ``address``; closed when the load ends."""
                page = app_client(url, headers={"X-Forwarded-For": address}, httpx_kwargs={"timeout": 300})
                opened.append(page)
                return page

            step_once = replay_stepper(client(STEPPER), stepped)
            steps_alone += [step_once() for _ in range(steps)]
            idle_rss = rss_mb(pid)
            deadline = time.monotonic() + minutes * 60
            stop = threading.Event()

            def live_page(seed: int) -> None:
                page = client(HOG)
                while not stop.is_set():
                    try:
                        job = page.submit("heuristic", "random", "gen9randombattle", seed, 300,
                                          api_name="/battle_stream")
                        for event in job:
                            if stop.is_set():  # A leaves the page: its battle is not watched any more
                                job.cancel()
                                break
                            if isinstance(event, dict) and "error" in event:
                                note("live refused" if "limit per visitor" in event["error"] else "live error")
                                stop.wait(2)
                                break
                            if isinstance(event, dict) and event.get("done"):
                                note("live played")
                    except Exception:  # noqa: BLE001 - counted; the hog goes on
                        note("live failed")
                        stop.wait(2)
                    seed += 1000

            def compare_loop() -> None:
                per_pairing = max(2, (bounds.max_battles // 3) // 2 * 2)
                page = client(HOG)
                while not stop.is_set():
                    try:
                        seen: list[Any] = []
                        job = page.submit(["random", "maxdamage", "heuristic"], per_pairing, "gen9randombattle", "1",
                                          "score", "local", api_name="/compare_run")
                        for update in job:
                            seen[:] = [update]
                            if stop.is_set():
                                job.cancel()
                                break
                        last = seen[0] if seen else None
                        refused = "limit per visitor" in json.dumps(last, ensure_ascii=False, default=str)
                        note("compare refused" if refused else "compare run")
                        if refused:
                            stop.wait(5)
                    except Exception:  # noqa: BLE001
                        note("compare failed")
                        stop.wait(2)

            def analysis_loop() -> None:
                number = 0
                while not stop.is_set():
                    seen: list[str] = []
                    number += 1
                    page_event(url, "analysis_start", [analysed, bounds.max_k, "both"], f"hog-analyst-{number}",
                               seen=seen, headers={"X-Forwarded-For": HOG}, leave=stop).join()
                    note("analysis refused" if "limit per visitor" in " ".join(seen) else "analysis ran")
                    stop.wait(5)

            def upload_loop() -> None:
                number, page = 0, client(HOG)
                while not stop.is_set():
                    try:
                        out = page.predict(handle_file(str(heavy[number % len(heavy)])),
                                                  api_name="/replay_upload")
                        text = json.dumps(out, ensure_ascii=False)
                        note("upload stored" if "Uploaded" in text or "Already here" in text else
                             "upload refused" if "limit per visitor" in text or "MB of the" in text else
                             "upload other")
                    except Exception:  # noqa: BLE001
                        note("upload failed")
                    number += 1
                    stop.wait(3)

            def raw_posts() -> None:
                while not stop.is_set():
                    try:
                        answer = httpx.post(url + "gradio_api/upload",
                                            files={"files": ("x.bin", os.urandom(20 * 2**20))},
                                            headers={"X-Forwarded-For": HOG}, timeout=120)
                        note("raw upload refused" if answer.status_code == 429 else "raw upload stored")
                    except httpx.HTTPError:
                        note("raw upload failed")
                    stop.wait(10)

            def other_visitor() -> None:
                seed, page = 7, client(OTHER)
                while not stop.is_set():
                    began = time.perf_counter()
                    job = page.submit("heuristic", "random", "gen9randombattle", seed, 300,
                                               api_name="/battle_stream")
                    for event in job:
                        if isinstance(event, dict) and ("turn" in event or "decisions" in event or "done" in event):
                            first_turns.append(time.perf_counter() - began)
                            break
                        if isinstance(event, dict) and "error" in event:
                            note(f"other's live refused: {event['error'][:60]}")
                            break
                    job.cancel()
                    seed += 1
                    stop.wait(60)

            def sampler() -> None:
                while not stop.is_set():
                    rss.append((time.monotonic() - started_at, rss_mb(pid), children_rss_mb(pid)))
                    stop.wait(5)

            jobs = [threading.Thread(target=live_page, args=(n,), daemon=True) for n in range(pages)]
            jobs += [threading.Thread(target=f, daemon=True)
                     for f in (compare_loop, analysis_loop, upload_loop, raw_posts, other_visitor, sampler)]
            for job in jobs:
                job.start()
            time.sleep(5)
            while time.monotonic() < deadline:
                steps_loaded.append(step_once())
            stop.set()  # every visitor leaves: streams cancelled or closed, then the pages
            for job in jobs:
                job.join(120)
            for page in opened:
                page.close()
            loaded_rss = rss_mb(pid)
            quiet: list[float] = []  # quiet: does the serving process return near its idle figure?
            quiet_began = time.monotonic()
            while time.monotonic() - quiet_began < quiet_s:
                quiet.append(rss_mb(pid))
                time.sleep(min(10.0, max(0.0, quiet_s - (time.monotonic() - quiet_began))))
            quiet_rss = rss_mb(pid)
            gradio_temp = Path(tempfile.gettempdir(), "gradio")  # shared by every app on the machine: count ours
            temp_uploads = sum(p.stat().st_size for p in gradio_temp.rglob("*")
                               if p.is_file() and p.stat().st_mtime >= began_wall) / 2**20 \
                if gradio_temp.is_dir() else 0.0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    other = (harness.machine_busy() - started_busy) / max(1e-9, time.monotonic() - started_at)
    peak, peak_children = max(r[1] for r in rss), max(r[2] for r in rss)
    late = [r[1] for r in rss if r[0] >= 0.75 * minutes * 60] or [peak]
    return {"bounds": {"live_per_visitor": bounds.live_per_visitor, "heavy_per_visitor": bounds.heavy_per_visitor,
                       "uploads_per_hour": bounds.uploads_per_hour,
                       "upload_mb_per_visitor": bounds.upload_bytes_per_visitor / 2**20, "max_k": bounds.max_k},
            "cores": os.cpu_count(), "machine_busy_cores": other,
            "alone": summary(steps_alone), "loaded": summary(steps_loaded), "first_turn_s": first_turns,
            "got": dict(sorted(said.items())),
            "rss_mb": {"idle": idle_rss, "peak": peak, "load_stopped": loaded_rss, "after_quiet": quiet_rss,
                       "quiet": quiet, "last_quarter": [min(late), max(late)], "children_peak": peak_children},
            "temp_uploads_mb": temp_uploads}


def render(result: harness.Result) -> str:
    p, r = result.params, result.results
    b, m = r["bounds"], r["rss_mb"]

    quiet = f"{', '.join(f'{q:.0f}' for q in m['quiet'])} MB" if m["quiet"] else "no reading"
    return "\n".join([
        HEADING, "",
        f"`{result.command}`: the app on 127.0.0.1 with "
        f"its default quotas (per visitor: {b['live_per_visitor']} live battle, {b['heavy_per_visitor']} heavy "
        f"job, {b['uploads_per_hour']} uploads an hour, {b['upload_mb_per_visitor']:g} MB stored). "
        f"Visitor A asks for {p['pages']} live streams, the largest Compare, an analysis at K = {b['max_k']}, "
        f"{p['upload_mb']:g} MB uploads every 3 s and a 20 MB raw POST every 10 s, all at once and all the time; "
        "visitor B steps a replay; visitor C starts a live battle once a minute. "
        f"{r['cores']} cores; the whole machine was busy {r['machine_busy_cores']:.2f} cores on average (the app "
        "included).", "",
        harness.describe(result), "",
        "| visitor B's steps | n | median ms | p95 ms | worst ms |", "| --- | --- | --- | --- | --- |",
        steps_row("alone", r["alone"]), steps_row("while A hogs", r["loaded"]), "",
        f"Visitor C's first live turn: {', '.join(f'{s:.1f}' for s in r['first_turn_s']) or 'none'} s. "
        f"What A got: {', '.join(f'{k} {v}' for k, v in r['got'].items())}.", "",
        f"Serving process RSS: {m['idle']:.0f} MB idle, peak {m['peak']:.0f} MB, {m['load_stopped']:.0f} MB when the "
        f"load stopped, {m['after_quiet']:.0f} MB after {p['quiet_s']:.0f} s of quiet (goal ≤ 600 MB; the app dropped "
        f"sessions idle for {p['session_idle_s']:g} s; every 10 s of the quiet: {quiet}; "
        "every visitor had left: its streams cancelled or closed, its pages closed); in the run's last quarter it "
        f"ranged {m['last_quarter'][0]:.0f}–{m['last_quarter'][1]:.0f} MB; its children (simulators, the upload "
        f"checker) peaked at {m['children_peak']:.0f} MB together. This run left {r['temp_uploads_mb']:.0f} MB in "
        "Gradio's temporary folder (files older than an hour are deleted every 10 minutes). An upload the client "
        "could not send counts as failed: the upload route's per-address limit answers 429 before the event is "
        "called.",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--pages", type=int, default=6, help="live streams visitor A keeps asking for at once")
    parser.add_argument("--session-idle-s", type=float, default=120.0,
                        help="the app's WOLFECLICK_APP_SESSION_IDLE_S for the run")
    parser.add_argument("--quiet-s", type=float, default=None,
                        help="quiet seconds before the last RSS reading (default: the idle bound + 90 s)")
    parser.add_argument("--upload-mb", type=float, default=19.0, help="the size of each of A's heavy uploads")
    parser.add_argument("--steps", type=int, default=30, help="visitor B's steps alone, before the load")
    args = parser.parse_args(argv)
    quiet_s = args.quiet_s if args.quiet_s is not None else args.session_idle_s + 90
    if not 0.05 <= args.minutes <= 90 or not 1 <= args.pages <= 16 or not 0.1 <= args.upload_mb <= 19.9:
        parser.error("--minutes 0.05..90, --pages 1..16 and --upload-mb 0.1..19.9")
    with harness.measure() as run:
        results = measure(args.minutes, args.pages, args.session_idle_s, quiet_s, args.upload_mb, args.steps)
    params = {"minutes": args.minutes, "pages": args.pages, "session_idle_s": args.session_idle_s, "quiet_s": quiet_s,
              "upload_mb": args.upload_mb, "steps": args.steps}
    harness.finish(NAME, argv, params, results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
