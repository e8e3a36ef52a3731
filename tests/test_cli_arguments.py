"""What users expect of the command line's arguments: ``validate`` with no argument checks the recordings folder,
``app --port`` serves there, ``analyse --help`` names its default rollout policy (issue 47, item 10)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from devkit.appserver import LOCAL, free_port

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"


def wolfeclick(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wolfeclick", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=cwd or ROOT)


def test_validate_with_no_argument_checks_the_recordings_folder(tmp_path: Path) -> None:
    folder = tmp_path / "recs"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    done = wolfeclick("validate", env={"WOLFECLICK_RECORDINGS": str(folder)})
    assert done.returncode == 0 and f"{folder / SAMPLE.name}: ok" in done.stdout, (done.stdout, done.stderr)
    (folder / "broken.json").write_text("{", encoding="utf-8")
    done = wolfeclick("validate", env={"WOLFECLICK_RECORDINGS": str(folder)})
    assert done.returncode == 1 and "broken.json:" in done.stdout


def test_analyse_help_names_its_default_policy() -> None:
    done = wolfeclick("analyse", "--help")
    assert done.returncode == 0 and "default: heuristic" in " ".join(done.stdout.split())


_PROBE = ("import atexit, gc, runpy, sys; "
          "atexit.register(lambda: print('objects left to collect at exit:', gc.get_count()[2] + "
          "len(gc.get_objects(2)), flush=True)); "
          "sys.argv = ['wolfeclick', *sys.argv[1:]]; ")
EXIT_PROBE = _PROBE + "runpy.run_module('wolfeclick', run_name='__main__')"
"""``python -m wolfeclick ARGS`` with a last atexit handler (the first registered runs last) that says how much the
interpreter's collection at exit would still walk: the command freezes what it made (``gc.freeze``), so nothing."""
CONSOLE_SCRIPT_PROBE = _PROBE + ("from importlib.metadata import entry_points; "
                                 "sys.exit(entry_points(group='console_scripts')['wolfeclick'].load()())")
"""The same for the installed ``wolfeclick`` command: what pip's console script calls, found as pip finds it."""


@pytest.mark.parametrize("probe", [EXIT_PROBE, CONSOLE_SCRIPT_PROBE], ids=["python -m wolfeclick", "console script"])
def test_a_command_leaves_nothing_for_the_collection_at_exit(probe: str) -> None:
    done = subprocess.run([sys.executable, "-c", probe, "analyse", "--help"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "objects left to collect at exit: 0", done.stdout[-500:]


def _app_on_a_free_port(code: str, tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``python -c CODE app --port P --host 127.0.0.1`` (CODE runs the command) with a library of its own under
    ``tmp_path``, in a session of its own: (the process, P)."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WOLFECLICK_RECORDINGS": str(tmp_path / "recs"),
           "WOLFECLICK_RESULTS": str(tmp_path / "res"), "GRADIO_ANALYTICS_ENABLED": "False"}
    env.pop("GRADIO_SERVER_PORT", None)
    server = subprocess.Popen([sys.executable, "-c", code, "app", "--port", str(port), "--host", "127.0.0.1"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              start_new_session=True)
    return server, port


def test_app_port_serves_on_that_port_and_ctrl_c_leaves_nothing_to_collect(tmp_path: Path) -> None:
    server, port = _app_on_a_free_port(EXIT_PROBE, tmp_path)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read().decode()[-2000:] if server.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/config", timeout=2, **LOCAL).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise AssertionError(f"nothing served on port {port}")
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            out, _ = server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            raise
    assert out.decode().splitlines()[-1] == "objects left to collect at exit: 0", out.decode()[-500:]


def test_a_folder_with_nothing_to_read_is_an_error_not_silence(tmp_path: Path) -> None:
    """A folder stands for the recordings (or logs) inside it; one with none made every command exit 0 saying
    nothing, as if all had gone well (pytest's "no tests" rule, for files)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.md").write_text("not a recording", encoding="utf-8")
    for args in (["validate", str(empty)], ["analyse", str(empty)], ["rescore", str(empty), "--policy", "random",
                                                                       "--side", "p1"],
                 ["export", str(empty), "--out", str(tmp_path / "rows.jsonl")],
                 ["import", str(empty), "--out", str(tmp_path / "imported")]):
        done = wolfeclick(*args)
        assert done.returncode == 2, (args, done.returncode, done.stdout, done.stderr)
        message = done.stderr.strip()
        assert "\n" not in message and str(empty) in message and "Traceback" not in message, (args, message)
    assert not (tmp_path / "rows.jsonl").exists()
    folder = tmp_path / "recs"  # a folder that holds one is read as before, the empty one beside it refused
    folder.mkdir()
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    assert wolfeclick("validate", str(folder)).returncode == 0
    assert wolfeclick("validate", str(folder), str(empty)).returncode == 2


def test_serve_env_refuses_out_of_range_numbers_in_one_usage_line() -> None:
    """A port past 65535 reached the socket's bind and ended in a traceback called a bug; a count of 0 or less
    started a server that could hold no battle. Refused by argparse before anything is imported or bound."""
    for option, value in (("--port", "99999"), ("--port", "0"), ("--max-sessions", "0"), ("--max-turns", "-5")):
        done = wolfeclick("serve-env", option, value)
        assert done.returncode == 2, (option, value, done.returncode, done.stderr[-400:])
        assert "Traceback" not in done.stderr and f"argument {option}: " in done.stderr, (option, done.stderr[-400:])


SWALLOWED_CTRL_C = (
    "import runpy, signal, sys\n"
    "import wolfeclick.ui.app as app\n"
    "class Finalizer:\n"
    "    def __del__(self):\n"
    "        signal.raise_signal(signal.SIGINT)  # its KeyboardInterrupt is raised here, and ignored\n"
    "built = app.build_app\n"
    "def build_app(*args, **kwargs):\n"
    "    demo = built(*args, **kwargs)\n"
    "    Finalizer()\n"
    "    return demo\n"
    "app.build_app = build_app\n"
    "sys.argv = ['wolfeclick', *sys.argv[1:]]\n"
    "runpy.run_module('wolfeclick', run_name='__main__')\n"
)
"""The app, with a Ctrl-C that arrives while a finalizer (``__del__``) runs, as one did in a loaded test run: Python
raises KeyboardInterrupt inside the finalizer and ignores it ("Exception ignored in ... KeyboardInterrupt")."""


def test_a_ctrl_c_that_lands_in_a_finalizer_still_stops_the_app(tmp_path: Path) -> None:
    """A Ctrl-C is the app's signal to stop however it lands: a KeyboardInterrupt lost in a finalizer (here forced,
    while the app is built) left the app serving for ever (the `app --port` test above hung once so, 60 s after its
    Ctrl-C, at load 4)."""
    server, _ = _app_on_a_free_port(SWALLOWED_CTRL_C, tmp_path)
    try:
        out, err = server.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.communicate()
        raise AssertionError("the app went on serving after a Ctrl-C") from None
    assert "KeyboardInterrupt" in err.decode(), err.decode()[-2000:]  # it was lost in the finalizer, as forced
    assert server.returncode == 0, err.decode()[-2000:]
