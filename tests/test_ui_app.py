"""The real app (`python app.py` on a free port) driven through gradio_client and raw HTTP."""

from __future__ import annotations

import html
import json
import re
import threading
import time
import uuid
from pathlib import Path

import gradio as gr
import httpx
import pytest
from gradio_client import Client, handle_file
from test_ui_support import HOSTILE_ID, SAMPLE_ID, sample_path, server  # noqa: F401 (fixture)

from wolfeclick.ui.app import build_app
from wolfeclick.ui.library import Library

HOSTILE_IDS = ["../../etc/passwd", "%2e%2e/", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/etc/passwd", "..", "a/../../b",
               "C:\\Windows\\win.ini", "x" * 500]


@pytest.fixture(scope="module")
def client(server):  # noqa: F811
    return Client(server.url, verbose=False)


def text(message: str) -> str:
    """The words of a message the page shows as escaped HTML."""
    return html.unescape(re.sub(r"<[^>]+>", "", message))


def outputs_of(job) -> list:
    """Every output a streaming job produced, after waiting for its end."""
    for _ in job:
        pass
    return list(job.outputs())


# --------------------------------------------------------------------------------------------------------------
# Replays
# --------------------------------------------------------------------------------------------------------------
def test_every_action_has_an_api_name(client):
    names = set(client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert {"/live_start", "/live_stop", "/battle_stream", "/list_replays", "/get_replay", "/replay_open",
            "/replay_show", "/replay_next", "/replay_previous", "/replay_first", "/replay_last", "/replay_jump",
            "/replay_upload", "/replay_turn", "/replay_export_html", "/open_share_link", "/compare_run",
            "/compare_load", "/compare_list", "/hardware"} <= names


def test_list_replays(client):
    listed = client.predict(api_name="/list_replays")
    ids = {row["id"] for row in listed}
    assert SAMPLE_ID in ids and HOSTILE_ID in ids
    row = next(r for r in listed if r["id"] == SAMPLE_ID)
    assert row["p1"] == "heuristic" and row["p2"] == "random" and row["turns"] > 0 and row["winner"].startswith("p1")


def test_open_and_step_through_a_replay(client):
    html, hp, reward, slider, link, step, dropdown, json_dl, export_dl, message = client.predict(
        SAMPLE_ID, "p1", api_name="/replay_open")
    steps = slider["maximum"] + 1
    assert 'data-step="0"' in html and message == ""
    assert link.endswith(f"?replay={SAMPLE_ID}&turn=1")
    assert json.loads(Path(json_dl["value"]).read_text())["id"] == SAMPLE_ID  # the download is the recording
    assert 'class="battle-log-data"' in Path(export_dl["value"]).read_text()
    assert json.loads(hp["plot"])["layout"]["shapes"][0]["x0"] == 1

    html, *_, slider, link, step = client.predict(SAMPLE_ID, 0, "p1", api_name="/replay_next")
    assert 'data-step="1"' in html and slider["value"] == 1 and step == 1
    html, *_ = client.predict(SAMPLE_ID, 1, "p1", api_name="/replay_previous")
    assert 'data-step="0"' in html
    html, *_ = client.predict(SAMPLE_ID, 0, "p1", api_name="/replay_last")
    assert f'data-step="{steps - 1}"' in html and "won the battle" in html
    html, *_ = client.predict(SAMPLE_ID, 9, "p1", api_name="/replay_first")
    assert 'data-step="0"' in html
    html, *_, link, step = client.predict(SAMPLE_ID, 5, "p1", api_name="/replay_jump")
    assert 'data-turn="5"' in html and "&turn=5" in link
    html, *_ = client.predict(SAMPLE_ID, 7, "p2", api_name="/replay_show")
    assert 'data-step="7"' in html
    with pytest.raises(Exception, match="greater than maximum"):  # Gradio checks the slider's range itself
        client.predict(SAMPLE_ID, 10**6, "p1", api_name="/replay_show")
    html, *_ = client.predict(SAMPLE_ID, 10**6, "p1", api_name="/replay_jump")  # a turn past the end: the last
    assert f'data-step="{steps - 1}"' in html


def test_json_api_for_replays(client):
    recording = client.predict(SAMPLE_ID, api_name="/get_replay")
    assert recording["id"] == SAMPLE_ID and recording["schema"] == "wolfeclick.recording/1"
    turn = client.predict(SAMPLE_ID, 3, "p1", api_name="/replay_turn")
    assert turn["step"] == 3 and turn["link"].startswith("?replay=") and "<div" in turn["html"]
    exported = client.predict(SAMPLE_ID, api_name="/replay_export_html")
    assert exported["html"].startswith("<!DOCTYPE html>") and "replay-embed.js" in exported["html"]


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_hostile_replay_ids_are_rejected(client, server, bad):  # noqa: F811
    assert "error" in client.predict(bad, api_name="/get_replay")
    assert "error" in client.predict(bad, 0, "p1", api_name="/replay_turn")
    assert "error" in client.predict(bad, api_name="/replay_export_html")
    *_, message = client.predict(bad, "p1", api_name="/replay_open")
    assert text(message).startswith("⚠")
    html, *_ = client.predict(bad, 3, "p1", api_name="/replay_next")
    assert "wc-muted" in html and "passwd" not in html


def test_hostile_recording_is_shown_inert(client):
    html, *_ = client.predict(HOSTILE_ID, "p1", api_name="/replay_open")
    assert "<script" not in html.lower() and 'id="pwned"' not in html and "&lt;script&gt;" in html
    listed = client.predict(api_name="/list_replays")
    assert any("<script>" in row["p1"] for row in listed)  # kept as text; escaped wherever it is shown


# --------------------------------------------------------------------------------------------------------------
# Uploads
# --------------------------------------------------------------------------------------------------------------
def test_upload_a_good_recording(client, server, tmp_path):  # noqa: F811
    path = tmp_path / "evil name.json"  # the uploader's file name must not matter
    path.write_bytes(sample_path().read_bytes())
    html, *_, dropdown, json_dl, export_dl, message = client.predict(handle_file(str(path)), "p1",
                                                                    api_name="/replay_upload")
    assert text(message).startswith("✓ Uploaded as upload-")
    stored = dropdown["value"]
    assert stored.startswith("upload-") and (server.recordings / f"{stored}.json").exists()
    assert 'data-step="0"' in html
    assert not any("evil" in name for name in server.files())


@pytest.mark.parametrize("kind", ["junk-10MB", "nested-10000", "not-a-recording", "truncated"])
def test_upload_a_bad_recording(client, server, tmp_path, kind):  # noqa: F811
    data = {
        "junk-10MB": bytes(range(256)) * (10 * 1024 * 1024 // 256),
        "nested-10000": b"[" * 10_000 + b"]" * 10_000,
        "not-a-recording": json.dumps({"schema": "wolfeclick.recording/1", "id": "../../etc/passwd"}).encode(),
        "truncated": sample_path().read_bytes()[:5000],
    }[kind]
    path = tmp_path / f"{kind}.json"
    path.write_bytes(data)
    before = server.files()
    *_, message = client.predict(handle_file(str(path)), "p1", api_name="/replay_upload")
    message = text(message)
    assert message.startswith("⚠ Not a valid recording:") and message.endswith("Nothing was saved.")
    assert message.count("\n") == 0 and len(message) < 300
    assert server.files() == before


def test_upload_error_quoting_the_file_is_escaped(client, server, tmp_path):  # noqa: F811
    data = json.loads(sample_path().read_text())
    data['<img src=x id="pwned" onerror="alert(1)">'] = 1
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(data))
    *_, message = client.predict(handle_file(str(path)), "p1", api_name="/replay_upload")
    assert "<img" not in message and "&lt;img" in message and "unexpected field" in message


# --------------------------------------------------------------------------------------------------------------
# Share links: the load event
# --------------------------------------------------------------------------------------------------------------
def raw_load(server, query: str) -> list:  # noqa: F811
    """Call the page's load event the way a browser does, with the page's query string on queue/join."""
    config = httpx.get(server.url + "config").json()
    fn_index = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "open_share_link")
    session = uuid.uuid4().hex[:11]
    join = httpx.post(f"{server.url}gradio_api/queue/join?{query}",
                      json={"data": [], "event_data": None, "fn_index": fn_index, "trigger_id": None,
                            "session_hash": session}, timeout=10)
    assert join.status_code == 200, join.text
    with httpx.stream("GET", f"{server.url}gradio_api/queue/data", params={"session_hash": session},
                      timeout=20) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed":
                assert message.get("success"), message
                return message["output"]["data"]
    raise AssertionError("no result from the load event")


def test_share_link_opens_the_turn(server):  # noqa: F811
    tabs, html, hp, reward, slider, link, step, dropdown, *_rest, message = raw_load(server, f"replay={SAMPLE_ID}&turn=5")
    assert tabs.get("selected") == "replays"
    assert 'data-turn="5"' in html and dropdown["value"] == SAMPLE_ID
    assert link.endswith(f"?replay={SAMPLE_ID}&turn=5")
    # a precise decision point too
    _, html, *_ = raw_load(server, f"replay={SAMPLE_ID}&turn=2&step=2")
    assert 'data-step="2"' in html


@pytest.mark.parametrize("query", ["replay=../../etc/passwd&turn=1", "replay=%2e%2e/&turn=1",
                                   "replay=%2Fetc%2Fpasswd", "replay=" + "a" * 3000, "replay=nope&turn=-1",
                                   f"replay={SAMPLE_ID}&turn=99999999999999999999", f"replay={SAMPLE_ID}&turn=abc",
                                   "replay=%00", "tab=<script>"])
def test_hostile_share_links(server, query):  # noqa: F811
    out = raw_load(server, query)
    message = out[-1]
    html = out[1]
    if query.startswith(f"replay={SAMPLE_ID}"):
        assert "data-turn" in html  # a bad turn number just falls back
    elif query.startswith("replay="):
        assert "could not be opened" in message and "passwd" not in html
    assert "<script>" not in html


def test_load_event_with_a_request(tmp_path):
    """The same load event called in-process with a gr.Request carrying the query parameters."""
    (tmp_path / f"{SAMPLE_ID}.json").write_bytes(sample_path().read_bytes())
    demo = build_app(Library(tmp_path))
    load = next(f for f in demo.fns.values() if f.api_name == "open_share_link")
    tabs, html, _hp, _reward, slider, link, step, *_ = load.fn(gr.Request(query_params={"replay": SAMPLE_ID, "turn": "4"}))
    assert 'data-turn="4"' in html and link == f"?replay={SAMPLE_ID}&turn=4"
    *_, message = load.fn(gr.Request(query_params={"replay": "../../etc/passwd", "turn": "4"}))
    assert "invalid replay id" in message


# --------------------------------------------------------------------------------------------------------------
# Live battles
# --------------------------------------------------------------------------------------------------------------
def test_live_heuristic_vs_random_streams_to_the_end(client, server):  # noqa: F811
    job = client.submit("heuristic", "", "random", "", "gen4randombattle", "11", "score", 0, api_name="/live_start")
    updates = outputs_of(job)
    turns = [u for u in updates if isinstance(u[5], dict) and "decisions" in u[5]]
    assert len(turns) >= 10
    assert [t[5]["index"] for t in turns] == list(range(len(turns)))  # every turn record, in order
    status, html, hp, reward, link, final, *_ = updates[-1]
    assert status.startswith("Finished") and final["done"] and final["result"]["reason"] in ("win", "tie")
    recording_id = final["recording"]
    assert (server.recordings / f"{recording_id}.json").exists()
    assert f"?replay={recording_id}&turn=" in link
    listed = {row["id"] for row in client.predict(api_name="/list_replays")}
    assert recording_id in listed


def test_two_sessions_do_not_block_each_other(server):  # noqa: F811
    spans: dict[int, list[float]] = {}

    def run(n: int) -> None:
        c = Client(server.url, verbose=False)
        job = c.submit("heuristic", "", "random", "", "gen4randombattle", str(100 + n), "score", 0.05,
                       api_name="/live_start")
        times = []
        for _ in job:
            times.append(time.monotonic())
        spans[n] = [times[0], times[-1]]

    threads = [threading.Thread(target=run, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    (a0, a1), (b0, b1) = spans[0], spans[1]
    assert a0 < b1 and b0 < a1, spans  # the two battles overlapped in time


def test_battle_stream_api(client, server):  # noqa: F811
    items = outputs_of(client.submit("maxdamage", "random", "gen9randombattle", 3, 4, api_name="/battle_stream"))
    turns = [i for i in items if "decisions" in i]
    assert turns and items[-1]["done"] and items[-1]["result"]["reason"] in ("turn_limit", "win")
    bad = outputs_of(client.submit("nonsense-policy", "random", "gen9randombattle", 1, 5, api_name="/battle_stream"))
    assert "unknown policy spec" in bad[-1]["error"]


def test_live_errors_are_one_line(client):
    for args in [("heuristic", "", "random", "", "not a format!", "", "score", 0),
                 ("heuristic", "", "random", "", "gen4randombattle", "-5", "score", 0),
                 ("custom", "definitely-not-a-spec", "random", "", "gen4randombattle", "", "score", 0),
                 ("custom", "preset:run9", "random", "", "gen4randombattle", "1", "score", 0)]:
        status = outputs_of(client.submit(*args, api_name="/live_start"))[-1][0]
        assert status.startswith("⚠") and "\n" not in status, status


def test_live_checkpoint_shows_loading_and_stops(server, tmp_path_factory):  # noqa: F811
    pytest.importorskip("torch")
    pytest.importorskip("wolfeclick.llm.policy")
    from llm_fixtures import build_tiny_checkpoint

    tiny = build_tiny_checkpoint(tmp_path_factory.mktemp("tiny"))
    c = Client(server.url, verbose=False)
    job = c.submit("custom", f"llm:{tiny}", "random", "", "gen4randombattle", "5", "score", 0.2,
                   api_name="/live_start")
    statuses, stopped = [], False
    for update in job:
        statuses.append(update[0])
        if not stopped and isinstance(update[5], dict) and "decisions" in update[5]:
            assert c.predict(api_name="/live_stop").startswith("■")
            stopped = True
    assert any("Loading" in s or "Starting" in s for s in statuses), statuses
    assert stopped and statuses[-1].startswith("Stopped")


# --------------------------------------------------------------------------------------------------------------
# Compare
# --------------------------------------------------------------------------------------------------------------
def test_compare_runs_a_small_tournament(client):
    job = client.submit(["random", "maxdamage"], "", 2, "gen4randombattle", "7", "score", api_name="/compare_run")
    updates = outputs_of(job)
    assert len(updates) >= 3  # start, each battle, the end
    status, table, win, heat, ratings, select, games = updates[-1]
    assert "2 battles" in status and "complete" in status
    policies = {row[0] for row in table["data"]}
    assert policies == {"random", "maxdamage"}
    # every battle is one click from its replay, and the replay is in the Replays library
    links = [row[-1] for row in games["data"]]
    assert len(links) == 2 and all(link.startswith("[open](?replay=") for link in links)
    listed = {r["id"] for r in client.predict(api_name="/list_replays")}
    assert {link[len("[open](?replay="):-1] for link in links} <= listed
    tournament = select["value"]
    earlier = client.predict(api_name="/compare_list")
    assert tournament in {e["id"] for e in earlier}
    status, table, *_, loaded_games = client.predict(tournament, api_name="/compare_load")
    assert "complete" in status and {row[0] for row in table["data"]} == policies
    assert loaded_games["data"] == games["data"]
    status, *_ = client.predict("../../etc", api_name="/compare_load")
    assert status.startswith("⚠")
