"""App latency and memory: cold start, the client viewer's key-press → redraw time in a real browser, the server
side of a replay step, and the app process's memory idle, after 200 battles and with 16 large uploads open.
Its result renders the "## App" section of docs/benchmarks.md; ``--start-only`` and ``--viewer-only`` runs are
results of their own (``benchmarks.app_start``, ``benchmarks.app_viewer``) with sections of their own.

* Cold start: a fresh `python app.py` process (its own port, a copy of recordings/) until `GET /config` answers;
  the fastest of ``--starts`` runs and the median are reported; libtorch must not be mapped at start.
* Viewer (headless Chromium over the DevTools protocol, like tests/test_ui_browser.py), at desktop width (1400 px)
  and phone width (414 px, mobile emulation): a 300-turn recording (a real battle's decision points repeated,
  turns renumbered) is opened by share link; ``--keys`` real → key presses are sent as a key held down (each as
  soon as the previous one is painted), then ``--keys`` more as a person presses them (at most one every 150 ms,
  let go once the step is drawn), and the page itself measures, with performance.now(), the time from the keydown
  event to the redrawn panel and chart markers (``sync``) and to the painted frame (``paint``: a message posted
  from the next animation frame runs once it is painted). Play at 8/s for 5 s is counted in the page; Pause is pressed at each speed and
  the steps taken after it are counted. A 900-turn replay (more than one payload) is opened and End pressed: the
  time until the end is painted, and whether the page stayed (no reload).
* Server side: the first open (read, validate, narrate, build the viewer payload) and one `/replay_turn` step
  (the API's bounded panel), in process; a gradio_client round trip for scale.
* Memory (RSS of the app's Python process; the simulator's Node processes are apart): idle after the first page
  load, after ``--battles`` battles through `/battle_stream` (4 clients at once), and after 16 distinct large
  uploads (``--upload-mb`` each) were uploaded and opened.

    .venv/bin/python -m benchmarks.app [--starts 3] [--keys 200] [--battles 200] [--upload-mb 8] [--uploads 16]
        [--widths [desktop] [phone]]
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks import harness
from benchmarks.harness import ROOT, percentile
from devkit.appserver import free_port
from devkit.browser import CHROMIUM_FLAGS, Browser
from devkit.samples import SAMPLES, long_recording

NAME = "app"
HEADING = "## App"
VIEWER_HEADING = "## App: key → painted frame, where the time goes (issue 27)"
BASE_FLAGS = list(CHROMIUM_FLAGS)
HUGE_ID = "bench-900-turns"
BASE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"
LONG_ID = "bench-300-turns"


@contextlib.contextmanager
def running_app(recordings: Path, results: Path, python: str = sys.executable):  # type: ignore[no-untyped-def]
    """``python app.py`` on a free loopback port: yields (process, port, spawn time); Ctrl-C at the end."""
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
               WOLFECLICK_RECORDINGS=str(recordings), WOLFECLICK_RESULTS=str(results), GRADIO_ANALYTICS_ENABLED="False")
    started = time.perf_counter()
    proc = subprocess.Popen([python, str(ROOT / "app.py")], cwd=ROOT, env=env,
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
    """Wait for ``GET /config`` to answer (the app exiting first is an error). Polls with a bare TCP connect every
    20 ms and asks once the port takes connections: a new HTTP client per poll costs CPU that, on 2 cores, the
    starting app would otherwise have had."""
    import http.client

    while True:
        if proc.poll() is not None:
            raise RuntimeError("app.py exited before serving")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/config")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.02)


def precompile(python: str) -> None:
    """Byte-compile the package, as ``pip install`` does for a wheel: a checkout compiles its modules once, at its
    first start, unless PYTHONDONTWRITEBYTECODE is set (this sandbox sets it), and then at every start (~0.3 s)."""
    subprocess.run([python, "-m", "compileall", "-q", str(ROOT / "wolfeclick"), str(ROOT / "app.py")], check=True,
                   stdout=subprocess.DEVNULL)


def venv_extras(python: str) -> str:
    """Which optional stacks the interpreter's venv has installed: the app must start without importing them."""
    probe = ("import importlib.util as u; print(' '.join(m for m in ('torch', 'trl', 'ray', 'mcp', 'pyarrow', "
             "'pytest') if u.find_spec(m)))")
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.strip() or "none"


def cold_start(recordings: Path, results: Path) -> tuple[float, bool]:
    """Seconds from spawning `python app.py` to `GET /config` answering; and whether libtorch got mapped."""
    with running_app(recordings, results) as (proc, port, started):
        wait_until_serving(proc, port)
        elapsed = time.perf_counter() - started
        maps = Path(f"/proc/{proc.pid}/maps")
        torch_loaded = "libtorch" in maps.read_text() if maps.exists() else False
        return elapsed, torch_loaded


START_HEADING = "## App: cold start and idle memory"


def spread(values: list[float]) -> list[float]:
    """[fastest, median, slowest]."""
    return [min(values), statistics.median(values), max(values)]


def start_figures(recordings: Path, results: Path, starts: int, python: str = sys.executable) -> dict[str, Any]:
    """Cold starts of ``python app.py`` (spawn to ``GET /config``) and the idle RSS after the first page load, with
    the heavy modules the process ended up holding: the goal is <= 3 s and <= 250 MB on a quiet machine."""
    import httpx
    import psutil

    precompile(python)
    extras = venv_extras(python)
    times, rss, stops, mapped = [], [], [], set()
    for _ in range(starts):
        with running_app(recordings, results, python) as (proc, port, started):
            wait_until_serving(proc, port)
            times.append(time.perf_counter() - started)
            httpx.get(f"http://127.0.0.1:{port}/", timeout=60)
            time.sleep(2)  # idle: the first page served, nothing asked since
            rss.append(psutil.Process(proc.pid).memory_info().rss / 2**20)
            maps = Path(f"/proc/{proc.pid}/maps").read_text()
            mapped |= {lib for lib in ("libtorch", "libray") if lib in maps}
            stopping = time.perf_counter()
            proc.send_signal(signal.SIGINT)  # Ctrl-C, as running_app would: timed to the process's end
            proc.wait(60)
            stops.append(time.perf_counter() - stopping)
        print(f"cold start {times[-1]:.2f} s, idle RSS {rss[-1]:.0f} MB, Ctrl-C to exit {stops[-1]:.2f} s", flush=True)
    as_app = "from wolfeclick.ui.app_process import prepare_app_process\nprepare_app_process()\nimport gradio"
    plain = "from wolfeclick.ui.app_process import keep_unused_stacks_out\nkeep_unused_stacks_out()\nimport gradio"
    floor: list[float] = []  # importing Gradio as the app's process does: the part of a cold start the app cannot cut
    stock: list[float] = []  # a plain import, Gradio re-deriving its type stubs: what the app's process skips
    for _ in range(starts):
        for code, into in ((as_app, floor), (plain, stock)):
            started = time.perf_counter()
            subprocess.run([python, "-c", code], check=True)
            into.append(time.perf_counter() - started)
    print(f"import gradio as the app does: {statistics.median(floor):.2f} s, plain: {statistics.median(stock):.2f} s "
          "(medians)", flush=True)
    return {"extras": extras, "start_s": spread(times), "idle_rss_mb": spread(rss), "stop_s": spread(stops),
            "mapped": sorted(mapped), "gradio_as_app_s": spread(floor), "gradio_plain_s": spread(stock),
            "times_s": {"start": times, "rss_mb": rss, "stop": stops, "gradio_as_app": floor, "gradio_plain": stock}}


def render_start(result: harness.Result) -> str:
    """``--start-only``'s section."""
    r = result.results

    def cells(values: list[float], unit: str, digits: int) -> str:
        return " | ".join(f"{v:.{digits}f} {unit}" for v in values)

    return "\n".join([
        START_HEADING,
        "",
        f"`{result.command}`. Optional stacks installed in the app's venv: {r['extras']} (the app imports "
        "none of them at start; `make run` installs the app and llm extras only). The package is byte-compiled "
        "first, as a wheel install does.",
        "",
        harness.describe(result),
        "",
        "| what | goal | fastest | median | slowest |",
        "| --- | --- | --- | --- | --- |",
        f"| `python app.py` to `GET /config` answering | <= 3 s | {cells(r['start_s'], 's', 2)} |",
        f"| RSS idle after the first page load | <= 250 MB | {cells(r['idle_rss_mb'], 'MB', 0)} |",
        *([f"| Ctrl-C to the process's end (idle, after that page) | – | {cells(r['stop_s'], 's', 2)} |"]
          if "stop_s" in r else []),  # results from before 2026-12-07 did not time it
        f"| libtorch or Ray mapped at start | no | {', '.join(r['mapped']) or 'no'} | | |",
        "| of the start: a Python process that only imports Gradio 6.31 as the app's does (mcp kept out, no stub "
        f"rewrites) | – | {cells(r['gradio_as_app_s'], 's', 2)} |",
        "| for comparison: a plain `import gradio` (mcp kept out; Gradio re-derives its type stubs) | – | "
        f"{cells(r['gradio_plain_s'], 's', 2)} |",
        "",
    ])


def step_times(recordings: Path, steps: int) -> dict[str, float]:
    """Server side, in process: the first open (view + payload) and /replay_turn steps of the long replay."""
    os.environ["WOLFECLICK_SPRITES"] = "1"
    from wolfeclick.ui.battle_panels import sprite_url
    from wolfeclick.ui.context import AppContext
    from wolfeclick.ui.library import Library
    from wolfeclick.ui.tabs.api import replay_turn
    from wolfeclick.ui.viewer_payload import battle_payload, to_json

    sprite_url("Pikachu")  # the app warms this at start
    ctx = AppContext.from_env(Library(recordings))
    started = time.perf_counter()
    view = ctx.library.view(LONG_ID)
    payload = to_json(battle_payload(view, replay_id=LONG_ID))
    first_open = time.perf_counter() - started
    n = view.steps
    replay_turn(ctx, LONG_ID, 0)
    times, sizes = [], []
    for k in range(steps):
        t = time.perf_counter()
        out = replay_turn(ctx, LONG_ID, (k * 7) % n)
        times.append((time.perf_counter() - t) * 1000)
        sizes.append(len(json.dumps(out)))
    times.sort()
    return {"decisions": len(view), "first_open_ms": first_open * 1000, "payload_kb": len(payload) / 1024,
            "median_ms": statistics.median(times), "p95_ms": percentile(times, 0.95),
            "step_kb": max(sizes) / 1024}


def round_trip(port: int, steps: int) -> float:
    """Median ms of a /replay_next call from gradio_client to the running app on the same machine."""
    from devkit.appserver import app_client

    client = app_client(f"http://127.0.0.1:{port}/")
    client.predict(LONG_ID, "p1", api_name="/replay_open")
    times = []
    for k in range(steps):
        t = time.perf_counter()
        client.predict(LONG_ID, k, "p1", api_name="/replay_next")
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


PAINT_PROBE = """(() => {
  window.__wcPaint = [];
  window.addEventListener('keydown', (e) => {  // before the viewer's own handler: the key's own time stamp
    const t0 = e.timeStamp;
    requestAnimationFrame(() => {  // the frame that draws the step; the message runs once it is painted
      const ch = new MessageChannel();
      ch.port1.onmessage = () => window.__wcPaint.push(performance.now() - t0);
      ch.port2.postMessage(null);
    });
  }, true);
  return true;
})()"""
"""Key → painted frame, measured in the page: from the keydown event's time stamp to a message posted from the
next animation frame (it runs after that frame's style, layout and paint: the step is on screen)."""
WIDTHS = {"desktop": (1400, 1800, False), "phone": (414, 900, True)}
PENDING = "[data-testid=status-tracker].translucent:not(.hide), [data-testid=status-tracker].pending"
EMPTY_PAGE = ("data:text/html,<p id=n>0</p><script>addEventListener('keydown', () => "
              "{ n.textContent = String(Number(n.textContent) + 1); })</script>")
"""A page that only counts keys: its key → painted frame is what headless Chromium's frame scheduling costs."""


def empty_page_paint(keys: int, width: str) -> dict[str, float]:
    """Key → painted frame on EMPTY_PAGE, a person's presses measured like the viewer's (the floor no page can go
    under here)."""
    w, h, mobile = WIDTHS[width]
    with Browser(width=w, height=h) as browser:
        browser.call("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1, mobile=mobile)
        browser.open(EMPTY_PAGE)
        browser.wait_for("document.getElementById('n') !== null")
        browser.evaluate(PAINT_PROBE)
        press_keys(browser, keys, held=False)
        paint = browser.evaluate("window.__wcPaint")
    return {"paint_median": statistics.median(paint), "paint_p95": percentile(paint, 0.95)}


def _key(browser, kind: str, key: str = "ArrowRight") -> None:
    code = {"ArrowRight": 39, "End": 35, "Home": 36}[key]
    browser.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code,
                 nativeVirtualKeyCode=code)


def _press(browser, key: str = "ArrowRight") -> None:
    for kind in ("keyDown", "keyUp"):
        _key(browser, kind, key)


PERSON_GAP = 0.15
"""Seconds from one key press to the next when a person steps key by key (about 6 presses a second)."""


def press_keys(browser, keys: int, held: bool) -> None:
    """``keys`` → presses, each once the last one's step is painted. A person (``held`` false) presses a key at
    most every PERSON_GAP seconds and lets it go once the step is drawn; a held key (``held``: the keyboard's
    auto-repeat, or a person hammering the key) presses the next one as soon as the last is painted, while that
    frame is still being rastered and drawn on the page's other threads. The next key is never pressed before the
    last one is painted."""
    for k in range(keys):
        began = time.perf_counter()
        if held:
            _press(browser)
            browser.wait_for(f"window.__wcPaint.length >= {k + 1}", timeout=30)
            continue
        _key(browser, "keyDown")
        browser.wait_for(f"window.__wcPaint.length >= {k + 1}", timeout=30)
        _key(browser, "keyUp")
        time.sleep(max(0.0, began + PERSON_GAP - time.perf_counter()))


def viewer_timings(port: int, keys: int, width: str = "desktop") -> dict[str, float]:
    """Key press → redraw and → painted frame, Play at 8/s and Pause at every speed, measured in a real page at
    ``width`` (desktop 1400 px, or a 414 px phone: mobile emulation)."""
    view = "document.querySelector('#wc-replays-viewer')"
    out: dict[str, float] = {}
    w, h, mobile = WIDTHS[width]
    with Browser(width=w, height=h) as browser:
        browser.call("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1, mobile=mobile)
        browser.open(f"http://127.0.0.1:{port}/?replay={LONG_ID}&turn=1")
        browser.wait_for(f"{view}?.querySelector('.wc-turn')?.dataset.turn === '1'", timeout=120)
        # a person steps once the page has loaded: the Live tab's hardware check (a load event) can take 10+ s
        # under load, and its hidden "processing" tracker animates every frame until it answers
        browser.wait_for(f"!document.querySelector({json.dumps(PENDING)})", timeout=180)
        browser.evaluate("document.activeElement && document.activeElement.blur()")
        out["steps"] = browser.evaluate("window.__wcViewers.replays.state.total")
        browser.evaluate(PAINT_PROBE)
        # a key held down first (the page must not fall behind), then a person's presses from where that ended
        press_keys(browser, keys, held=True)
        held = browser.evaluate("window.__wcPaint")
        out.update(held_paint_median=statistics.median(held), held_paint_p95=percentile(held, 0.95))
        browser.evaluate("window.__wcPaint = []; window.__wcTimings = []")
        press_keys(browser, keys, held=False)
        timings = browser.evaluate("window.__wcTimings")
        paint = browser.evaluate("window.__wcPaint")
        sync = [t["sync"] for t in timings]
        frame = [t["frame"] for t in timings]
        handler = [t["handler"] for t in timings]
        out.update(handler_median=statistics.median(handler), handler_p95=percentile(handler, 0.95))
        out.update(keys=len(timings), sync_median=statistics.median(sync), sync_p95=percentile(sync, 0.95),
                   frame_median=statistics.median(frame), frame_p95=percentile(frame, 0.95),
                   paint_median=statistics.median(paint), paint_p95=percentile(paint, 0.95))
        # Play at 8/s for 5 s, counted in the page
        play = f"{view}.querySelector('[data-act=play]').click()"
        speed = (f"(s => {{ const e = {view}.querySelector('[data-role=speed]'); e.value = s;"
                 "e.dispatchEvent(new Event('change')); })")
        started = browser.evaluate(f"(() => {{ try {{ window.__wcViewers.replays.show(0); {speed}('8'); "
                                   f"window.__wcPlayTicks = []; {play}; return 'ok'; }} catch (e) {{ return String(e); }} }})()")
        assert started == "ok", started
        time.sleep(5.2)
        browser.evaluate(play)
        ticks = browser.evaluate("window.__wcPlayTicks")
        out["play8_rate"] = (len(ticks) - 1) / ((ticks[-1] - ticks[0]) / 1000) if len(ticks) > 1 else 0.0
        # Pause at every speed: steps taken after Pause was pressed
        extra = []
        for value in ("1", "2", "4", "8"):
            browser.evaluate(f"window.__wcViewers.replays.show(0); {speed}('{value}'); {play}")
            time.sleep(max(0.8, 2.5 / float(value)))
            at = browser.evaluate(f"(() => {{ {play}; return window.__wcViewers.replays.state.index; }})()")
            time.sleep(max(1.0, 2 / float(value)))
            extra.append(browser.evaluate("window.__wcViewers.replays.state.index") - at)
        out["pause_extra_max"] = max(extra)
    return out


def browser_figures(port: int, keys: int, widths: Sequence[str] = tuple(WIDTHS)) -> dict[str, dict[str, float]]:
    out = {}
    for width in widths:
        out[width] = viewer_timings(port, keys, width)
        out[width].update({f"empty_{k}": v for k, v in empty_page_paint(keys, width).items()})
        print(f"viewer {width}: {out[width]}", flush=True)
    out["long"] = long_replay_end(port)
    print(f"long replay: {out['long']}", flush=True)
    return out


def long_replay_end(port: int) -> dict[str, float]:
    """A replay longer than one payload: End (outside the window the page holds) until the end is painted, in the
    page; and whether the page stayed the same page (the old viewer reloaded it, 17–23 s)."""
    view = "document.querySelector('#wc-replays-viewer')"
    with Browser() as browser:
        browser.open(f"http://127.0.0.1:{port}/?replay={HUGE_ID}&turn=1")
        browser.wait_for(f"{view}?.querySelector('.wc-turn')?.dataset.turn === '1'", timeout=180)
        browser.evaluate("document.activeElement && document.activeElement.blur()")
        total = browser.evaluate("window.__wcViewers.replays.state.total")
        held = browser.evaluate("window.__wcViewers.replays.state.panels.filter(p => p !== undefined).length")
        browser.evaluate("window.__wcSame = 1; window.__wcT0 = performance.now()")
        _press(browser, "End")
        browser.wait_for(f"{view}.querySelector('.wc-turn')?.textContent === 'End'", timeout=120)
        ms = browser.evaluate("performance.now() - window.__wcT0")
        same = browser.evaluate("window.__wcSame === 1")
    return {"steps": total, "held": held, "end_ms": ms, "same_page": same}


def rss_mb(pid: int) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def memory(proc: subprocess.Popen, port: int, work: Path, battles: int, upload_mb: float,
           uploads: int = 16) -> dict[str, float]:
    """RSS of the app process: idle, after ``battles`` battles, after ``uploads`` large uploads opened."""
    import threading

    from gradio_client import handle_file

    from devkit.appserver import app_client

    client = app_client(f"http://127.0.0.1:{port}/")
    client.predict(api_name="/list_replays")
    client.predict(LONG_ID, "p1", api_name="/replay_open")
    time.sleep(1)
    out = {"idle": rss_mb(proc.pid)}
    marks: list[tuple[int, float]] = [(0, out["idle"])]
    done = [0]
    lock = threading.Lock()

    def play(offset: int, count: int) -> None:
        c = app_client(f"http://127.0.0.1:{port}/")
        for k in range(count):
            for _ in c.submit("random", "random", "gen4randombattle", 10_000 + offset * count + k, 300,
                              api_name="/battle_stream"):
                pass
            with lock:
                done[0] += 1
                if done[0] % 50 == 0:
                    marks.append((done[0], rss_mb(proc.pid)))

    threads = [threading.Thread(target=play, args=(n, battles // 4)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["after_battles"] = rss_mb(proc.pid)
    out["battles"] = done[0]
    half = [m for m in marks if m[0] >= battles // 2]
    out["growth_kb_per_battle"] = ((marks[-1][1] - half[0][1]) * 1024 / max(1, marks[-1][0] - half[0][0])
                                   if half and marks[-1][0] > half[0][0] else 0.0)
    # distinct large uploads, each opened (the upload opens it)
    turns = 300
    sample = json.dumps(long_recording(LONG_ID, turns, BASE), separators=(",", ":"))
    turns = max(300, int(turns * upload_mb * 1e6 / len(sample)))
    sizes = []
    for n in range(uploads):
        data = long_recording(LONG_ID, turns, BASE)
        data["seed"] = 900 + n
        path = work / f"upload-{n}.json"
        path.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        sizes.append(path.stat().st_size)
        client.predict(handle_file(str(path)), api_name="/replay_upload")
    out["after_uploads"] = rss_mb(proc.pid)
    out["upload_mb"] = statistics.mean(sizes) / 1e6
    out["uploads"] = uploads
    return out


def viewer_rows(viewer: dict[str, dict[str, float]]) -> list[str]:
    """The browser's rows, one block per width."""
    rows = []
    for width, v in viewer.items():
        if width == "long":
            rows.append(f"| a {v['steps']:.0f}-step replay (the page holds {v['held']:.0f} steps at first): End → the "
                        f"end painted, windows fetched in the background | no reload | {v['end_ms']:.0f} ms, "
                        f"{'same page' if v['same_page'] else 'page reloaded'} |")
            continue
        at = f"{width}, {'414' if width == 'phone' else '1400'} px"
        rows += [
            f"| {at}: key press → **painted frame** (→ key, {v['keys']:.0f} presses, {v['steps']:.0f} steps over 300 "
            f"turns; a person's presses, one every {PERSON_GAP * 1000:.0f} ms at most), median / p95 | ≤ 16 ms / ≤ 50 "
            f"ms | {v['paint_median']:.1f} / {v['paint_p95']:.1f} ms |",
            f"| {at}: the same with the key held down (each press as soon as the last step is painted), median / "
            f"p95 | – | {v['held_paint_median']:.1f} / {v['held_paint_p95']:.1f} ms |",
            f"| {at}: the same on a page that only counts keys (headless Chromium's frame scheduling), median / p95 "
            f"| – | {v['empty_paint_median']:.1f} / {v['empty_paint_p95']:.1f} ms |",
            f"| {at}: key press → redrawn view and both chart markers (synchronous part), median / p95 | – | "
            f"{v['sync_median']:.1f} / {v['sync_p95']:.1f} ms |",
            f"| {at}: of which the viewer's own key handler, median / p95 | – | "
            f"{v['handler_median']:.1f} / {v['handler_p95']:.1f} ms |",
            f"| {at}: Play at 8/s, steps per second delivered in the page (5 s) | 8 ± 10% | {v['play8_rate']:.2f}/s |",
            f"| {at}: steps taken after Pause, worst of speeds 1, 2, 4, 8 | ≤ 1 | {v['pause_extra_max']:.0f} |",
        ]
    return rows


def render_viewer(result: harness.Result) -> str:
    """``--viewer-only``'s section: the browser's figures."""
    r = result.results
    return "\n".join([
        VIEWER_HEADING, "",
        f"`{result.command}`: Debian chromium headless (phone: 414×900 with mobile emulation). Chromium flags: "
        f"`{' '.join(r['chromium_flags'])}`.",
        "",
        harness.describe(result),
        "",
        "| what | goal | measured |", "| --- | --- | --- |", *viewer_rows(r["viewer"]), "",
        "Painted frame: from the keydown event's time stamp to a message posted from the next animation frame, "
        "which runs once that frame's style, layout, paint and commit are done on the page's main thread. A step "
        "reads no layout (`tests/test_ui_stepping_layout_browser.py::test_stepping_forces_no_layout`). "
        "Timing starts once the page's load events have answered (no Gradio progress tracker pending), as a "
        "person starts stepping once the page is there. A person's presses are what the goal is about; a key held "
        "down (auto-repeat) presses the next key while the last frame is still being rastered and drawn. What "
        "changed and why: the next section.",
        "",
    ])


def render(result: harness.Result) -> str:
    """The whole run's section."""
    r = result.results
    start, steps, mem, n_steps = r["start"], r["steps"], r["memory"], r["n_steps"]
    lines = [
        HEADING,
        "",
        f"`{result.command}`: Debian chromium headless.",
        "",
        harness.describe(result),
        "",
        "| what | goal | measured |",
        "| --- | --- | --- |",
        f"| cold start: `python app.py` to `GET /config` answering (fastest / median of {start['n']}) | ≤ 5 s | "
        f"{start['fastest']:.2f} s / {start['median']:.2f} s |",
        f"| libtorch loaded at start | no (models load on first use) | {'yes' if r['torch_loaded'] else 'no'} |",
        *viewer_rows(r["viewer"]),
        f"| first open of that replay, server side (read, validate, narrate, build the whole-battle payload) | – | "
        f"{steps['first_open_ms']:.0f} ms, payload {steps['payload_kb']:.0f} KB |",
        f"| one `/replay_turn` step, server side, median / p95 of {n_steps}; largest response | – | "
        f"{steps['median_ms']:.1f} / {steps['p95_ms']:.1f} ms; {steps['step_kb']:.0f} KB |",
        f"| one step as a gradio_client round trip (`/replay_next`, median of {min(n_steps, 50)}) | – | "
        f"{r['round_trip_ms']:.0f} ms |",
        f"| app RSS idle (after the first page load) | – | {mem['idle']:.0f} MB |",
        f"| app RSS after {mem['battles']:.0f} battles through `/battle_stream` (4 clients) | bounded | "
        f"{mem['after_battles']:.0f} MB (growth over the second half: {mem['growth_kb_per_battle']:.0f} KB per "
        "battle) |",
        f"| app RSS with {mem['uploads']} distinct large uploads ({mem['upload_mb']:.1f} MB each) uploaded and "
        f"opened | bounded | {mem['after_uploads']:.0f} MB |",
        "",
        "In the browser nothing goes to the server while stepping: the battle arrives once as pre-rendered, escaped "
        "panels, SVG charts and marker positions (wolfeclick/ui/viewer_payload.py) and wolfeclick/ui/assets/viewer.js swaps a panel and "
        "moves two markers per key. The memory bound: opened replays are cached within "
        f"{r['cache_mb']:.0f} MB, charged {r['view_bytes_per_file_byte']}× the file size (a parsed recording and its view "
        "measured 5.0× its JSON size with tracemalloc on a 14 MB file), so any number of large uploads adds at most "
        f"that budget over the idle size; one payload carries at most 8 MB of panels (larger battles send a window "
        "around the requested step), one `/replay_turn` step one panel with long texts cut at 6,000 characters.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="cold starts to time")
    parser.add_argument("--steps", type=int, default=300, help="server-side replay steps to time")
    parser.add_argument("--keys", type=int, default=200, help="key presses to time in the browser")
    parser.add_argument("--battles", type=int, default=200, help="battles for the memory benchmark")
    parser.add_argument("--upload-mb", type=float, default=8.0, help="size of each of the uploads")
    parser.add_argument("--uploads", type=int, default=16, help="large uploads for the memory benchmark")
    parser.add_argument("--widths", nargs="*", choices=list(WIDTHS), default=list(WIDTHS),
                        help="the page widths the key, Play and Pause figures are measured at (none: only the long "
                             "replay's End)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter (venv) that runs app.py for the cold starts, e.g. a `make run` venv")
    parser.add_argument("--start-only", action="store_true",
                        help="only cold starts and idle memory, a result of their own (benchmarks.app_start)")
    parser.add_argument("--viewer-only", action="store_true",
                        help="only the browser part, a result of its own (benchmarks.app_viewer)")
    parser.add_argument("--chromium-flag", action="append", default=[],
                        help="an extra Chromium flag for the browser figures (repeatable), e.g. --disable-gpu-vsync")
    args = parser.parse_args(argv)
    if args.starts < 1 or args.steps < 1 or args.keys < 1 or args.battles < 4 or args.uploads < 1:
        parser.error("--starts, --steps, --keys, --uploads at least 1; --battles at least 4 (4 clients)")

    from wolfeclick.battle.schema import Recording

    CHROMIUM_FLAGS.extend(args.chromium_flag)
    name = "app_start" if args.start_only else "app_viewer" if args.viewer_only else NAME
    params: dict[str, Any] = {"starts": args.starts, "python": None if args.python == sys.executable else args.python}
    if not args.start_only:
        params.update(keys=args.keys, widths=args.widths, chromium_flags=list(CHROMIUM_FLAGS))
    if not args.start_only and not args.viewer_only:
        params.update(steps=args.steps, battles=args.battles, upload_mb=args.upload_mb, uploads=args.uploads)
    work = Path(tempfile.mkdtemp(prefix="wolfeclick-bench-app-"))
    try:
        with harness.measure() as run:
            recordings, results = work / "recordings", work / "results"
            recordings.mkdir()
            for path in SAMPLES:
                shutil.copy(path, recordings / path.name)
            data = long_recording(LONG_ID, 300, BASE)
            Recording.model_validate(data)
            (recordings / f"{LONG_ID}.json").write_text(json.dumps(data), encoding="utf-8")

            huge = long_recording(HUGE_ID, 900, BASE)
            (recordings / f"{HUGE_ID}.json").write_text(json.dumps(huge), encoding="utf-8")
            if args.start_only:
                figures = start_figures(recordings, results, args.starts, args.python)
            elif args.viewer_only:
                with running_app(recordings, results) as (proc, port, _):
                    wait_until_serving(proc, port)
                    figures = {"viewer": browser_figures(port, args.keys, args.widths),
                               "chromium_flags": list(CHROMIUM_FLAGS)}
            else:
                figures = whole_run(recordings, results, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    harness.finish(name, argv, params, figures, run, args.results)
    return 0


def whole_run(recordings: Path, results: Path, work: Path, args: Any) -> dict[str, Any]:
    """Cold starts, the server side of a step, the browser, a round trip and memory: the "## App" section's run."""
    from wolfeclick.ui.library import DEFAULT_CACHE_BYTES, VIEW_BYTES_PER_FILE_BYTE

    starts, torch_loaded = [], False
    for _ in range(args.starts):
        seconds, loaded = cold_start(recordings, results)
        starts.append(seconds)
        torch_loaded = torch_loaded or loaded
        print(f"cold start {seconds:.2f} s (libtorch mapped: {loaded})", flush=True)
    steps = step_times(recordings, args.steps)
    print(f"replay step: {steps}", flush=True)
    with running_app(recordings, results) as (proc, port, _):
        wait_until_serving(proc, port)
        viewer = browser_figures(port, args.keys, args.widths)
        rt = round_trip(port, min(args.steps, 50))
        print(f"round trip median {rt:.1f} ms", flush=True)
        mem = memory(proc, port, work, args.battles, args.upload_mb, args.uploads)
        print(f"memory: {mem}", flush=True)
    return {"start": {"n": len(starts), "fastest": min(starts), "median": statistics.median(starts)},
            "starts_s": starts, "torch_loaded": torch_loaded, "steps": steps, "n_steps": args.steps,
            "round_trip_ms": rt, "viewer": viewer, "memory": mem, "cache_mb": DEFAULT_CACHE_BYTES / 2**20,
            "view_bytes_per_file_byte": VIEW_BYTES_PER_FILE_BYTE}


if __name__ == "__main__":
    raise SystemExit(main())
