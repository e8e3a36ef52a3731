"""``relaxed_gc``, the collector setting for bulk play: what it froze and what died meanwhile is collected when it
ends (issue 60)."""

from __future__ import annotations

import gc
import weakref

import pytest

from wolfeclick.battle.batch import relaxed_gc

pytestmark = pytest.mark.own_collector  # the suite's freeze off (tests/conftest.py)


class _Node:
    """A reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_a_cycle_alive_on_entry_and_dead_inside_is_freed_when_it_ends() -> None:
    """Frozen on entry, the cycle was never walked; unfrozen, it went to the oldest generation uncounted, where no
    full collection came for it in a long-lived app (each analysis or Compare kept the last ones' garbage)."""
    node = _Node()
    ref = weakref.ref(node)
    threshold = gc.get_threshold()
    with relaxed_gc():
        del node
        assert ref() is not None  # frozen: no collection may take it meanwhile
    assert ref() is None
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == 0
