"""App latency: cold start of `python app.py` to serving, and server-side time to render one replay step of a
300-turn battle. Written to the "## App" section of docs/benchmarks.md.

* Cold start: a fresh `python app.py` process (its own port, a copy of recordings/) until `GET /config` answers;
  the fastest of ``--starts`` runs and the median are reported. The process's memory map is then checked for
  libtorch, to show that no model library was loaded at start.
* Replay step: a 300-turn recording is built by repeating a real battle's decision points (renumbered turns,
  the same kind of content), saved, and stepped through with the app's own handler (`replay_next`, taken from the
  built Blocks): file already cached, render HTML + both figures, serialise the figures, build the share link.
  The first open (read, validate, narrate, prepare charts) is timed apart. A client round trip through the running
  server (gradio_client, same machine) is reported as well, for scale.

    .venv/bin/python scripts/bench_app.py [--starts 3] [--steps 300] [--no-write]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdoc import DOC, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HEADING = "## App"
BASE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"
LONG_ID = "bench-300-turns"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def long_recording(base_path: Path, turns: int = 300) -> dict:
    """A valid recording of ``turns`` game turns, made by repeating ``base_path``'s decision points."""
    base = json.loads(base_path.read_text(encoding="utf-8"))
    body = base["turns"][1:] or base["turns"]
    out = [json.loads(json.dumps(base["turns"][0]))]
    turn_no, previous_source = out[0]["turn"], out[0]["turn"]
    while turn_no < turns:
        for record in body:
            if record["turn"] != previous_source:  # decision points of one source turn stay in one turn
                turn_no += 1
            previous_source = record["turn"]
            if turn_no > turns:
                break
            copy = json.loads(json.dumps(record))
            copy["index"], copy["turn"] = len(out), turn_no
            copy["events"] = [f"|turn|{turn_no}" if e.startswith("|turn|") else e for e in copy["events"]]
            out.append(copy)
    turn_no = out[-1]["turn"]
    data = dict(base)
    data["id"] = LONG_ID
    data["turns"] = out
    data["log"] = [line for record in out for line in record["events"]] + ["|", f"|win|{base['players']['p1']['name']}"]
    data["result"] = {"winner": "p1", "reason": "win", "turns": turn_no, "error": None}
    return data


@contextlib.contextmanager
def running_app(recordings: Path, results: Path):  # type: ignore[no-untyped-def]
    """``python app.py`` on a free loopback port: yields (process, port, spawn time); Ctrl-C at the end."""
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
               WOLFECLICK_RECORDINGS=str(recordings), WOLFECLICK_RESULTS=str(results), GRADIO_ANALYTICS_ENABLED="False")
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield proc, port, started
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the app closes cleanly
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_until_serving(proc: subprocess.Popen, port: int) -> None:
    """Poll ``GET /config`` until the app answers (it exiting first is an error)."""
    import httpx

    while True:
        if proc.poll() is not None:
            raise RuntimeError("app.py exited before serving")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/config", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.02)


def cold_start(recordings: Path, results: Path) -> tuple[float, bool]:
    """Seconds from spawning `python app.py` to `GET /config` answering; and whether libtorch got mapped."""
    with running_app(recordings, results) as (proc, port, started):
        wait_until_serving(proc, port)
        elapsed = time.perf_counter() - started
        maps = Path(f"/proc/{proc.pid}/maps")
        torch_loaded = "libtorch" in maps.read_text() if maps.exists() else False
        return elapsed, torch_loaded


def step_times(recordings: Path, steps: int) -> dict[str, float]:
    os.environ["WOLFECLICK_SPRITES"] = "1"
    from wolfeclick.ui.app import build_app
    from wolfeclick.ui.library import Library

    lib = Library(recordings)
    demo = build_app(lib)
    fns = {f.api_name: f.fn for f in demo.fns.values() if f.api_name}
    started = time.perf_counter()
    view = lib.view(LONG_ID)
    first_open = time.perf_counter() - started
    n = len(view)
    fns["replay_next"](LONG_ID, 0, "p1", None)  # warm: Pokédex, code paths
    times = []
    for k in range(steps):
        step = (k * 7) % (n - 1)
        t = time.perf_counter()
        fns["replay_next"](LONG_ID, step, "p1", None)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()

    # the same step through Gradio's own processing (preprocess inputs, handler, postprocess outputs), in process
    import asyncio

    from gradio.state_holder import SessionState

    block_fn = next(f for f in demo.fns.values() if f.api_name == "replay_next")
    state = SessionState(demo)

    async def through_gradio() -> list[float]:
        await demo.process_api(block_fn, [LONG_ID, 0, "p1"], state)
        out = []
        for k in range(steps):
            t = time.perf_counter()
            await demo.process_api(block_fn, [LONG_ID, (k * 7) % (n - 1), "p1"], state)
            out.append((time.perf_counter() - t) * 1000)
        return sorted(out)

    gradio_times = asyncio.run(through_gradio())
    return {"decisions": n, "first_open_ms": first_open * 1000, "median_ms": statistics.median(times),
            "p95_ms": times[int(0.95 * (len(times) - 1))], "max_ms": times[-1],
            "gradio_median_ms": statistics.median(gradio_times),
            "gradio_p95_ms": gradio_times[int(0.95 * (len(gradio_times) - 1))]}


def round_trip(recordings: Path, results: Path, steps: int) -> float:
    """Median ms of a replay_next call from gradio_client to the running app on the same machine."""
    from gradio_client import Client

    with running_app(recordings, results) as (proc, port, _):
        wait_until_serving(proc, port)
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        client.predict(LONG_ID, "p1", api_name="/replay_open")
        times = []
        for k in range(steps):
            t = time.perf_counter()
            client.predict(LONG_ID, k, "p1", api_name="/replay_next")
            times.append((time.perf_counter() - t) * 1000)
        return statistics.median(times)


def section(starts: list[float], torch_loaded: bool, steps: dict[str, float], rt_ms: float, n_steps: int) -> str:
    cpu = platform.processor() or platform.machine()
    lines = [
        HEADING,
        "",
        f"`scripts/bench_app.py` on {os.cpu_count()} CPU cores ({cpu}), Python {platform.python_version()}; "
        f"measured {time.strftime('%Y-%m-%d')} with a load average of {os.getloadavg()[0]:.1f} "
        f"(other work on the machine slows the cold start; gradio's own import is about 2.3 s of it).",
        "",
        "| what | goal | measured |",
        "| --- | --- | --- |",
        f"| cold start: `python app.py` to `GET /config` answering (fastest / median of {len(starts)}) | ≤ 5 s | "
        f"{min(starts):.2f} s / {statistics.median(starts):.2f} s |",
        f"| libtorch loaded at start | no (models load on first use) | {'yes' if torch_loaded else 'no'} |",
        f"| one replay step, server side (handler: render HTML + 2 figures + link), {steps['decisions']} decision "
        f"points over 300 turns, median / p95 / max of {n_steps} | ≤ 50 ms | {steps['median_ms']:.1f} / "
        f"{steps['p95_ms']:.1f} / {steps['max_ms']:.1f} ms |",
        f"| the same step including Gradio's pre- and postprocessing (`Blocks.process_api`, in process), median / "
        f"p95 | ≤ 50 ms | {steps['gradio_median_ms']:.1f} / {steps['gradio_p95_ms']:.1f} ms |",
        f"| first open of that replay (read, validate, narrate, prepare charts; cached afterwards) | – | "
        f"{steps['first_open_ms']:.0f} ms |",
        f"| one step as a gradio_client round trip on the same machine (median of {min(n_steps, 50)}) | – | "
        f"{rt_ms:.0f} ms |",
        "",
        "The step time is what the server spends per click (or per tick while playing); the rest of a round trip is "
        "Gradio's queue and the transfer (for this battle: HTML about 13 KB, the two figures about 8 and 11 KB).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="cold starts to time")
    parser.add_argument("--steps", type=int, default=300, help="replay steps to time")
    parser.add_argument("--no-write", action="store_true", help="print the section instead of writing it")
    args = parser.parse_args()

    from wolfeclick.battle.schema import Recording

    work = Path(tempfile.mkdtemp(prefix="wolfeclick-bench-app-"))
    try:
        recordings, results = work / "recordings", work / "results"
        recordings.mkdir()
        for path in (ROOT / "recordings").glob("*.json"):
            shutil.copy(path, recordings / path.name)
        data = long_recording(BASE)
        Recording.model_validate(data)
        (recordings / f"{LONG_ID}.json").write_text(json.dumps(data), encoding="utf-8")

        starts, torch_loaded = [], False
        for _ in range(args.starts):
            seconds, loaded = cold_start(recordings, results)
            starts.append(seconds)
            torch_loaded = torch_loaded or loaded
            print(f"cold start {seconds:.2f} s (libtorch mapped: {loaded})", flush=True)
        steps = step_times(recordings, args.steps)
        print(f"replay step: {steps}", flush=True)
        rt = round_trip(recordings, results, min(args.steps, 50))
        print(f"round trip median {rt:.1f} ms", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = section(starts, torch_loaded, steps, rt, args.steps)
    if args.no_write:
        print(text)
    else:
        write_section(HEADING, text)
        print(f"wrote the {HEADING!r} section of {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
