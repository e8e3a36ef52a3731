"""Headless Chromium (Debian's package), driven over the DevTools protocol, and the waits a page needs; the test suite
lends its pages Chromium processes it keeps (``share_processes``)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


PAGE_STATE = """(() => { const busy = [...document.querySelectorAll('[data-testid=status-tracker]')]
  .filter(t => t.classList.contains('pending') || t.classList.contains('generating'));
  const text = document.body ? document.body.innerText.replace(/\\s+/g, ' ') : '';
  return JSON.stringify({url: location.href, busy_trackers: busy.length,
    busy_text: busy.map(t => t.innerText.replace(/\\s+/g, ' ').slice(0, 80)),
    text: text.length > 1600 ? text.slice(0, 800) + ' … ' + text.slice(-800) : text}); })()"""
"""What a timed-out wait reports of the page (its address, the events still running, its text): CI keeps only the
failure's message, so the message must say what the page was doing."""


class PageError(RuntimeError):
    """JavaScript evaluated in the page threw."""


def _launch(width: int, height: int) -> tuple[subprocess.Popen, str, int]:
    """Chromium with a fresh profile and an ``about:blank`` page: (its process, the profile, its DevTools port)."""
    import re

    profile = tempfile.mkdtemp(prefix="wolfeclick-chromium-")
    proc = subprocess.Popen(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
         "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 30
    port = None
    while port is None and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            _stop(proc, profile)
            raise RuntimeError("chromium exited at start")
        match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
        if match:
            port = int(match.group(1))
    if port is None:
        _stop(proc, profile)
        raise RuntimeError("chromium did not open its DevTools port")
    threading_drain(proc.stderr)
    return proc, profile, port


def _stop(proc: subprocess.Popen, profile: str) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    shutil.rmtree(profile, ignore_errors=True)


def _call(ws, number: int, method: str, params: dict):
    """Send DevTools command ``number`` and return its result (events and other answers in between are skipped)."""
    ws.send(json.dumps({"id": number, "method": method, "params": params}))
    while True:
        message = json.loads(ws.recv(timeout=60))
        if message.get("id") == number:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message.get("result", {})


class _Chromium:
    """A Chromium process lent to one ``Browser`` at a time (``share_processes``). Each page it serves is a new
    window in a browser context of its own (cookies, storage and cache start empty, as in a fresh profile), thrown
    away with the page: a test meets nothing an earlier one left, and it is the only page open in that process."""

    def __init__(self) -> None:
        from websockets.sync.client import connect

        self.proc, self.profile, self.port = _launch(1400, 1800)
        try:
            version = httpx.get(f"http://127.0.0.1:{self.port}/json/version", timeout=10).json()
            self.ws = connect(version["webSocketDebuggerUrl"], max_size=16 * 1024 * 1024, open_timeout=10)
        except Exception:
            _stop(self.proc, self.profile)
            raise
        self._id = 0
        self.context = self.target = ""

    def call(self, method: str, **params):
        self._id += 1
        return _call(self.ws, self._id, method, params)

    def open_page(self, width: int, height: int) -> str:
        """A new ``width`` × ``height`` window in a new context; its page's DevTools address."""
        self.context = self.call("Target.createBrowserContext")["browserContextId"]
        self.target = self.call("Target.createTarget", url="about:blank", width=width, height=height,
                                browserContextId=self.context, newWindow=True)["targetId"]
        return f"ws://127.0.0.1:{self.port}/devtools/page/{self.target}"

    def close_page(self) -> None:
        self.call("Target.closeTarget", targetId=self.target)
        self.call("Target.disposeBrowserContext", browserContextId=self.context)
        self.context = self.target = ""

    def stop(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass
        _stop(self.proc, self.profile)


class _Pool:
    """This process's idle lent Chromiums (``share_processes``)."""

    KEEP = 3
    """Idle processes kept: as many pages as a test file holds open at once (a module's desktop and phone pages
    and a test's own); a Browser asked for while all are lent starts another."""

    def __init__(self) -> None:
        self.on = False
        self.hidden = False
        """Set once a lent window's page was hidden (it would draw no frame): no process is lent after that."""
        self.idle: list[_Chromium] = []

    def take(self, width: int, height: int) -> tuple[_Chromium, str]:
        while self.idle:
            chromium = self.idle.pop()
            if chromium.proc.poll() is None:
                try:
                    return chromium, chromium.open_page(width, height)
                except Exception:
                    pass
            chromium.stop()
        chromium = _Chromium()
        try:
            return chromium, chromium.open_page(width, height)
        except Exception:
            chromium.stop()
            raise

    def give_back(self, chromium: _Chromium) -> None:
        try:
            chromium.close_page()
        except Exception:
            chromium.stop()
            return
        if self.on and not self.hidden and len(self.idle) < self.KEEP and chromium.proc.poll() is None:
            self.idle.append(chromium)
        else:
            chromium.stop()

    def stop(self) -> None:
        while self.idle:
            self.idle.pop().stop()


_POOL = _Pool()


def share_processes(on: bool = True) -> None:
    """From now on a ``Browser`` borrows an idle Chromium process (a new window in a new context, as clean as a new
    profile) instead of starting its own, and gives it back when closed: each of the suite's ~100 pages paid a
    Chromium start. ``on=False`` stops the idle ones and lends no more (pytest calls it as the session ends)."""
    _POOL.on = on
    if not on:
        _POOL.stop()


atexit.register(share_processes, False)


class Browser:
    """Debian's headless Chromium with a fresh profile, driven over the DevTools protocol.

    ``--dump-dom --virtual-time-budget`` alone proved racy against a server answering in real time (virtual time
    runs ahead while the page waits on an open event stream: about one load in four was dumped before the
    answer arrived), so pages are polled in real time until what a test waits for is there.

    After ``share_processes()`` its page is a new window and context in a lent Chromium process instead.
    """

    def __init__(self, width: int = 1400, height: int = 1800) -> None:
        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed")
        self._start(width, height, lend=_POOL.on and not _POOL.hidden)
        if self._lent is not None and self.evaluate("document.visibilityState") != "visible":
            # a hidden page draws no frames: this Browser and every later one start their own process, as before
            _POOL.hidden = True
            self.close()
            _POOL.stop()
            self._start(width, height, lend=False)

    def _start(self, width: int, height: int, lend: bool) -> None:
        from websockets.sync.client import connect

        self._id = 0
        self._lent: _Chromium | None = None
        if lend:
            self._lent, url = _POOL.take(width, height)
            self.proc, self.profile = self._lent.proc, self._lent.profile
        else:
            self.proc, self.profile, port = _launch(width, height)
            pages = [t for t in httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
                     if t["type"] == "page"]
            url = pages[0]["webSocketDebuggerUrl"]
        self.ws = connect(url, max_size=64 * 1024 * 1024, open_timeout=10)
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params):
        self._id += 1
        return _call(self.ws, self._id, method, params)

    def evaluate(self, expression: str):
        """The expression's value; ``PageError`` if it throws (a click on an element not there yet did nothing,
        silently, and a test then waited minutes for what the click should have started)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise PageError(f"{(details.get('exception') or {}).get('description') or details.get('text')} "
                            f"in: {expression[:200]}")
        return result.get("result", {}).get("value")

    def open(self, url: str, timeout: float = 60.0) -> None:
        """Navigate, and return once the new document is there: right after ``Page.navigate`` the page may still
        be the old one, and a wait met by the old page (the same tab, already settled) was no wait at all."""
        try:
            self.evaluate("window.__wcOldDocument = true")
        except PageError:
            pass
        self.call("Page.navigate", url=url)
        self.wait_for("window.__wcOldDocument === undefined && document.readyState !== 'loading'", timeout=timeout)

    def click(self, element: str, timeout: float = 60.0) -> None:
        """Click the element the JavaScript expression ``element`` gives, once it is there (AssertionError if it
        never is): a button looked up and clicked in one evaluation did nothing when the tab was not drawn yet."""
        self.wait_for(f"(() => {{ const e = {element}; if (!e) return false; e.click(); return true; }})()",
                      timeout=timeout)

    def wait_for(self, expression: str, timeout: float = 30.0):
        """Poll a JavaScript expression until it is truthy; return its value (AssertionError on timeout). An
        expression that throws counts as not yet (the page is still being drawn)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except PageError:
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}; the page then: {self.evaluate(PAGE_STATE)}")

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
        if self._lent is not None:
            lent, self._lent = self._lent, None
            _POOL.give_back(lent)
        else:
            _stop(self.proc, self.profile)

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


PHONE_BELOW = 700
"""Pages narrower than this (px) are a phone's."""


def sized_browser(width: int, height: int) -> Browser:
    """A page ``width`` × ``height``; narrower than ``PHONE_BELOW``, a phone's (a mobile viewport: the page lays
    itself out as on a phone, not as a narrow desktop window)."""
    browser = Browser(width, height)
    if width < PHONE_BELOW:
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                     mobile=True)
    return browser


def open_settled(browser: Browser, url: str, ready: str, timeout: float = 60.0) -> None:
    """Open ``url`` and wait until the JavaScript ``ready`` holds. A page whose first events never settled (seen
    now and then in a loaded suite) is opened once more before the wait fails."""
    for attempt in range(2):
        browser.open(url)
        try:
            browser.wait_for(ready, timeout=timeout)
            return
        except AssertionError:
            if attempt:
                raise


REPLAYS_VIEW = "document.querySelector('#wc-replays-viewer')"


def open_replay(browser: Browser, url: str, turn: int | str, timeout: float = 90.0) -> None:
    """Load ``url`` and wait for the Replays viewer at ``turn``, in the new document (``Browser.open`` returns once
    it is there, not the one the last test left); then take the focus off any field, so keys go to the viewer."""
    browser.open(url)
    browser.wait_for(f"{REPLAYS_VIEW}?.querySelector('.wc-turn')?.dataset.turn === '{turn}' && "
                     "window.__wcViewers?.replays?.state?.shown", timeout=timeout)  # keys reach a viewer in view
    browser.evaluate("document.activeElement && document.activeElement.blur()")
