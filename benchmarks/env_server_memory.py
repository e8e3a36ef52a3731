"""Does ``serve-env`` hold memory per episode? Plays many short battles over plain HTTP and samples the server's RSS
(issue 60, item 5: it grew ~0.37 MB an episode over 200).

    .venv/bin/python -m benchmarks.env_server_memory [--episodes 1000] [--max-turns 5] [--every 100]

Starts ``python -m wolfeclick serve-env`` on a free 127.0.0.1 port (no recordings: what is measured is the server,
not files), then plays ``--episodes`` episodes of at most ``--max-turns`` turns one after another, stepping index 0
each time, and reads the server's VmRSS after every ``--every`` episodes: the RSS series and the growth per episode
over the second half (after the warm-up: caches, the simulator's JIT). Bounded: the server binds 127.0.0.1 only and
is stopped at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any, Sequence

from benchmarks import harness
from devkit.appserver import free_port, rss_mb

NAME = "env_server_memory"
HEADING = "## serve-env memory over many episodes"
FLAT_KB = 1.0
"""Growth an episode (kB, second half) under which the server counts as flat: under 1 MB over 1,000 episodes, where
the leak this measures held ~16 kB an episode."""


FINDINGS = (
    ('The fix below landed on 2026-12-06 (every run since is after it). Before it, the same command read 112, 162,'
     ' 166, 170, 174, 178, 182, 186, 190, 194, 198 MB: 16 kB an episode, linear to the end (13519 steps in 588 s, '
     'load 16–20).'),
    ('What held it: cyclic garbage that the collector was kept from. Every episode ran under `relaxed_gc` '
     '(`wolfeclick/battle/batch.py`), which froze the whole heap (`gc.freeze`) when the episode started and '
     "unfroze it when it ended. What was alive at an episode's start included the previous episode's poke-env "
     'player and battle tracker, on their way out (they are reference cycles: only the cyclic collector frees '
     'them); frozen, no collection walked them, and unfreezing moved them into the oldest generation without '
     "counting them toward CPython's next full collection, which therefore never came. Found with a SIGUSR1 dump "
     'in the server: a full `gc.collect()` every 100 episodes kept the RSS flat (159.4 → 160.4 MB from episode 200'
     " to 1200), and in process, after 500 episodes, 500 of 500 opponents' players were still in memory and a full"
     " collection found 28,020 unreachable objects (34 players and 1,904 objects with the episode's freeze taken "
     'out). Why the earlier search missed it: a count of live objects taken after `gc.collect()` sees none of it '
     '(that collection is what frees it), and `malloc_trim` cannot return memory that is still allocated. Not the '
     "cause: threads (steady at 9), the Node simulator (its RSS swung 190–290 MB with V8's collections, no trend, "
     "and it is a separate process), poke-env's caches (all bounded `lru_cache`s)."),
    ('The fix: an env episode keeps the relaxed thresholds but freezes nothing (`relaxed_gc(freeze=False)`); '
     'batches and analysis, which freeze once for many battles, are unchanged. `tests/test_env_memory.py` plays '
     "six episodes through the server's episode table on the real simulator and, while a seventh plays, counts the"
     " finished episodes' players left after a full collection: 6 of 6 before, 0 after."),
)
"""What the leak was and how it was fixed (issue 60): fixed paragraphs, kept under every run's figures."""


def measure(episodes: int, max_turns: int, every: int) -> dict[str, Any]:
    """The server's RSS before the first episode and after every ``every``-th, the steps played and how long."""
    import httpx

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "wolfeclick", "serve-env", "--port", str(port), "--no-recordings",
                             "--format", "gen9randombattle", "--max-turns", str(max_turns)], cwd=harness.ROOT,
                            env=dict(os.environ, PYTHONPATH=str(harness.ROOT)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    series: list[tuple[int, float]] = []
    steps = 0
    try:
        with httpx.Client(base_url=url, timeout=120) as http:
            deadline = time.monotonic() + 180
            while True:
                try:
                    if http.get("/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("serve-env did not start")
                time.sleep(0.5)
            started = time.perf_counter()
            series.append((0, rss_mb(proc.pid)))
            for episode in range(1, episodes + 1):
                result = http.post("/reset", json={"seed": episode}).json()
                episode_id = result["observation"]["episode_id"]
                while not result["done"]:
                    result = http.post("/step", json={"action": {"index": 0}, "episode_id": episode_id}).json()
                    steps += 1
                if episode % every == 0:
                    series.append((episode, rss_mb(proc.pid)))
            played_s = time.perf_counter() - started
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    half = [point for point in series if point[0] >= episodes // 2]
    growth = (half[-1][1] - half[0][1]) / max(1, half[-1][0] - half[0][0]) if len(half) > 1 else 0.0
    return {"series": [{"episode": n, "rss_mb": round(rss, 2)} for n, rss in series], "steps": steps,
            "played_s": played_s, "growth_kb_per_episode": growth * 1000}


def render(result: harness.Result) -> str:
    r, p = result.results, result.params
    growth = r["growth_kb_per_episode"]
    return "\n".join([
        HEADING,
        "",
        f"`{result.command}`: one HTTP client plays {p['episodes']} episodes one after another against `serve-env` "
        f"(no recordings), {r['steps']} steps in {r['played_s']:.0f} s; the server's RSS every {p['every']} "
        "episodes (MB): " + ", ".join(f"{point['rss_mb']:.0f}" for point in r["series"]) + ". Growth over the "
        f"second half: {growth:.1f} kB an episode (goal: flat, under {FLAT_KB:g} kB an episode: "
        f"**{'met' if abs(growth) < FLAT_KB else 'not met'}**).",
        "",
        harness.describe(result),
        "",
        "\n\n".join(FINDINGS),
    ])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = harness.parser(__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args(argv)
    if not 2 <= args.episodes <= 5000:
        parser.error("--episodes 2..5000")
    with harness.measure() as run:
        results = measure(args.episodes, args.max_turns, args.every)
    harness.finish(NAME, argv, {"episodes": args.episodes, "max_turns": args.max_turns, "every": args.every},
                   results, run, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
