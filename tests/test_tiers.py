"""The test tiers (tests/conftest.py): what a test starts decides its tier, `-m fast` runs only the tests that start
nothing, and a fast-tier test that starts a process anyway fails naming what it started. The inner runs are real
pytest sessions (pytester) with this checkout's conftest.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytest_plugins = ["pytester"]
CONFTEST = Path(__file__).with_name("conftest.py")
MARKERS = """
[pytest]
markers =
    slow: x
"""


def _suite_conftest(config: pytest.Config) -> ModuleType:
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, ModuleType) and Path(getattr(plugin, "__file__", "") or "") == CONFTEST:
            return plugin
    raise LookupError("tests/conftest.py is not loaded")


@pytest.fixture()
def inner(pytester: pytest.Pytester, request: pytest.FixtureRequest,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.Pytester]:
    """A pytester folder with this suite's conftest.py; this run's own guard is off meanwhile (the inner session's
    guard is the one under test, and it must be the one that fires). No plugin is loaded that the runs do not need."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makeini(MARKERS)
    guard = getattr(_suite_conftest(request.config), "_guard", {"on": False})
    was = guard["on"]
    guard["on"] = False
    try:
        yield pytester
    finally:
        guard["on"] = was


TESTS = '''
import subprocess

def test_pure():
    assert sum([1, 2]) == 3

def test_starts_a_process():
    subprocess.run(["true"], check=False)

def test_swallows_it():
    try:
        subprocess.run(["true"], check=False)
    except Exception:
        pass

def test_uses_the_app(server):
    pass

def test_uses_the_tiny_model(tiny_checkpoint):
    pass

class Browser:
    pass

def sized():
    return Browser()

def test_opens_a_page_through_a_helper():
    sized()
'''


def test_a_fast_tier_test_that_starts_a_process_fails_naming_it_even_when_it_catches_the_error(inner) -> None:
    inner.makepyfile(test_mixed=TESTS)
    result = inner.runpytest("-m", "fast", "-p", "no:cacheprovider", "-k", "not app and not tiny")
    result.assert_outcomes(passed=1, failed=2, deselected=3)
    result.stdout.fnmatch_lines(["*fast tier: test_mixed.py::test_swallows_it started a process: subprocess.Popen*"])


def test_fixtures_and_file_table_set_the_tiers(inner) -> None:
    inner.makepyfile(test_mixed=TESTS)
    app = inner.runpytest("--collect-only", "-q", "-m", "app")
    app.stdout.fnmatch_lines(["test_mixed.py::test_uses_the_app", "*1/6 tests collected (5 deselected)*"])
    torch = inner.runpytest("--collect-only", "-q", "-m", "torch")
    torch.stdout.fnmatch_lines(["test_mixed.py::test_uses_the_tiny_model", "*1/6 tests collected*"])
    browser = inner.runpytest("--collect-only", "-q", "-m", "browser")
    browser.stdout.fnmatch_lines(["test_mixed.py::test_opens_a_page_through_a_helper", "*1/6 tests collected*"])
    fast = inner.runpytest("--collect-only", "-q", "-m", "fast")
    fast.stdout.fnmatch_lines(["*3/6 tests collected (3 deselected)*"])


def test_a_tier_that_selects_nothing_or_an_unknown_name_is_not_a_pass(inner) -> None:
    inner.makepyfile(test_pure="def test_pure():\n    pass\n")
    nothing = inner.runpytest("-m", "battles", "-p", "no:cacheprovider")
    assert nothing.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    nothing.stdout.fnmatch_lines(["*-m 'battles' selected no test (exit 5: not a pass)*"])
    typo = inner.runpytest("-m", "fsat", "-p", "no:cacheprovider")
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    typo.stderr.fnmatch_lines(["*-m 'fsat' names no marker: fsat*"])


def test_the_file_table_names_files_that_exist_and_tiers_that_are_declared(pytestconfig: pytest.Config) -> None:
    suite = _suite_conftest(pytestconfig)
    tests = Path(__file__).parent
    assert suite.FILE_TIERS, "the table is empty"
    missing = [name for name in suite.FILE_TIERS if not (tests / name).is_file()]
    assert not missing, f"tests/conftest.py FILE_TIERS names files that are gone: {missing}"
    declared = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    for name, tiers in suite.FILE_TIERS.items():
        assert tiers and set(tiers) <= set(suite.TIERS) <= declared, (name, tiers)
    assert set(suite.FIXTURE_TIERS.values()) <= {(t,) for t in suite.TIERS}



class _Item:
    """What the file order reads of a collected test: its node id and its markers."""

    def __init__(self, nodeid: str, *tiers: str) -> None:
        self.nodeid, self.tiers = nodeid, tiers

    def iter_markers(self) -> list[pytest.Mark]:
        return [getattr(pytest.mark, tier).mark for tier in self.tiers]


def test_a_distributed_run_hands_out_the_longest_files_first(pytestconfig: pytest.Config) -> None:
    """Files in order of their tests' seconds from the last runs (a tier's guess for a test never timed), longest
    first; each file's tests together and in their own order."""
    suite = _suite_conftest(pytestconfig)
    items = [_Item("a.py::t1", "fast"), _Item("b.py::t", "battles"), _Item("a.py::t2", "fast"),
             _Item("c.py::t1", "battles"), _Item("c.py::t2", "battles")]
    timed = {"a.py::t1": 100.0, "b.py::t": 1.0}
    assert [i.nodeid for i in suite.longest_files_first(items, timed)] == [
        "a.py::t1", "a.py::t2", "c.py::t1", "c.py::t2", "b.py::t"]
    assert [i.nodeid for i in suite.longest_files_first(items, {})] == [  # guesses only: two battles tests first
        "c.py::t1", "c.py::t2", "b.py::t", "a.py::t1", "a.py::t2"]


def test_a_run_keeps_each_tests_seconds_for_the_next_one(inner) -> None:
    inner.makepyfile(test_two="def test_one():\n    pass\n\ndef test_other():\n    pass\n")
    inner.runpytest("-q").assert_outcomes(passed=2)
    kept = json.loads((inner.path / ".pytest_cache" / "v" / "wolfeclick" / "test-seconds").read_text())
    assert sorted(kept) == ["test_two.py::test_one", "test_two.py::test_other"]
    assert all(isinstance(s, float) and s >= 0 for s in kept.values())


@pytest.mark.own_collector
def test_a_collector_test_finds_nothing_frozen_after_other_files_froze_the_heap(inner) -> None:
    """The suite freezes a worker's heap at each file's start (its full collections would walk torch's and Gradio's
    objects every time); a test of the collector itself (``own_collector``) must find it as the product does:
    tests/test_batch_gc.py once found a freeze left on in CI. Two files in one session, the second's test marked."""
    import gc

    inner.makeini(MARKERS + "    own_collector: x\n")
    inner.makepyfile(test_a="import gc\n\ndef test_frozen():\n    assert gc.get_freeze_count() > 0\n",
                     test_b="import gc\nimport pytest\n\n@pytest.mark.own_collector\n"
                            "def test_unfrozen():\n    assert gc.get_freeze_count() == 0\n")
    inner.runpytest("-q", "-p", "no:cacheprovider", "test_a.py", "test_b.py").assert_outcomes(passed=2)
    assert gc.get_freeze_count() == 0  # this test is marked too: the inner session's last test left nothing frozen
