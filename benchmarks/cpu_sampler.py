"""A tiny CPU-time sampling profiler for the battle benchmark: where does the Python side's CPU go per decision?

``SIGPROF`` fires every ``interval`` seconds of this process's CPU time (not wall time), so samples measure CPU and
stay meaningful on a machine shared with other work. Each sample walks the main thread's stack from the innermost
frame outwards and is charged to the first category whose rule matches (so poke-env code called by the state text
counts as state text, poke-env code called by a tracker as tracker). Unlike cProfile it adds no per-call cost, so
cheap, frequently called functions are not inflated relative to the simulator.

Linux/Unix only (``signal.setitimer``). Work done in other threads is not sampled; the profiled run keeps all of
the battle's Python work on the main thread.
"""

from __future__ import annotations

import signal
import sys
from collections import Counter
from types import FrameType
from typing import Sequence

Rule = tuple[str, str, str | None]
"""(category, path fragment, function name or None for any function in that file)."""

RULES: Sequence[Rule] = (
    ("recording + JSON", "/pydantic/main.py", "model_dump_json"),
    ("recording + JSON", "battle/schema.py", "to_json"),
    ("schema validation", "/pydantic", None),
    ("schema validation", "battle/schema.py", None),
    ("state text", "game/state.py", "format_state"),
    ("snapshot", "game/snapshot.py", None),
    ("reward", "game/reward.py", None),
    ("legal actions", "game/actions.py", "legal_actions"),
    ("policy", "policies/", None),
    ("trackers", "battle/tracker.py", None),
    ("protocol split", "sim/protocol.py", None),
    ("bridge transfer", "sim/process.py", None),
    ("bridge transfer", "asyncio/unix_events.py", None),
    ("bridge transfer", "asyncio/streams.py", None),
    ("bridge transfer", "asyncio/selector_events.py", None),
    ("recording + JSON", "battle/store.py", None),
    ("recording + JSON", "battle/runner.py", "recording"),
    ("runner", "battle/runner.py", None),
    ("runner", "battle/batch.py", None),
)


class CpuSampler:
    """Count SIGPROF samples per category while running; ``counts`` and ``samples`` afterwards."""

    def __init__(self, rules: Sequence[Rule] = RULES, interval: float = 0.001) -> None:
        self.rules = rules
        self.interval = interval
        self.counts: Counter[str] = Counter()
        self.samples = 0
        self._cache: dict[tuple[str, str], str | None] = {}

    def _category(self, frame: FrameType | None) -> str:
        while frame is not None:
            code = frame.f_code
            key = (code.co_filename, code.co_name)
            found = self._cache.get(key, "")
            if found == "":
                found = next((cat for cat, path, name in self.rules
                              if path in code.co_filename and (name is None or name == code.co_name)), None)
                self._cache[key] = found
            if found is not None:
                return found
            frame = frame.f_back
        return "event loop + other"

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.samples += 1
        self.counts[self._category(frame)] += 1

    def __enter__(self) -> "CpuSampler":
        signal.signal(signal.SIGPROF, self._on_signal)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL)

    def shares(self) -> dict[str, float]:
        """Fraction of the sampled CPU per category, largest first."""
        total = max(1, self.samples)
        return {cat: n / total for cat, n in self.counts.most_common()}


if __name__ == "__main__":  # pragma: no cover - a smoke check: a busy loop lands in "event loop + other"
    with CpuSampler() as sampler:
        sum(i * i for i in range(3_000_000))
    print(sampler.samples, sampler.shares(), file=sys.stderr)
