"""Shared pieces for the UI tests (plain code, no tests or fixtures): sample and hostile recordings, a real
`python app.py` (``Server``), its load event called as a browser does (``raw_load``), and headless Chromium.

The ``server`` fixture in ``tests/conftest.py`` starts one app per test session (on a free port, with its own
recordings and results folders), shared by the gradio_client tests and the browser tests.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = sorted((ROOT / "recordings").glob("*.json"))
SAMPLE_ID = "gen9randombattle-s1-heuristic-vs-random"
HOSTILE_ID = "hostile-recording"
XSS = '<script>window.__pwned=1</script><img src=x id="pwned" onerror="window.__pwned=2">${7*7}'


def sample_path() -> Path:
    path = ROOT / "recordings" / f"{SAMPLE_ID}.json"
    return path if path.exists() else SAMPLES[0]


def sample_data() -> dict:
    return json.loads(sample_path().read_text(encoding="utf-8"))


def hostile_data() -> dict:
    """A valid recording whose every free-text field holds HTML/script."""
    data = sample_data()
    data["id"] = HOSTILE_ID
    for side in ("p1", "p2"):
        data["players"][side]["name"] = f"{side}{XSS}"
        data["players"][side]["policy"] = f"{side}{XSS}"
    data["log"] = [line.replace("Frosmoth", "Frosmoth" + XSS) for line in data["log"]] + [f"|html|{XSS}", f"|raw|{XSS}"]
    data["format"] = "gen9randombattle" + XSS
    data["result"]["error"] = XSS
    for turn in data["turns"]:
        turn["events"] = [line.replace("Frosmoth", "Frosmoth" + XSS) for line in turn["events"]] + [f"|-message|{XSS}"]
        for snap in turn["snapshot"].values():
            for mon in snap["team"]:
                mon["species"] = mon["species"] + XSS
            if snap["active"]:
                snap["active"] = snap["active"] + XSS
            snap["active_status"] = XSS if snap["active_status"] is None else snap["active_status"]
        for decision in turn["decisions"].values():
            decision["state"] = "</pre></details>" + XSS + decision["state"]
            decision["raw_output"] = "</pre>" + XSS
            decision["illegal"] = True
            decision["illegal_reason"] = XSS
            decision["command"] = XSS
            decision["rejected"] = [XSS]
            decision["policy_info"] = {"candidates": [{"action": "move", "choice": XSS, "logprob": -1.0}],
                                       "note": XSS, "prompt": XSS}
            decision["reward"]["components"][XSS] = 1.0
    return data


def long_recording(replay_id: str, turns: int = 300, base_path: Path | None = None) -> dict:
    """A valid recording of ``turns`` game turns, made by repeating a real battle's decision points (gen4
    heuristic vs random, seed 1, unless ``base_path``): what a long replay looks like to the viewer."""
    base_path = base_path or ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"
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
    data["id"] = replay_id
    data["turns"] = out
    data["log"] = [line for record in out for line in record["events"]] + ["|", f"|win|{base['players']['p1']['name']}"]
    data["result"] = {"winner": "p1", "reason": "win", "turns": turn_no, "error": None}
    return data


def hostile_bytes() -> bytes:
    return json.dumps(hostile_data()).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`python app.py` on a free port with its own copies of the sample recordings (and the hostile one)."""

    def __init__(self, hostile: bool = True, pace: float = 0.0, keep: bool = False,
                 extra_env: dict[str, str] | None = None) -> None:
        self.keep = keep
        self.root = Path(tempfile.mkdtemp(prefix="wolfeclick-ui-test-"))
        self.recordings = self.root / "recordings"
        self.results = self.root / "results"
        self.recordings.mkdir()
        for path in SAMPLES:
            shutil.copy(path, self.recordings / path.name)
        if hostile:
            (self.recordings / f"{HOSTILE_ID}.json").write_text(json.dumps(hostile_data()), encoding="utf-8")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(self.port),
                   WOLFECLICK_RECORDINGS=str(self.recordings), WOLFECLICK_RESULTS=str(self.results),
                   WOLFECLICK_LIVE_PACE=str(pace), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False",
                   PYTHONPATH=str(ROOT))
        env.update(extra_env or {})  # the operator's own settings ($WOLFECLICK_APP_POLICIES, a bound)
        self.log = open(self.root / "server.log", "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "app.py")], cwd=ROOT, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 600  # a hang guard: a cold start took 28-60 s on a machine loaded 12-18
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"app.py exited: {(self.root / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "config", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("app.py did not start serving within 600 s")
        self.startup_s = time.monotonic() - self.started

    def files(self) -> set[str]:
        return {p.name for p in self.recordings.iterdir()}

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # Ctrl-C: the app closes cleanly (and removes its temp files)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.log.close()
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


def raw_load(server: Server, query: str) -> list:
    """Call the page's load event the way a browser does, with the page's query string on queue/join."""
    config = httpx.get(server.url + "config").json()
    fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "open_share_link")
    session = uuid.uuid4().hex[:11]
    join = httpx.post(f"{server.url}gradio_api/queue/join?{query}",
                      json={"data": [], "event_data": None, "fn_index": fn_index, "trigger_id": None,
                            "session_hash": session}, timeout=10)
    assert join.status_code == 200, join.text
    with httpx.stream("GET", f"{server.url}gradio_api/queue/data", params={"session_hash": session},
                      timeout=20) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed":
                assert message.get("success"), message
                return message["output"]["data"]
    raise AssertionError("no result from the load event")


# --------------------------------------------------------------------------------------------------------------
# Headless Chromium, driven over the DevTools protocol
# --------------------------------------------------------------------------------------------------------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Browser:
    """Debian's headless Chromium with a fresh profile, driven over the DevTools protocol.

    ``--dump-dom --virtual-time-budget`` alone proved racy against a server answering in real time (virtual time
    runs ahead while the page waits on an open event stream: about one load in four was dumped before the
    answer arrived), so pages are polled in real time until what a test waits for is there.
    """

    def __init__(self, width: int = 1400, height: int = 1800) -> None:
        import re as _re

        from websockets.sync.client import connect

        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed")
        self.profile = tempfile.mkdtemp(prefix="wolfeclick-chromium-")
        self.proc = subprocess.Popen(
            [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 30
        port = None
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError("chromium exited at start")
            match = _re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                port = int(match.group(1))
        if port is None:
            raise RuntimeError("chromium did not open its DevTools port")
        threading_drain(self.proc.stderr)
        pages = [t for t in httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json() if t["type"] == "page"]
        self.ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024, open_timeout=10)
        self._id = 0
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params):
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout: float = 30.0):
        """Poll a JavaScript expression until it is truthy; return its value (AssertionError on timeout)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def dom(self) -> str:
        return self.evaluate("document.documentElement.outerHTML")

    def screenshot(self, path: Path) -> None:
        import base64

        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def threading_drain(stream) -> None:
    """Keep reading a pipe so the child never blocks on a full one."""
    import threading

    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()


PAGE_IDLE = ("!document.body.innerText.includes('Checking hardware') && !document.querySelector("
             "'[data-testid=status-tracker].pending, [data-testid=status-tracker].generating')")
"""No event of the page's is in flight (its load events, the Live tab's hardware check): a value set before then
can be lost."""


def frames(browser: Browser, n: int = 2) -> None:
    """Until the page has drawn ``n`` more frames (what a step changed is laid out and painted by then)."""
    browser.evaluate("new Promise(done => { let k = %d; const f = () => (--k ? requestAnimationFrame(f) : done(1));"
                     " requestAnimationFrame(f); })" % n)


REPLAYS_VIEW = "document.querySelector('#wc-replays-viewer')"


def open_replay(browser: Browser, url: str, turn: int | str, timeout: float = 90.0) -> None:
    """Load ``url`` and wait for the Replays viewer at ``turn``, in the new document, not the one the last test left
    (a mark set before navigating is gone only once the new page is there); then take the focus off any field, so
    keys go to the viewer."""
    browser.evaluate("window.__wcOldPage = true")
    browser.open(url)
    browser.wait_for(f"window.__wcOldPage === undefined && "
                     f"{REPLAYS_VIEW}?.querySelector('.wc-turn')?.dataset.turn === '{turn}' && "
                     "window.__wcViewers?.replays?.state?.shown", timeout=timeout)  # keys reach a viewer in view
    browser.evaluate("document.activeElement && document.activeElement.blur()")
