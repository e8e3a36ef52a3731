"""The fixtures several test modules share, found by pytest here instead of imported across modules: the tiny
offline checkpoints and a warm fake Hub cache (built by ``devkit/llm_fixtures.py``), and one real app per session
(``devkit/appserver.py``). Plain helpers live beside them (``tests/helpers.py``, ``tests/game_helpers.py``) and, for
what the scripts use too, in ``devkit/`` (samples, the app server, the browser, server logs, the tiny model).

Each fixture imports what it builds with when it is first used, so a test run that needs no model or app imports
neither.
"""

from __future__ import annotations

import logging
import os
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
    app.stop()
