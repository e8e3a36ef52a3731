"""The OpenEnv server as a subprocess (``python -m wolfeclick serve-env``): two WebSocket sessions play whole battles
at once through ``ShowdownClient``, a battle over plain HTTP by ``episode_id``, and one-line 4xx for bad actions."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from devkit.appserver import LOCAL
from wolfeclick.battle.store import load_recording
from wolfeclick.env.client import ShowdownAction, ShowdownClient

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    recordings = tmp_path_factory.mktemp("env-server")
    yield from serve(["--format", "gen9randombattle", "--out", str(recordings)], recordings)


served: list[str] = []
"""What each server started by ``serve`` printed, once it stopped."""


def serve(options: list[str], recordings: Path | None, path: Path | None = None):
    port = free_port()
    pythonpath = os.pathsep.join(str(p) for p in (ROOT, path) if p)
    proc = subprocess.Popen([sys.executable, "-m", "wolfeclick", "serve-env", "--port", str(port), *options], cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=pythonpath), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120  # importing openenv-core imports gradio: slow on a busy machine
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2, **LOCAL).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"serve-env did not start: {proc.stdout.read() if proc.stdout else ''}")
        time.sleep(0.3)
    yield url, recordings
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    served.append(proc.stdout.read() if proc.stdout else "")


async def play(url: str, seed: int, opponent: str) -> tuple[int, object]:
    async with ShowdownClient(base_url=url) as client:
        result = await client.reset(seed=seed, opponent=opponent)
        steps = 0
        while not result.done:
            action = ShowdownAction(index=steps % len(result.observation.legal_actions))
            result = await client.step(action)
            steps += 1
        state = await client.state()
        return steps, result, state


def test_two_websocket_sessions_play_whole_battles_at_once(server):
    url, recordings = server

    async def both():
        return await asyncio.gather(play(url, 3, "random"), play(url, 4, "heuristic"))

    (steps_a, last_a, state_a), (steps_b, last_b, state_b) = asyncio.run(both())
    for steps, last, state in ((steps_a, last_a, state_a), (steps_b, last_b, state_b)):
        assert steps > 3 and last.done and last.observation.text.startswith("The battle is over")
        assert last.observation.info["result"]["reason"] in ("win", "tie")
        assert state.done and state.step_count == steps
        assert state.recording_path == last.observation.info["recording_path"]  # /state names it after done
        recording = load_recording(Path(last.observation.info["recording_path"]))
        assert recording.source.kind == "training"
        assert sum(1 for t in recording.turns if "p1" in t.decisions) == steps
    assert last_a.observation.info["recording_id"] != last_b.observation.info["recording_id"]
    assert state_b.opponent == "heuristic"


def test_http_battle_by_episode_id_and_one_line_4xx(server):
    url, _ = server
    with httpx.Client(base_url=url, timeout=60) as http:
        schema = http.get("/schema").json()
        assert {"text", "index"} <= set(schema["action"]["properties"])
        first = http.post("/reset", json={"seed": 7}).json()
        episode = first["observation"]["episode_id"]
        assert len(episode) >= 32 and first["observation"]["legal_actions"]
        text = first["observation"]["legal_actions"][0]
        step = http.post("/step", json={"action": {"text": text}, "episode_id": episode})
        assert step.status_code == 200 and step.json()["observation"]["info"]["illegal"] is False
        babble = http.post("/step", json={"action": {"text": "no idea"}, "episode_id": episode}).json()
        assert babble["observation"]["info"]["illegal"] is True  # played as the flagged fallback, not an error
        bad = {
            "no action": {"episode_id": episode},
            "neither field": {"action": {}, "episode_id": episode},
            "both fields": {"action": {"text": "x", "index": 0}, "episode_id": episode},
            "wrong type": {"action": {"index": "first"}, "episode_id": episode},
            "unknown field": {"action": {"move": "surf"}, "episode_id": episode},
            "negative index": {"action": {"index": -1}, "episode_id": episode},
            "unknown episode": {"action": {"index": 0}, "episode_id": "nope"},
            "no episode": {"action": {"index": 0}},
        }
        for what, body in bad.items():
            response = http.post("/step", json=body)
            assert 400 <= response.status_code < 500, (what, response.status_code, response.text)
            detail = response.json()["detail"]
            assert isinstance(detail, str) and detail and "\n" not in detail, (what, detail)
        assert http.post("/step", content=b"{not json", headers={"content-type": "application/json"}).status_code == 422
        assert http.post("/reset", json={"opponent": "nobody"}).status_code == 400
        # the battle survived the bad requests and goes on to its end
        result = step.json()
        while not result["done"]:
            result = http.post("/step", json={"action": {"index": 0}, "episode_id": episode}).json()
        over = http.post("/step", json={"action": {"index": 0}, "episode_id": episode})
        assert over.status_code == 400 and "over" in over.json()["detail"]
        assert http.get("/health").json()["status"] == "healthy"


def test_closing_a_session_forfeits_its_battle(server):
    url, recordings = server

    async def leave_early() -> None:
        async with ShowdownClient(base_url=url) as client:
            result = await client.reset(seed=11, opponent="maxdamage")
            await client.step(ShowdownAction(text=result.observation.legal_actions[0]))

    asyncio.run(leave_early())
    deadline = time.monotonic() + 30
    path = None
    while time.monotonic() < deadline:
        path = next(recordings.glob("*s11-env-agent-vs-maxdamage.json"), None)
        if path is not None:
            break
        time.sleep(0.1)
    assert path is not None, "the abandoned battle was not saved"
    recording = load_recording(path)
    assert recording.result.reason == "forfeit" and recording.result.winner == "p2"


def test_hostile_requests_get_one_line_refusals(server):
    url, _ = server
    with httpx.Client(base_url=url, timeout=60) as http:
        resets = {
            "seed as a string": {"seed": "1"},
            "seed as a bool": {"seed": True},
            "max_turns negative": {"max_turns": -1},
            "max_turns zero": {"max_turns": 0},
            "a huge format": {"format": "g" * 1_000_000},
            "a superscript digit": {"format": "gen\u00b2randombattle"},
        }
        for what, body in resets.items():
            response = http.post("/reset", json=body)
            detail = response.json()["detail"]
            assert 400 <= response.status_code < 500, (what, response.status_code, detail[:200])
            assert isinstance(detail, str) and "\n" not in detail and len(detail) < 300, (what, detail[:200])
        big = http.post("/reset", content=b" " * 2_000_000, headers={"content-type": "application/json"})
        assert big.status_code == 413 and "limit" in big.json()["detail"]
        first = http.post("/reset", json={"seed": 5}).json()
        mine = first["observation"]["episode_id"]
        for index in ("0", True, 3.0):
            response = http.post("/step", json={"action": {"index": index}, "episode_id": mine})
            assert response.status_code == 422 and "\n" not in response.json()["detail"], (index, response.text)
        taken = http.post("/reset", json={"seed": 6, "episode_id": mine})  # another client's battle in play
        assert taken.status_code == 400 and "made by the server" in taken.json()["detail"]
        step = http.post("/step", json={"action": {"index": 0}, "episode_id": mine})
        assert step.status_code == 200 and first["observation"]["legal_actions"]  # the battle was not touched


def test_a_websocket_session_cannot_step_another_sessions_battle(server):
    url, _ = server

    async def two() -> str:
        async with ShowdownClient(base_url=url) as owner, ShowdownClient(base_url=url) as other:
            mine = await owner.reset(seed=12)
            episode_id = mine.observation.episode_id
            with pytest.raises(RuntimeError) as caught:  # openenv-core's client raises the server's error line
                await other.step(ShowdownAction(index=0), episode_id=episode_id)
            with pytest.raises(RuntimeError, match="made by the server"):
                await other.reset(seed=1, episode_id=episode_id)
            after = await owner.step(ShowdownAction(index=0))  # the owner's battle goes on
            assert after.observation.episode_id == episode_id
            return str(caught.value)

    assert "no battle" in asyncio.run(two())


def test_a_team_format_server_deals_its_team_files():
    teams = sorted((Path(__file__).parent / "data" / "teams" / "gen9ou").glob("*.txt"))
    options = ["--format", "gen9ou", "--team1", str(teams[0]), "--team2", str(teams[1]), "--no-recordings"]
    for url, _ in serve(options, None):
        with httpx.Client(base_url=url, timeout=60) as http:
            first = http.post("/reset", json={"seed": 2}).json()["observation"]
            assert first["legal_actions"] and first["turn"] == 1  # team preview was answered; turn 1 is asked
            step = http.post("/step", json={"action": {"index": 0}, "episode_id": first["episode_id"]})
            assert step.status_code == 200 and step.json()["observation"]["info"]["illegal"] is False


def test_a_normal_websocket_close_logs_no_traceback():
    for url, _ in serve(["--format", "gen9randombattle", "--no-recordings"], None):
        asyncio.run(play(url, 5, "random"))
    assert "Traceback" not in served[-1] and "Exception in ASGI application" not in served[-1], served[-1][-2000:]


def test_plain_http_clients_cannot_hold_every_slot():
    for url, _ in serve(["--format", "gen9randombattle", "--no-recordings", "--max-sessions", "4",
                         "--max-per-client", "4"], None):
        with httpx.Client(base_url=url, timeout=60) as http:
            assert all(http.post("/reset", json={"seed": n}).status_code == 200 for n in range(2))
            full = http.post("/reset", json={"seed": 3})
            assert full.status_code == 429 and "\n" not in full.json()["detail"]
        steps, last, _ = asyncio.run(play(url, 6, "random"))  # a session still gets a slot and plays
        assert last.done and steps > 0


# --- issue 60: nothing a client sends is imported, episode ids are the server's, one client holds its share -------

CANARY = """import pathlib
pathlib.Path(__file__).with_suffix('.imported').write_text('its import-time code ran')
def make(*args, **kwargs):
    raise SystemExit('built')
"""


def test_a_clients_spec_is_never_imported_and_nested_json_is_a_400(tmp_path: Path) -> None:
    (tmp_path / "canarymod.py").write_text(CANARY)
    for url, _ in serve(["--format", "gen9randombattle", "--no-recordings"], None, tmp_path):
        with httpx.Client(base_url=url, timeout=60) as http:
            for spec in ("py:canarymod:make", "py:canarymod", "py:canarymod:make?x=1", " py:canarymod:make "):
                refused = http.post("/reset", json={"opponent": spec})
                detail = refused.json()["detail"]
                assert refused.status_code == 400 and "not offered" in detail and "\n" not in detail, detail
                assert "human" not in detail.split("choose one of:")[-1]  # refusals name only what is offered
            assert http.post("/reset", json={"opponent": "maxdamage"}).status_code == 200  # a served one plays
            for path, depth in (("/reset", 200_000), ("/step", 300), ("/reset", 20)):
                body = b'{"seed": 1, "x": ' + b"[" * depth + b"]" * depth + b"}"
                nested = http.post(path, content=body, headers={"content-type": "application/json"})
                detail = nested.json()["detail"]
                assert nested.status_code == 400 and "nested" in detail and "\n" not in detail, (path, depth)
            chosen = http.post("/reset", json={"seed": 1, "episode_id": "alice-battle"})
            assert chosen.status_code == 400 and "made by the server" in chosen.json()["detail"]
            step = http.post("/step", json={"action": {"index": 0}, "episode_id": "alice-battle"})
            assert step.status_code == 404
    assert not (tmp_path / "canarymod.imported").exists()


def test_one_client_holds_at_most_its_share_of_the_slots() -> None:
    for url, _ in serve(["--format", "gen9randombattle", "--no-recordings", "--max-sessions", "8",
                         "--max-per-client", "2"], None):
        with httpx.Client(base_url=url, timeout=60) as http:
            held = [http.post("/reset", json={"seed": n}) for n in range(2)]
            assert all(r.status_code == 200 for r in held)
            over = http.post("/reset", json={"seed": 3})
            assert over.status_code == 429 and "per client" in over.json()["detail"]
            with pytest.raises(ConnectionError, match="rejected"):  # nor a WebSocket session from this client
                asyncio.run(play(url, 4, "random"))
            for response in held:  # finishing a battle frees its slot
                episode = response.json()["observation"]["episode_id"]
                result = response.json()
                while not result["done"]:
                    result = http.post("/step", json={"action": {"index": 0}, "episode_id": episode}).json()
            assert http.post("/reset", json={"seed": 5}).status_code == 200
