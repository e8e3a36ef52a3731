"""Heavy uploads against another session's stepping (issue 28, item 5), on the real app at 127.0.0.1.

    .venv/bin/python -m benchmarks.upload_load [--uploads 3] [--mb 19] [--steps 40]

Starts ``app.py`` on a free local port with a fresh library holding one small recording, then:

1. baseline: client B steps that replay (``/replay_turn``) ``--steps`` times, alone;
2. load: client A uploads ``--uploads`` heavy recordings (each about ``--mb`` MB: a real battle's turns repeated,
   every one valid and distinct) one after another through ``/replay_upload`` (checked in the upload worker,
   stored, opened), while B keeps stepping until A is done.

It reports B's step latency (median, p95, worst) alone and under load, each upload's time, and the serving
process's RSS (sampled every 0.1 s from /proc) against the view budget. Bounded: a few uploads, a few minutes at
most; the server binds 127.0.0.1 only and is stopped at the end. Exits 1 if an upload failed (the result is still
written).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from devkit.appserver import rss_mb, running_app

NAME = "upload_load"
HEADING = "## Uploads under load"
SAMPLE = harness.ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"


def heavy_recording(mb: float, tag: int) -> bytes:
    """A valid recording of about ``mb`` MB: the sample's decisions repeated (indices renumbered), distinct per tag."""
    from wolfeclick.battle.store import parse_recording

    data = json.loads(SAMPLE.read_text())
    turns = data["turns"]
    one = len(json.dumps(turns[0], separators=(",", ":")))
    wanted = int(mb * 1e6 / max(one, 1))
    data["turns"] = []
    for index in range(wanted):
        turn = copy.deepcopy(turns[index % len(turns)])
        turn["index"] = index
        data["turns"].append(turn)
    data["id"] = f"heavy-{tag}"
    text = json.dumps(data, separators=(",", ":")).encode()
    while len(text) > 19.9 * 1024 * 1024:  # stay under the 20 MB limit
        data["turns"].pop()
        text = json.dumps(data, separators=(",", ":")).encode()
    parse_recording(text)
    return text


def worker_pid() -> int | None:
    """The upload worker (``python -m wolfeclick.ui.uploads``), wherever it runs."""
    for entry in Path("/proc").iterdir():
        if entry.name.isascii() and entry.name.isdigit():
            try:
                if b"wolfeclick.ui.uploads" in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                continue
    return None


def summary(values: list[float]) -> dict[str, float]:
    """n, median, p95 (``harness.percentile``) and worst of step times, in ms."""
    return {"n": len(values), "median_ms": statistics.median(values) * 1000,
            "p95_ms": harness.percentile(values, 0.95) * 1000, "worst_ms": max(values) * 1000}


def measure(uploads: int, mb: float, steps_alone: int) -> dict[str, Any]:
    from gradio_client import handle_file

    from devkit.appserver import app_client

    root = Path(tempfile.mkdtemp(prefix="wolfeclick-upload-bench-"))
    library, files = root / "recordings", root / "uploads"
    library.mkdir()
    files.mkdir()
    shutil.copy(SAMPLE, library / SAMPLE.name)
    heavy = []
    for n in range(uploads):
        path = files / f"heavy-{n}.json"
        path.write_bytes(heavy_recording(mb, n))
        heavy.append(path)
    heavy_size = sum(p.stat().st_size for p in heavy) / len(heavy) / 1e6
    try:
        with running_app(root) as (url, server_pid):
            stepper, uploader = app_client(url), app_client(url)
            steps = stepper.predict(SAMPLE.stem, 0, "p1", api_name="/replay_turn")["steps"]

            def step_once(k: int) -> float:
                started = time.perf_counter()
                out = stepper.predict(SAMPLE.stem, k % steps, "p1", api_name="/replay_turn")
                assert "error" not in out, out
                return time.perf_counter() - started

            for k in range(5):
                step_once(k)  # warm
            alone = [step_once(k) for k in range(steps_alone)]
            rss: list[float] = []
            worker_rss: list[float] = []
            done = threading.Event()
            load_start = os.getloadavg()[0]

            def sample() -> None:
                checker = None
                while not done.is_set():
                    rss.append(rss_mb(server_pid))
                    checker = checker or worker_pid()
                    if checker is not None:
                        worker_rss.append(rss_mb(checker))
                    time.sleep(0.1)

            upload_s: list[float] = []
            errors: list[str] = []

            def upload_all() -> None:
                try:
                    for path in heavy:
                        started = time.perf_counter()
                        out = uploader.predict(handle_file(str(path)), api_name="/replay_upload")
                        upload_s.append(time.perf_counter() - started)
                        if "Uploaded" not in json.dumps(out, ensure_ascii=False):
                            errors.append(str(out)[:200])
                finally:
                    done.set()

            idle_rss = rss_mb(server_pid)
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            worker = threading.Thread(target=upload_all, daemon=True)
            worker.start()
            loaded: list[float] = []
            k = 0
            while not done.is_set() or not loaded:
                loaded.append(step_once(k))
                k += 1
            worker.join()
            sampler.join()
            after_rss = rss_mb(server_pid)
            load_end = os.getloadavg()[0]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"heavy_mb": heavy_size, "alone": summary(alone), "loaded": summary(loaded), "upload_s": upload_s,
            "errors": errors, "rss_mb": {"before": idle_rss, "peak": max(rss or [0]), "after": after_rss},
            "worker_peak_mb": max(worker_rss or [0]), "phase_load": [load_start, load_end],
            "times_s": {"alone": alone, "loaded": loaded}}



def steps_row(name: str, s: dict[str, float]) -> str:
    """One table row of a stepping client's times (n, median, p95, worst in ms), dashes when it took no step;
    shared with ``benchmarks.public_load``."""
    if not s["n"]:
        return f"| {name} | 0 | – | – | – |"
    return f"| {name} | {s['n']} | {s['median_ms']:.0f} | {s['p95_ms']:.0f} | {s['worst_ms']:.0f} |"

def render(result: harness.Result) -> str:
    p, r = result.params, result.results

    errors = r["errors"]
    rss = r["rss_mb"]
    return "\n".join([
        HEADING, "",
        f"`{result.command}`: the app on 127.0.0.1; client A uploads {p['uploads']} recordings of "
        f"{r['heavy_mb']:.1f} MB one after another (checked in the upload worker process and stored; a file over 4 MB "
        "is not opened for its uploader), client B steps a 33-decision replay with `/replay_turn` meanwhile. Load "
        f"average {r['phase_load'][0]:.1f} at the start of the load phase and {r['phase_load'][1]:.1f} at its end "
        "(the absolute times carry whatever else the machine ran).", "",
        harness.describe(result), "",
        "| client B's steps | n | median ms | p95 ms | worst ms |", "| --- | --- | --- | --- | --- |",
        steps_row("alone", r["alone"]), steps_row("while A uploads", r["loaded"]), "",
        f"Uploads took {', '.join(f'{s:.1f}' for s in r['upload_s'])} s"
        + (f" ({len(errors)} failed: {errors[0]})" if errors else "") + ". "
        f"Serving process RSS: {rss['before']:.0f} MB before, peak {rss['peak']:.0f} MB during, {rss['after']:.0f} MB "
        "after, against the 384 MB view budget (`Library.cache_bytes`) plus a margin of one heavy file's parse "
        "(`HEAVY_BYTES` files are parsed one at a time; about 6 × 20 MB = 120 MB). The check itself runs in the "
        f"worker process: peak {r['worker_peak_mb']:.0f} MB there, a separate process whose memory the serving "
        "process's RSS above does not include.",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=3)
    parser.add_argument("--mb", type=float, default=19.0)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args(argv)
    if not 1 <= args.uploads <= 8 or not 0.1 <= args.mb <= 19.9:
        parser.error("--uploads 1..8 and --mb 0.1..19.9")
    with harness.measure() as run:
        results = measure(args.uploads, args.mb, args.steps)
    harness.finish(NAME, argv, {"uploads": args.uploads, "mb": args.mb, "steps": args.steps}, results, run,
                   args.results)
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
