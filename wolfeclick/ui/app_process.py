"""Starting the app as its own process (``python app.py``, ``wolfeclick app``), importing only what serves the page.

Gradio imports its MCP integration whenever the ``mcp`` package is installed, and ``mcp`` comes with the training
extra (openenv-core): in one venv with both, that doubled the app's cold start. The app serves no MCP endpoint, so
its process keeps ``mcp`` out (``GRADIO_MCP_SERVER=true`` lets it in). The training, Ray and model stacks are
imported only when a tab first uses them.

Gradio 6.31's component metaclass also re-derives each component's ``.pyi`` type stub every time Gradio is imported
(it reads the component's source and its stub, parses both with ``ast`` and renders a template, for 80-odd classes):
about 1.2 s of a 3.3 s cold start on 2 cores, spent on files for editors that the wheel already ships and that a
served app never reads. The app's process imports Gradio without that step.
"""

from __future__ import annotations

import gc
import importlib.abc
import importlib.machinery
import os
import signal
import sys
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from wolfeclick.settings import app_simulators_yield

__all__ = ["serve", "prepare_app_process", "keep_unused_stacks_out", "skip_gradio_stub_rewrites"]

STUB_WRITER_MODULE = "gradio.component_meta"
STUB_WRITER = "create_or_modify_pyi"


def keep_unused_stacks_out() -> None:
    """Make ``import mcp`` fail fast in this process (Gradio then skips its MCP integration), before Gradio loads."""
    if "gradio" in sys.modules or os.environ.get("GRADIO_MCP_SERVER", "").strip().lower() == "true":
        return
    sys.modules.setdefault("mcp", None)  # type: ignore[arg-type]  # None in sys.modules: "import mcp" raises ImportError


class _StubWriterOff(importlib.abc.Loader):
    """Loads ``gradio.component_meta`` as its own loader would, then makes its stub writer do nothing (the metaclass
    looks the function up at each class it makes, so every component made after this load skips it)."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        if callable(getattr(module, STUB_WRITER, None)):
            setattr(module, STUB_WRITER, _write_no_stub)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename...: tracebacks and inspect still work
        return getattr(self.inner, name)


def _write_no_stub(*args: object, **kwargs: object) -> None:
    """Stands in for Gradio's stub writer in the app's process."""


class _StubWriterOffFinder(importlib.abc.MetaPathFinder):
    """Finds ``gradio.component_meta`` where the normal path search does, and hands it to ``_StubWriterOff``."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != STUB_WRITER_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _StubWriterOff(spec.loader)
        return spec


def skip_gradio_stub_rewrites() -> None:
    """Import Gradio, later in this process, without re-deriving its components' type stubs. Does nothing once
    Gradio is loaded; installs its finder once."""
    if STUB_WRITER_MODULE in sys.modules or any(isinstance(f, _StubWriterOffFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _StubWriterOffFinder())


SWITCH_INTERVAL_S = 0.001
"""A thread holding the GIL gives it up this often (Python's default is 5 ms): a page's short request does not
wait behind a long Python-side battle or tournament step in another thread."""


def prepare_app_process() -> None:
    """What the app's process does before it first imports Gradio (``serve()``; ``benchmarks/app.py`` times the same)."""
    keep_unused_stacks_out()
    skip_gradio_stub_rewrites()
    app_simulators_yield()
    sys.setswitchinterval(SWITCH_INTERVAL_S)


class CtrlC:
    """Ctrl-C (SIGINT) as the app's one request to stop, remembered even where its KeyboardInterrupt is lost.

    Python raises KeyboardInterrupt wherever the main thread happens to be, and one raised while a finalizer
    (``__del__``) runs is printed and ignored: the app then served on for ever (a loaded test run hung so, its Ctrl-C
    landing in an event loop's finalizer while Gradio started). Until ``quiet()`` a Ctrl-C raises as usual (the
    command ends, "interrupted") and is also remembered; after it, it is only remembered, and ``wait()`` returns.
    The handler takes no lock: it runs in the main thread between two of its bytecodes, and it used to set a
    ``threading.Event`` that thread was waiting on, so a Ctrl-C landing while it held the event's lock waited for
    that lock for ever (``tests/test_app_ctrl_c.py``). ``wait()`` reads a flag every ``POLL_S`` instead.
    Installed from the main thread (``signal.signal`` allows no other)."""

    POLL_S = 0.1

    def __init__(self) -> None:
        self.asked = False
        self._raising = True
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        self.asked = True
        if self._raising:
            raise KeyboardInterrupt

    def quiet(self) -> None:
        self._raising = False

    def wait(self) -> None:
        while not self.asked:
            time.sleep(self.POLL_S)


def serve() -> None:
    """Serve the app on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT (127.0.0.1:7860) until interrupted."""
    ctrl_c = CtrlC()
    prepare_app_process()
    from wolfeclick.ui.app import build_app, launch

    demo = build_app()
    ctrl_c.quiet()  # from here a Ctrl-C lets the launch finish, then stops the app (at once if one came already)
    launch(demo, prevent_thread_lock=True)
    ctrl_c.wait()
    demo.close()
    # Stopped (Ctrl-C): nothing is collected at exit. The interpreter's last collection walked Gradio's and the app's
    # objects for about 2 s of wall time and 0.9 CPU s before the process ended (docs/testing.md); atexit handlers
    # (the export folder's removal, the search engine's simulators) and weakref finalizers still run.
    gc.freeze()
