"""Does ``serve-env`` hold memory per episode? Plays ``--episodes`` short battles over plain HTTP and samples the
server's RSS (issue 60, item 5: it grew ~0.37 MB an episode over 200).

Starts ``python -m wolfeclick serve-env`` on a free 127.0.0.1 port (no recordings: what is measured is the server,
not files), then plays episodes of at most ``--max-turns`` turns one after another, stepping index 0 each time,
and reads the server's VmRSS after every ``--every`` episodes. It prints the RSS series, the growth per episode
over the second half (after the warm-up: caches, the simulator's JIT) and, with ``--write``, puts the result in
docs/benchmarks.md (section "## serve-env memory over many episodes"). Bounded: the server binds 127.0.0.1 only and
is stopped at the end.

    .venv/bin/python scripts/bench_env_server_memory.py --episodes 1000 --write
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout first: its devkit/, scripts/ and wolfeclick/

from devkit.appserver import free_port, rss_mb  # noqa: E402
from scripts.benchdoc import machine_busy, write_section  # noqa: E402

HEADING = "## serve-env memory over many episodes"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not 10 <= args.episodes <= 5000:
        parser.error("--episodes 10..5000")

    import httpx

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "wolfeclick", "serve-env", "--port", str(port), "--no-recordings",
                             "--format", "gen9randombattle", "--max-turns", str(args.max_turns)], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    series: list[tuple[int, float]] = []
    started_busy, started_at, load_start = machine_busy(), time.monotonic(), os.getloadavg()[0]
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
                    raise SystemExit("serve-env did not start")
                time.sleep(0.5)
            series.append((0, rss_mb(proc.pid)))
            for episode in range(1, args.episodes + 1):
                result = http.post("/reset", json={"seed": episode}).json()
                episode_id = result["observation"]["episode_id"]
                while not result["done"]:
                    result = http.post("/step", json={"action": {"index": 0}, "episode_id": episode_id}).json()
                    steps += 1
                if episode % args.every == 0:
                    series.append((episode, rss_mb(proc.pid)))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    elapsed = time.monotonic() - started_at
    other = (machine_busy() - started_busy) / max(1e-9, elapsed)
    half = [point for point in series if point[0] >= args.episodes // 2]
    growth = (half[-1][1] - half[0][1]) / max(1, half[-1][0] - half[0][0]) if len(half) > 1 else 0.0
    text = "\n".join([
        HEADING, "",
        f"`scripts/bench_env_server_memory.py --episodes {args.episodes} --max-turns {args.max_turns} --every "
        f"{args.every}`: one HTTP "
        f"client plays {args.episodes} episodes one after another against `serve-env` (no recordings), {steps} "
        f"steps in {elapsed:.0f} s; the server's RSS every {args.every} episodes (MB): "
        + ", ".join(f"{rss:.0f}" for _, rss in series) + ". "
        f"Growth over the second half: {growth * 1000:.0f} kB an episode (goal: flat). {os.cpu_count()} cores; the "
        f"whole machine was busy {other:.2f} cores on average, load average {load_start:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end.",
    ])
    print(text)
    if args.write:
        write_section(HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
