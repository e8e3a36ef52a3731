"""The fixtures several test modules share, found by pytest here instead of imported across modules: the tiny
offline checkpoints and a warm fake Hub cache (built by ``devkit/llm_fixtures.py``), and one real app per session
(``devkit/appserver.py``). Plain helpers live beside them (``tests/helpers.py``, ``tests/game_helpers.py``) and, for
what the scripts use too, in ``devkit/`` (samples, the app server, the browser, server logs, the tiny model).

Each fixture imports what it builds with when it is first used, so a test run that needs no model or app imports
neither.
"""

from __future__ import annotations

import atexit
import gc
import inspect
import logging
import os
import re
import resource
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The suite never reaches the Hub: a whole run always had this, set when the LLM test modules were collected.
logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny checkpoint folder (base + tokenizer), adapters in ``adapters/a`` and ``adapters/b``."""
    from devkit.llm_fixtures import build_tiny_checkpoint

    os.environ["HF_HUB_OFFLINE"] = "1"
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-llm"))


@pytest.fixture(scope="session")
def tiny_tool_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tiny checkpoint, its tokenizer carrying Qwen3-4B-Instruct-2507's tool-rendering chat template."""
    from devkit.llm_fixtures import build_tiny_checkpoint, tool_chat_template

    os.environ["HF_HUB_OFFLINE"] = "1"
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny-tool-llm"), chat_template=tool_chat_template())


@pytest.fixture()
def hub_cache(tmp_path: Path, tiny_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``HF_HUB_CACHE`` pointed at a fake warm cache of the preset repos, offline."""
    from devkit.llm_fixtures import fake_hub_cache

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(fake_hub_cache(tmp_path / "hub", tiny_checkpoint)))
    return tmp_path / "hub"


@pytest.fixture(scope="module")
def server() -> Iterator[object]:
    """One app per test file, as when each file imported the fixture (each import was its own fixture), so one
    file's recordings, analyses and seats never meet the next file's. Stopped by pytest's own teardown, not an
    atexit hook: after one loaded `make test` both workers' app servers were still running an hour later."""
    from devkit.appserver import Server

    app = Server()
    yield app
    app.stop(wait=False)  # the next file need not wait for its Ctrl-C (5-15 s); joined at the session's end


# ---------------------------------------------------------------------------------------------------------------
# Test tiers, by what a test starts. Every test carries the tiers of what it starts (battles: the real simulator;
# app: the live app server; browser: Chromium; torch: the model stack; ray: a Ray instance; packaging: pip
# installs, wheels, docker; process: any other program, such as the CLI or a fresh interpreter), read from three
# places: the fixtures it uses (FIXTURE_TIERS), devkit's starters it calls itself (SOURCE_TIERS), its file's entry
# in FILE_TIERS (a whole file that starts something without a fixture saying so), and a tier marker the test or its
# module sets itself (``pytestmark = pytest.mark.battles``). A test with none of them is in the ``fast`` tier.
#
#   pytest -m fast          the pure tier (`make test-fast`): files that are all tiered are not even imported
#   pytest -m "not browser" everything but the browser tests; `pytest` alone still runs everything
#
# The fast tier is guarded: while one of its tests runs, starting any process (the simulator, the app, Chromium,
# pip, Ray: Python's audit events for subprocess.Popen, os.system, os.fork, os.posix_spawn…) raises and fails the
# test, and so does importing torch or ray, naming the tier the test belongs in. A mis-tiered test is found the first
# time `make test-fast` runs it instead of quietly making the fast tier slow. A -m naming no tier or marker, or
# selecting no test, is refused (pytest's exit 5 is not a pass).
# ---------------------------------------------------------------------------------------------------------------

TIERS = ("battles", "app", "browser", "torch", "ray", "packaging", "process")
FIXTURE_TIERS: dict[str, tuple[str, ...]] = {
    "server": ("app",),
    "browser": ("browser",),
    "tiny_checkpoint": ("torch",),
    "tiny_tool_checkpoint": ("torch",),
    "hub_cache": ("torch",),
}
SOURCE_TIERS = {"Browser(": "browser", "sized_browser(": "browser", "Server(": "app", "running_app(": "app"}
"""What a test starts by calling devkit's starters itself: found in its own source, its fixtures' and the source of
its module's helpers it calls (a ``sized(...)`` that returns a ``Browser(...)``)."""
FILE_TIERS: dict[str, tuple[str, ...]] = {
    "test_analysis.py": ("battles",),
    "test_analysis_ray.py": ("battles", "ray"),
    "test_analysis_revive.py": ("battles",),
    "test_arena_history.py": ("battles", "process"),
    "test_batch_faults.py": ("battles", "process"),
    "test_battle_core.py": ("battles", "process"),
    "test_benchmarks_smoke_analysis.py": ("battles",),
    "test_benchmarks_smoke_arena.py": ("battles",),
    "test_benchmarks_smoke_data.py": ("battles",),
    "test_benchmarks_smoke_env.py": ("battles",),
    "test_benchmarks_smoke_models.py": ("battles",),
    "test_benchmarks_smoke_racing.py": ("battles",),
    "test_benchmarks_smoke_search.py": ("battles",),
    "test_benchmarks_smoke_calibration.py": ("battles",),
    "test_benchmarks_smoke_battles.py": ("battles", "process"),
    "test_benchmarks_smoke_app.py": ("app", "battles", "browser"),
    "test_branch_chains.py": ("battles",),
    "test_branch_rescore.py": ("battles",),
    "test_cli_arguments.py": ("process",),
    "test_env_gym.py": ("battles",),
    "test_env_heal.py": ("battles", "process", "torch"),
    "test_env_learn_demo.py": ("battles", "torch"),
    "test_env_lifecycle.py": ("battles", "process"),
    "test_env_memory.py": ("battles",),
    "test_env_recording_size.py": ("battles",),
    "test_env_refusals.py": ("battles",),
    "test_env_registration.py": ("process",),
    "test_env_sb3_matrix.py": ("battles", "torch"),
    "test_env_server.py": ("process",),
    "test_env_spaces.py": ("battles", "torch"),
    "test_env_tool.py": ("battles",),
    "test_env_vector.py": ("battles",),
    "test_human_policy.py": ("battles", "process"),
    "test_interop_export.py": ("battles",),
    "test_interop_import.py": ("battles", "process"),
    "test_interop_odd_files.py": ("battles", "process"),
    "test_interop_parallel_import.py": ("battles",),
    "test_interop_public_analysis.py": ("battles",),
    "test_interop_pokeenv_pages.py": ("battles",),
    "test_interop_public_views.py": ("battles",),
    "test_interop_server.py": ("battles",),
    "test_ladder.py": ("battles",),
    "test_live_battle.py": ("battles", "process"),
    "test_live_same_battle_id.py": ("battles",),
    "test_llm_policy.py": ("torch",),
    "test_llm_scoring.py": ("torch",),
    "test_llm_v1_options.py": ("battles",),
    "test_memory_bounds.py": ("process",),
    "test_one_home.py": ("process",),
    "test_packaging.py": ("packaging",),
    "test_perf_golden.py": ("battles",),
    "test_policy_registry.py": ("process",),
    "test_ray_engine.py": ("battles", "process", "ray"),
    "test_resim_forced_struggle.py": ("battles",),
    "test_search_fairness.py": ("battles",),
    "test_search_engine.py": ("battles",),
    "test_search_sets.py": ("battles",),
    "test_shared_ideas.py": ("process",),
    "test_sim_door.py": ("battles",),
    "test_sim_compile_cache.py": ("battles",),
    "test_sim_snapshot.py": ("battles",),
    "test_sim_lending.py": ("battles",),
    "test_sim_install_wait.py": ("process",),
    "test_sim_rollouts.py": ("battles",),
    "test_teams.py": ("battles", "process"),
    "test_tournament.py": ("battles",),
    "test_train_sb3.py": ("battles", "torch"),
    "test_trust_choice_refusals.py": ("battles",),
    "test_trust_cli_inputs.py": ("battles", "process"),
    "test_trust_digits.py": ("battles",),
    "test_trust_door.py": ("battles",),
    "test_trust_history.py": ("battles", "process"),
    "test_trust_played.py": ("battles",),
    "test_trust_quotas.py": ("battles",),
    "test_trust_store.py": ("battles", "process"),
    "test_trust_uploads.py": ("process",),
    "test_trust_visitors.py": ("app", "process"),
    "test_ui_app.py": ("app",),
    "test_ui_chart_axes.py": ("battles",),
    "test_ui_human.py": ("battles",),
    "test_ui_missing_extra_browser.py": ("app", "browser"),
    "test_ui_names_numbers.py": ("battles",),
    "test_ui_replays_analysis_browser.py": ("app",),
    "test_ui_view.py": ("battles",),
    "test_ui_whatif.py": ("battles",),
    "test_value_model_public.py": ("battles",),
    "test_yardstick.py": ("battles",),
}
"""Test files (names in ``tests/``) whose every test is in these tiers, for what no fixture shows."""

_HEAVY_MODULES = {"torch": "torch", "ray": "ray"}
_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec")
_guard: dict[str, object] = {"on": False, "seen": [], "before": set(), "reported": False}


class TierViolation(RuntimeError):
    """A fast-tier test started a process or imported the model stack."""


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _guard["on"] and event in _PROCESS_EVENTS:
        what = f"{event} {args[1] if event == 'subprocess.Popen' and len(args) > 1 else ''}".strip()[:200]
        seen = _guard["seen"]
        assert isinstance(seen, list)
        seen.append(what)
        raise TierViolation(f"a fast-tier test started a process ({what}): mark it with the tier of what it starts "
                            f"({', '.join(TIERS)}) in tests/conftest.py FILE_TIERS or with pytest.mark")


def _children() -> tuple[float, frozenset[int]]:
    """This process's reaped children's CPU seconds and its live children's pids: either changes when a process is
    started, however it was started."""
    import psutil

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime, frozenset(p.pid for p in psutil.Process().children(recursive=True))


def tiers_of(filename: str, fixturenames: list[str] | tuple[str, ...], markers: set[str]) -> set[str]:
    """The tiers a test is in, from its file's name, the fixtures it uses and the markers it carries."""
    found = {t for t in markers if t in TIERS} | set(FILE_TIERS.get(filename, ()))
    for name in fixturenames:
        found.update(FIXTURE_TIERS.get(name, ()))
    return found


def _source(obj: object) -> str:
    """``obj``'s source, read once a run: a fixture such as ``server`` is asked for by hundreds of tests, and
    ``inspect.getsource`` tokenizes its file from the function on at every call (about 3 CPU s of each worker's
    collection before it was kept)."""
    key = id(obj)
    if key not in _sources:
        try:
            _sources[key] = (obj, inspect.getsource(obj))  # type: ignore[arg-type]  # obj kept: its id stays its own
        except (OSError, TypeError):
            _sources[key] = (obj, "")
    return _sources[key][1]


_sources: dict[int, tuple[object, str]] = {}


_helpers: dict[str, dict[str, str]] = {}


def source_tiers(item: pytest.Item) -> set[str]:
    """The tiers of devkit's starters (SOURCE_TIERS) that a test calls itself, through a fixture or a helper."""
    module = getattr(item, "module", None)
    function = getattr(item, "function", None)
    if module is None or function is None:
        return set()
    if module.__name__ not in _helpers:
        _helpers[module.__name__] = {
            name: tier for name, obj in vars(module).items()
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", "") == module.__name__
            for call, tier in SOURCE_TIERS.items() if call in _source(obj)}
    info = getattr(item, "_fixtureinfo", None)
    fixtures = [d.func for name in getattr(item, "fixturenames", ()) for d in
                (info.name2fixturedefs.get(name, ()) if info is not None else ())]
    text = "\n".join(_source(f) for f in [function, *fixtures])
    found = {tier for call, tier in SOURCE_TIERS.items() if call in text}
    found.update(tier for name, tier in _helpers[module.__name__].items() if re.search(rf"\b{name}\(", text))
    return found


def _fast_run(config: pytest.Config) -> bool:
    return str(config.getoption("markexpr", "") or "").strip() == "fast"


def pytest_configure(config: pytest.Config) -> None:
    markexpr = str(config.getoption("markexpr", "") or "")
    known = set(TIERS) | {"fast"} | {line.split(":")[0].strip() for line in config.getini("markers")}
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", markexpr)) - {"and", "or", "not"}
    if names - known:
        raise pytest.UsageError(f"-m {markexpr!r} names no marker: {', '.join(sorted(names - known))} "
                                f"(tiers: fast, {', '.join(TIERS)})")
    if _fast_run(config):  # only there: any other run, `make test` included, goes exactly as before
        sys.addaudithook(_audit)
    # As the app and the CLI do at their end: the collection at exit would walk a whole run's objects. At exit, not
    # at unconfigure: a session run inside this one (pytester, tests/test_tiers.py) unconfigures too, and a freeze
    # left on in a worker changes what later tests there see (tests/test_batch_gc.py failed so in CI).
    atexit.register(gc.freeze)
    if _distributed_by_file(config):  # the workers order the files (longest_files_first); xdist's count order would
        config.option.loadscopereorder = False  # undo theirs


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m fast`` does not import a file whose every test is tiered (its imports are most of a run's start-up)."""
    if _fast_run(config) and collection_path.name in FILE_TIERS:
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        markers = {m.name for m in item.iter_markers()}
        found = tiers_of(item.path.name, getattr(item, "fixturenames", ()), markers) | source_tiers(item)
        for tier in sorted(found - markers):
            item.add_marker(tier)
        if not found:
            item.add_marker("fast")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: hand the files out longest first (below)
        items[:] = longest_files_first(items, workerinput.get(SECONDS_KEY) or {})


# ---------------------------------------------------------------------------------------------------------------
# Longest files first. `make test` runs each file whole on one of two workers (--dist loadfile), and xdist hands the
# files out in order of their number of tests: a file of a few long tests (the packaging checks, the benchmarks'
# smoke tests) was handed out late and ran on alone while the other worker had nothing left. So every run keeps each
# test's seconds (setup + call + teardown) in pytest's cache (.pytest_cache, key SECONDS_KEY); at the start of a
# distributed run the controller reads them once and gives them to both workers (the same numbers, so both collect
# the same order, whatever another run writes meanwhile), each worker puts the files in order of the seconds their
# tests took when last run, longest first, and xdist's own reordering by count is off so that this order is the one
# it hands out. A test never timed counts UNTIMED_SECONDS of its slowest tier. Only the order of files changes:
# each file still runs whole on one worker, its tests in their written order.
# ---------------------------------------------------------------------------------------------------------------

SECONDS_KEY = "wolfeclick/test-seconds"
UNTIMED_SECONDS = {"browser": 8.0, "packaging": 8.0, "torch": 5.0, "ray": 5.0, "app": 3.0, "battles": 3.0,
                   "process": 2.0, "fast": 0.05}
"""A rough guess by tier for a test no run here has timed yet (a fresh checkout, a new test)."""
_timed: dict[str, float] = {}
"""This run's seconds by test."""
_read: dict[str, dict[str, float]] = {}
"""The cache's seconds as the controller read them once for this run."""


def longest_files_first(items: list[pytest.Item], seconds: dict[str, float]) -> list[pytest.Item]:
    """``items`` grouped by file, the files in order of their tests' ``seconds`` (a guess by tier for a test not in
    it), longest first; ties and each file's own tests keep the order they were collected in."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def cost(group: list[pytest.Item]) -> float:
        return sum(seconds[item.nodeid] if item.nodeid in seconds else
                   max((UNTIMED_SECONDS.get(m.name, 0.0) for m in item.iter_markers()), default=UNTIMED_SECONDS["fast"])
                   for item in group)

    return [item for group in sorted(files.values(), key=cost, reverse=True) for item in group]


def _distributed_by_file(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput") and getattr(config.option, "dist", "no") in ("loadfile", "loadscope")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: object) -> None:
    """xdist's controller, as it starts a worker: this run's one reading of the timed seconds goes with it."""
    config = node.config  # type: ignore[attr-defined]
    if not _distributed_by_file(config):
        return
    if SECONDS_KEY not in _read:
        cache = getattr(config, "cache", None)
        _read[SECONDS_KEY] = cache.get(SECONDS_KEY, {}) if cache is not None else {}
    node.workerinput[SECONDS_KEY] = _read[SECONDS_KEY]  # type: ignore[attr-defined]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _timed[report.nodeid] = _timed.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The seconds of the tests this run ran replace their old ones in the cache (by the controller of a distributed
    run, which sees every worker's reports, or the one process of a plain run); tests of files that are gone drop."""
    config = session.config
    cache = getattr(config, "cache", None)
    if hasattr(config, "workerinput") or cache is None or not _timed:
        return
    kept = dict(cache.get(SECONDS_KEY, {}))
    kept.update((nodeid, round(seconds, 3)) for nodeid, seconds in _timed.items())
    files = {nodeid.split("::", 1)[0] for nodeid in kept}
    gone = {name for name in files if not (config.rootpath / name).is_file()}
    cache.set(SECONDS_KEY, {nodeid: s for nodeid, s in sorted(kept.items()) if nodeid.split("::", 1)[0] not in gone})


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    """Exit 5 (nothing ran) is a failure for `make`; say which -m chose nothing instead of a bare 'no tests ran'."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and config.getoption("markexpr", ""):
        terminalreporter.write_line(f"-m {config.getoption('markexpr')!r} selected no test (exit 5: not a pass)", red=True)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """In the fast tier, a test module that imports torch or ray at the top fails its collection."""
    before = {m for m in _HEAVY_MODULES if m in sys.modules}
    report = yield
    if _fast_run(collector.config) and isinstance(collector, pytest.Module):
        new = {m for m in _HEAVY_MODULES if m in sys.modules} - before
        if new:
            report.outcome = "failed"
            report.longrepr = (f"{collector.path.name} imports {', '.join(sorted(new))} when collected: list it in "
                               f"tests/conftest.py FILE_TIERS under {', '.join(_HEAVY_MODULES[m] for m in sorted(new))}")
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Guards a fast-tier test of a ``-m fast`` run from its setup to its teardown."""
    on = _fast_run(item.config) and item.get_closest_marker("fast") is not None
    _guard.update(on=on, seen=[], before={m for m in _HEAVY_MODULES if m in sys.modules}, reported=False,
                  children=_children() if on else None)
    try:
        return (yield)
    finally:
        _guard["on"] = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A guarded test that started a process (even if something caught the exception) or imported torch or ray
    fails, naming what it did."""
    report = yield
    if not _guard["on"] or _guard["reported"]:
        return report
    seen = _guard["seen"]
    assert isinstance(seen, list)
    problems = [f"started a process: {what}" for what in seen]
    before = _guard["before"]
    assert isinstance(before, set)
    problems += [f"imported {m}" for m in _HEAVY_MODULES if m in sys.modules and m not in before]
    if call.when == "teardown" and _children() != _guard["children"]:
        # what the audit hook cannot see: multiprocessing's spawn starts its workers below Python's audit events
        problems.append("started a process (a child ran or is still running)")
    if problems and report.outcome != "skipped":
        _guard["reported"] = True
        report.outcome = "failed"
        report.longrepr = (f"fast tier: {item.nodeid} {'; '.join(dict.fromkeys(problems))}. Give it the tier of what "
                           f"it starts ({', '.join(TIERS)}): tests/conftest.py FILE_TIERS, or pytest.mark.<tier>")
    return report


# ---------------------------------------------------------------------------------------------------------------
# Browser tests borrow Chromium processes (devkit.browser.share_processes): each page is a new window in a new
# browser context, as clean as a fresh profile, without a Chromium start per page; the idle ones stop at the end,
# when the apps stopped without waiting (Server.stop(wait=False): a file's teardown skips their 5-15 s Ctrl-C) are
# waited for too.
# ---------------------------------------------------------------------------------------------------------------
#
# The apps of tests in the app tier are forked (devkit.app_forker): a process per worker imports Gradio's stack once
# and each Server's `python app.py` is a fork of it running app.py as __main__ (about 0.8 s a start instead of 2.6).
# A Server whose test changes its interpreter (another PYTHONPATH) starts for real, and a forker serves one
# environment (PYTEST_* and the app's own WOLFECLICK_* settings aside); the app's real start stays tested apart (the
# CLI's `app` tests, benchmarks.app_start). WOLFECLICK_TEST_FORK=0 starts every app.
# ---------------------------------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _freeze_heap(item)
    if item.get_closest_marker("browser") is not None:
        from devkit.browser import share_processes

        share_processes()
    if item.get_closest_marker("app") is not None and os.environ.get("WOLFECLICK_TEST_FORK") != "0":
        from devkit.appserver import fork_apps

        fork_apps()


# ---------------------------------------------------------------------------------------------------------------
# The worker's heap is frozen out of the cyclic collector at every test file's start, after one collection of what
# the last file left (`gc.freeze`: what is alive then is a run's imports and session fixtures, not the tests'
# objects). A worker holds torch, transformers and Gradio: every full collection walked them, and the product's
# bulk runs end with one (battle.batch.relaxed_gc, issue 60: 94 CPU s of a run's workers, py-spy). With a freeze
# already on, relaxed_gc leaves it alone ("someone else's freeze is theirs to undo") and collects nothing at its end.
# A test of the collector as the product finds it is marked ``own_collector``: it runs with nothing frozen.
# WOLFECLICK_TEST_FREEZE=0 freezes nothing (to measure).
# ---------------------------------------------------------------------------------------------------------------
_FROZEN_AT = pytest.StashKey[object]()


def _freeze_heap(item: pytest.Item) -> None:
    """Called before a test's fixtures are set up: the last file's module fixtures are torn down by then."""
    if os.environ.get("WOLFECLICK_TEST_FREEZE") == "0":
        return
    if item.get_closest_marker("own_collector") is not None:
        gc.unfreeze()
        item.config.stash[_FROZEN_AT] = None  # the next test collects and freezes again
    elif item.config.stash.get(_FROZEN_AT, None) != item.path:
        gc.collect()
        gc.freeze()
        item.config.stash[_FROZEN_AT] = item.path


# ---------------------------------------------------------------------------------------------------------------
# Tests borrow simulator processes too (wolfeclick.sim.lending): a SimProcess closed in one test is kept, emptied of
# its battles, and lent to the next test that starts the same program, instead of each of the ~500 starts of a run
# paying for its own (about 0.15 CPU s, and a first battle on cold code). A test that counts, kills or waits for the
# simulators it started, or reads a process's pid after closing it, is marked ``fresh_simulators``: the kept ones
# are ended before it and nothing is lent or kept while it runs. WOLFECLICK_TEST_LEND=0 lends nothing (to measure).
# ---------------------------------------------------------------------------------------------------------------
_SIMULATORS = None


@pytest.fixture(autouse=True)
def _lent_simulators(request: pytest.FixtureRequest) -> Iterator[None]:
    global _SIMULATORS
    from wolfeclick.sim.lending import SimKeeper, lending

    if request.node.get_closest_marker("fresh_simulators") is not None or os.environ.get("WOLFECLICK_TEST_LEND") == "0":
        if _SIMULATORS is not None:
            _SIMULATORS.close()
        token = lending.set(None)
    else:
        _SIMULATORS = _SIMULATORS or SimKeeper()
        token = lending.set(_SIMULATORS)
    try:
        yield
    finally:
        lending.reset(token)


def pytest_unconfigure(config: pytest.Config) -> None:
    browser = sys.modules.get("devkit.browser")
    if browser is not None:
        browser.share_processes(False)
    appserver = sys.modules.get("devkit.appserver")
    if appserver is not None:
        appserver.finish_stops()
        appserver.fork_apps(False)
    if _SIMULATORS is not None:
        _SIMULATORS.close()
