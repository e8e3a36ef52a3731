"""A public app no one visitor can starve: per-visitor quotas on runs and uploads, a storage cap with eviction, a
Leaderboard that counts only battles played here unless its operator opts in and never waits on a re-simulation.

Before, one visitor held every Live slot (another's Live waited 38.8 s for its first update), stored 7 × 19.4 MB
in 40 s, and ~65 uploads made the first ``/leaderboard`` take 2 min 54 s (re-simulating them one at a time).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from wolfeclick.arena.history import PENDING, UPLOADS_APART, scan_history
from wolfeclick.arena.leaderboard import BoardQuery
from wolfeclick.arena.verify import BackgroundVerifier, Verifications
from wolfeclick.ui.context import AppContext, Settings, StopRegistry
from wolfeclick.ui.library import Library
from wolfeclick.ui.quotas import QuotaRefused, RunQuota, UploadQuota, Visitor, evict_oldest, visitor_of

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "gen4randombattle-s1-heuristic-vs-random.json"


def request(session: str, host: str = "10.0.0.1") -> SimpleNamespace:
    return SimpleNamespace(session_hash=session, client=SimpleNamespace(host=host))


def test_a_visitor_over_the_live_quota_is_refused_in_one_line_and_others_are_not() -> None:
    stops = StopRegistry(RunQuota({"live": 1, "heavy": 1}))
    first = stops.start("live", request("a"))
    with pytest.raises(QuotaRefused) as refused:  # a second page from the same address
        stops.start("live", request("b"))
    line = str(refused.value)
    assert "\n" not in line and "live battle" in line and "wait until it ends" in line
    assert not first.is_set()  # the refused start stopped nothing
    other = stops.start("live", request("c", host="10.0.0.2"))  # another visitor plays
    again = stops.start("live", request("a"))  # the same page starting again replaces its own battle
    assert first.is_set() and not again.is_set()
    stops.finish("live", request("a"), first)
    stops.finish("live", request("a"), again)
    stops.start("live", request("b"))  # the address's battle ended: its next page may play
    stops.finish("live", request("c", host="10.0.0.2"), other)


def test_heavy_jobs_share_one_quota_per_visitor() -> None:
    stops = StopRegistry(RunQuota({"live": 1, "heavy": 1}))
    analysis = stops.start("analysis", request("a"))
    with pytest.raises(QuotaRefused, match="heavy job"):
        stops.start("compare", request("a"))
    with pytest.raises(QuotaRefused, match="heavy job"):  # the same session behind another address
        stops.start("rescore", request("a", host="10.9.9.9"))
    stops.start("live", request("a"))  # a live battle is a quota of its own
    stops.finish("analysis", request("a"), analysis)
    stops.start("compare", request("a"))


def test_uploads_per_hour_and_bytes_per_visitor_say_when_to_retry() -> None:
    now = [1000.0]
    quota = UploadQuota(per_hour=3, bytes_per_visitor=100, clock=lambda: now[0])
    alice = Visitor("s1", "10.0.0.1")
    for number in range(3):
        quota.admit(alice, 10)
        quota.record(alice, f"f{number}", 10, stored=True)
        now[0] += 60
    with pytest.raises(QuotaRefused, match=r"3 uploads an hour .* try again in 57 min"):
        quota.admit(Visitor("s2", "10.0.0.1"), 10)  # a new page from the same address
    quota.admit(Visitor("s3", "10.0.0.2"), 10)  # another visitor is not held back
    now[0] += 3600
    with pytest.raises(QuotaRefused, match="MB of the"):
        quota.admit(alice, 75)  # 30 bytes stored + 75 is over 100
    quota.admit(alice, 75, exists=lambda path: path != "f0")  # a file cleared since no longer counts
    assert "\n" not in str(pytest.raises(QuotaRefused, quota.admit, alice, 95).value)


def test_the_store_evicts_the_oldest_uploads_beyond_its_cap(tmp_path: Path) -> None:
    names = [f"upload-{n:016x}.json" for n in range(5)]
    for age, name in enumerate(names):
        path = tmp_path / name
        path.write_bytes(b"x" * 100)
        os.utime(path, ns=(10**18 + age * 10**9, 10**18 + age * 10**9))
    (tmp_path / "gen9randombattle-s1-a-vs-b.json").write_bytes(b"y" * 1000)  # a battle played here: never evicted
    (tmp_path / "upload-link.json").symlink_to(tmp_path / names[0])
    removed = evict_oldest(tmp_path, 250, keep=names[0])
    assert [p.name for p in removed] == names[1:4]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([names[0], names[4], "upload-link.json",
                                                                 "gen9randombattle-s1-a-vs-b.json"])


def test_the_visitor_of_a_request_is_its_session_and_address() -> None:
    assert visitor_of(request("abc", "1.2.3.4")).keys() == ("session:abc", "address:1.2.3.4")
    assert visitor_of(None) == Visitor("anonymous", None)


def test_the_app_context_counts_every_run_against_the_visitor(tmp_path: Path) -> None:
    ctx = AppContext(library=Library(tmp_path / "recordings"), results=tmp_path / "results",
                     settings=Settings(live_per_visitor=2), value_model=None)
    runs = [ctx.stops.start("live", request(f"s{n}")) for n in range(2)]
    with pytest.raises(QuotaRefused):
        ctx.stops.start("live", request("s3"))
    for number, run in enumerate(runs):
        ctx.stops.finish("live", request(f"s{number}"), run)
    assert ctx.stops.quota is not None and ctx.stops.quota.running() == 0


# --- the Leaderboard ------------------------------------------------------------------------------------------------

def test_uploads_are_shown_apart_unless_the_operator_counts_them(tmp_path: Path) -> None:
    library = Library(tmp_path / "recordings")
    uploaded, _ = library.upload(SAMPLE.read_bytes())
    ctx = AppContext(library=library, results=tmp_path / "results", value_model=None)
    computed = ctx.standings.compute(BoardQuery(min_battles=1), rebuild=True)
    assert computed.entries == [] and any("played on this server" in line for line in computed.notes)
    assert ctx.standings.verifications.ran == 0  # not even re-simulated: an upload is never read for the table
    counting = AppContext(library=library, results=tmp_path / "results2", settings=Settings(count_uploads=True),
                          value_model=None)
    first = counting.standings.compute(BoardQuery(min_battles=1), rebuild=True)
    assert first.entries == []  # queued, not waited for
    assert counting.standings.verifier.wait(120)
    after = counting.standings.compute(BoardQuery(min_battles=1), rebuild=True)
    assert [e.battle for e in after.entries] == [uploaded.id]


def test_scan_without_uploads_reads_none_and_skips_symlinks(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / "upload-0123456789abcdef.json")
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    (folder / "passwd.json").symlink_to("/etc/passwd")
    with caplog.at_level("INFO", logger="wolfeclick.history"):
        scan = scan_history(None, [folder], uploads=False)
    assert [e.battle for e in scan.entries] == [SAMPLE.stem]
    assert scan.reasons[str(folder / "upload-0123456789abcdef.json")] == UPLOADS_APART
    assert str(folder / "passwd.json") not in scan.reasons and scan.skipped == []  # nothing shown to visitors
    assert "passwd.json" in caplog.text  # one line for the operator


def test_a_background_verifier_never_makes_the_scan_wait(tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    data = json.loads(SAMPLE.read_text())
    (folder / "upload-00000000000000aa.json").write_text(json.dumps(data))
    verifier = BackgroundVerifier(Verifications(tmp_path / "results"))
    cache: dict = {}
    first = scan_history(None, [folder], verify=verifier, cache=cache)
    assert first.entries == [] and PENDING in first.reasons.values()
    assert verifier.wait(120) and verifier.verifications.ran == 1
    second = scan_history(None, [folder], verify=verifier, cache=cache)  # the pending read was not cached
    assert [e.battle for e in second.entries] == ["upload-00000000000000aa"]


def test_a_stalled_rebuild_serves_the_last_table_and_says_so(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    library = Library(tmp_path / "recordings")
    library.directory.mkdir(parents=True)
    shutil.copy(SAMPLE, library.directory / SAMPLE.name)
    ctx = AppContext(library=library, results=tmp_path / "results", value_model=None)
    built = ctx.standings.compute(BoardQuery(min_battles=1), rebuild=True)
    assert len(built.entries) == 1
    real, gate = ctx.standings.rebuild, threading.Event()

    def stalled() -> list[str]:  # a rebuild that cannot finish until the test lets it
        gate.wait(60)
        return real()

    monkeypatch.setattr(ctx.standings, "rebuild", stalled)
    stale = ctx.standings.compute(BoardQuery(min_battles=1), rebuild=True, wait_s=0.05)
    assert len(stale.entries) == 1 and stale.notes[0].startswith("Updating")
    gate.set()
    assert ctx.standings.refresh(None)


def test_the_apps_simulators_yield_the_cpu_to_its_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from wolfeclick.sim.process import SimProcess

    monkeypatch.setenv("WOLFECLICK_SIM_NICE", "5")

    async def niceness() -> int:
        process = SimProcess()
        await process.start()
        try:
            assert process.pid is not None
            return os.getpriority(os.PRIO_PROCESS, process.pid)
        finally:
            await process.close()

    assert asyncio.run(niceness()) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)


AUTOGROUP = Path("/proc/sys/kernel/sched_autogroup_enabled")


@pytest.mark.skipif(not AUTOGROUP.exists() or AUTOGROUP.read_text().strip() != "1",
                    reason="Linux's autogroup scheduling is off here: niceness alone orders every process")
def test_a_simulators_niceness_holds_against_other_sessions_too() -> None:
    """A simulator runs in a session of its own (Ctrl-C reaches Python only), and with Linux's autogroup scheduling
    (on in this machine and CI's) each session is scheduled as one group beside the others, a process's nice
    counting only inside its group: a nice-19 benchmark's simulators took as much CPU as a whole test suite beside
    them. So the simulator's group gets the simulator's niceness, here the parent's 3 (``nice -n 3``) plus the app's
    5 (``WOLFECLICK_SIM_NICE``)."""
    probe = ("import asyncio, os\n"
             "from wolfeclick.sim.process import SimProcess\n"
             "async def main():\n"
             "    process = SimProcess()\n"
             "    await process.start()\n"
             "    try:\n"
             "        print(os.getpriority(os.PRIO_PROCESS, process.pid), open(f'/proc/{process.pid}/autogroup').read())\n"
             "    finally:\n"
             "        await process.close()\n"
             "asyncio.run(main())\n")
    own = os.getpriority(os.PRIO_PROCESS, 0)
    done = subprocess.run(["nice", "-n", "3", sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "WOLFECLICK_SIM_NICE": "5", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    nice, group = done.stdout.split(maxsplit=1)
    expected = min(19, own + 8)
    assert int(nice) == expected and group.strip().endswith(f" nice {expected}"), done.stdout


def test_raw_uploads_are_limited_per_address_per_hour() -> None:
    """Six 20 MB POSTs to /gradio_api/upload with no event once stayed in Gradio's temporary folder."""
    import asyncio

    from wolfeclick.ui.quotas import UploadRateLimit

    now = [0.0]
    passed: list[str] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        passed.append(scope["path"])

    limit = UploadRateLimit(app, bytes_per_hour=50 * 2**20, unknown_bytes=21 * 2**20, clock=lambda: now[0])

    def post(path: str, size: int | None, host: str = "10.0.0.1") -> tuple[int, str]:
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        headers = [(b"content-length", str(size).encode())] if size is not None else []
        scope = {"type": "http", "method": "POST", "path": path, "headers": headers, "client": (host, 1)}
        asyncio.run(limit(scope, None, send))
        if not sent:
            return 200, ""
        return sent[0]["status"], json.loads(sent[1]["body"])["detail"]

    assert post("/gradio_api/upload", 20 * 2**20) == (200, "")
    now[0] += 600
    assert post("/gradio_api/upload", 20 * 2**20) == (200, "")
    status, line = post("/gradio_api/upload", 20 * 2**20)
    assert status == 429 and "try again in 50 min" in line and "\n" not in line
    assert post("/gradio_api/upload", None)[0] == 429  # no declared length counts as the largest upload
    assert post("/gradio_api/upload", 20 * 2**20, host="10.0.0.2") == (200, "")  # another address
    assert post("/gradio_api/queue/join", 10**9) == (200, "")  # only the upload route is counted
    now[0] += 3600
    assert post("/gradio_api/upload", 20 * 2**20) == (200, "")
    assert passed.count("/gradio_api/upload") == 4
