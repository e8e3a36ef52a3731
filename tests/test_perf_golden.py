"""Speed work must not change a single recorded byte: 50 seeded battles (gen1–gen9, several policy pairs) are
replayed and compared with digests taken from the code as it was before the hot path was optimised (issue 17).

Only what no seed can fix is normalised away: the write time (``created``) and every measured ``latency_ms``. The
comparison is over the exact bytes of ``Recording.to_json()`` otherwise (key order, float spelling, indentation).

Regenerate the digests (only when a recording change is *meant*, and say so in the commit):
``.venv/bin/python tests/test_perf_golden.py --write``
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wolfeclick.battle.batch import BattleJob, run_jobs  # noqa: E402
from wolfeclick.battle.policy_specs import make_policy  # noqa: E402
from wolfeclick.battle.schema import Recording  # noqa: E402

GOLDEN = ROOT / "tests" / "data" / "perf_golden.json"
PAIRS = (("heuristic", "random"), ("random", "maxdamage"), ("maxdamage", "heuristic"), ("heuristic", "heuristic"),
         ("random", "random"))
"""Nine generations × five pairs are coprime, so 50 battles give every pair in (almost) every generation."""
TURN_LIMITED = 7
"""Every seventh battle stops at a short turn limit, so the turn-limit ending is covered too."""
_CREATED = re.compile(r'^( *"created": )"[^"]*"', re.MULTILINE)
_LATENCY = re.compile(r'^( *"latency_ms": )[-0-9.eE+]+', re.MULTILINE)


def cases() -> list[dict[str, object]]:
    found = []
    for i in range(50):
        p1, p2 = PAIRS[i % len(PAIRS)]
        found.append({"format": f"gen{1 + i % 9}randombattle", "p1": p1, "p2": p2, "seed": 7000 + i,
                      "max_turns": 12 if i % TURN_LIMITED == 3 else 300})
    return found


def normalised(recording: Recording) -> str:
    """``to_json()`` with the write time and latencies blanked, every other byte as written."""
    text = _CREATED.sub(r'\1""', recording.to_json())
    return _LATENCY.sub(r"\g<1>0", text)


def digest(recording: Recording) -> str:
    return hashlib.sha256(normalised(recording).encode()).hexdigest()


def play(concurrency: int) -> dict[str, str]:
    """Digest of every case's recording, by recording id."""
    policies = {spec: make_policy(spec) for spec in ("random", "maxdamage", "heuristic")}
    jobs = [BattleJob(policies[str(c["p1"])], policies[str(c["p2"])], str(c["format"]), int(c["seed"]),  # type: ignore[call-overload]
                      max_turns=int(c["max_turns"])) for c in cases()]  # type: ignore[call-overload]

    async def go() -> dict[str, str]:
        found = {}
        async for _, recording in run_jobs(jobs, concurrency=concurrency):
            found[recording.id] = digest(recording)
        return found

    return asyncio.run(go())


def test_normalisation_blanks_only_times() -> None:
    text = '{\n "created": "2026-01-01T00:00:00+00:00",\n  "latency_ms": 1.234,\n  "latency": 5\n}'

    class Fake:
        def to_json(self) -> str:
            return text

    assert normalised(Fake()) == '{\n "created": "",\n  "latency_ms": 0,\n  "latency": 5\n}'  # type: ignore[arg-type]


def test_fifty_seeded_battles_record_the_same_bytes_as_before() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert golden["cases"] == cases(), "the case list changed; regenerate only on purpose"
    played = play(concurrency=8)  # determinism at concurrency is part of the claim
    assert set(played) == set(golden["digests"])
    changed = sorted(key for key in played if played[key] != golden["digests"][key])
    assert not changed, f"{len(changed)} recordings changed: {changed[:5]}"
    assert len({*golden["digests"].values()}) == len(golden["digests"])  # 50 distinct battles


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(__doc__)
    digests = play(concurrency=4)
    GOLDEN.write_text(json.dumps({"cases": cases(), "digests": dict(sorted(digests.items()))}, indent=1) + "\n")
    print(f"wrote {len(digests)} digests to {GOLDEN}")
