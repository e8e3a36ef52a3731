"""The real app (`python app.py` on a free port) driven through gradio_client and raw HTTP."""

from __future__ import annotations

import html
import json
import re
import threading
import time

import gradio as gr
import httpx
import pytest
from gradio_client import handle_file

from devkit.appserver import app_client, raw_load
from devkit.samples import HOSTILE_ID, SAMPLE_ID, sample_path
from wolfeclick.ui.app import build_app
from wolfeclick.ui.library import Library

HOSTILE_IDS = ["../../etc/passwd", "%2e%2e/", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "/etc/passwd", "..", "a/../../b",
               "C:\\Windows\\win.ini", "x" * 500]


@pytest.fixture(scope="module")
def client(server):
    return app_client(server.url)


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
    assert row["source"] == "played here" and row["source_kind"] == "played"


def test_open_and_step_through_a_replay(client):
    first = client.predict(SAMPLE_ID, "p1", api_name="/replay_open")
    steps = first["steps"]
    assert 'data-step="0"' in first["html"] and first["message"] == ""
    assert first["link"] == f"?replay={SAMPLE_ID}&turn=1"
    assert first["marker"]["hp"][0] == first["marker"]["reward"][0]  # both charts' markers at turn 1
    step = client.predict(SAMPLE_ID, 0, "p1", api_name="/replay_next")
    assert 'data-step="1"' in step["html"] and step["step"] == 1
    assert 'data-step="0"' in client.predict(SAMPLE_ID, 1, "p1", api_name="/replay_previous")["html"]
    last = client.predict(SAMPLE_ID, 0, "p1", api_name="/replay_last")
    assert f'data-step="{steps - 1}"' in last["html"] and ">End<" in last["html"] and "won in turn" in last["html"]
    before_end = client.predict(SAMPLE_ID, steps - 2, "p1", api_name="/replay_show")
    assert "won the battle" in before_end["html"]  # the last decision, with what followed it
    assert 'data-step="0"' in client.predict(SAMPLE_ID, 9, "p1", api_name="/replay_first")["html"]
    jumped = client.predict(SAMPLE_ID, 5, "p1", api_name="/replay_jump")
    assert 'data-turn="5"' in jumped["html"] and "&turn=5" in jumped["link"] and jumped["message"] == ""
    assert 'data-step="7"' in client.predict(SAMPLE_ID, 7, "p2", api_name="/replay_show")["html"]
    far = client.predict(SAMPLE_ID, 10**6, "p1", api_name="/replay_show")  # past the end: the last step
    assert far["step"] == steps - 1
    late = client.predict(SAMPLE_ID, 10**6, "p1", api_name="/replay_jump")  # a turn past the end: clamped, said
    assert late["step"] == first["decisions"] - 1 and "not in this battle" in late["message"]
    early = client.predict(SAMPLE_ID, -3, "p1", api_name="/replay_jump")
    assert early["step"] == 0 and "Turn -3 is not in this battle" in early["message"]


@pytest.mark.parametrize("bad", ["abc", [1], {}, -1, 2.5])
def test_replay_turn_with_a_bad_step_is_one_line(client, bad):
    out = client.predict(SAMPLE_ID, bad, "p1", api_name="/replay_turn")
    assert set(out) == {"error"} and "step must be a whole number" in out["error"] and "\n" not in out["error"]


def test_json_api_for_replays(client):
    recording = client.predict(SAMPLE_ID, api_name="/get_replay")
    assert recording["id"] == SAMPLE_ID and recording["schema"] == "wolfeclick.recording/1"
    turn = client.predict(SAMPLE_ID, 3, "p1", api_name="/replay_turn")
    assert turn["step"] == 3 and turn["link"].startswith("?replay=") and "<div" in turn["html"]
    assert len(json.dumps(turn)) < 200_000  # one step is one bounded panel, not the battle's figures
    exported = client.predict(SAMPLE_ID, api_name="/replay_export_html")
    assert exported["html"].startswith("<!DOCTYPE html>") and "replay-embed.js" in exported["html"]


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_hostile_replay_ids_are_rejected(client, server, bad):
    assert "error" in client.predict(bad, api_name="/get_replay")
    assert "error" in client.predict(bad, 0, "p1", api_name="/replay_turn")
    assert "error" in client.predict(bad, api_name="/replay_export_html")
    assert "error" in client.predict(bad, "p1", api_name="/replay_open")
    out = client.predict(bad, 3, "p1", api_name="/replay_next")
    assert "error" in out and "passwd" not in json.dumps(out).replace(json.dumps(bad)[1:-1], "")


def test_hostile_recording_is_shown_inert(client):
    out = client.predict(HOSTILE_ID, "p1", api_name="/replay_open")
    html = out["html"]
    assert "<script" not in html.lower() and 'id="pwned"' not in html and "&lt;script&gt;" in html
    listed = client.predict(api_name="/list_replays")
    assert any("<script>" in row["p1"] for row in listed)  # kept as text; escaped wherever it is shown


# --------------------------------------------------------------------------------------------------------------
# Uploads
# --------------------------------------------------------------------------------------------------------------
UPLOAD_OUTPUTS = ("data", "select", "message", "json_file", "export_file")


def upload_outputs(client, path) -> dict:
    return dict(zip(UPLOAD_OUTPUTS, client.predict(handle_file(str(path)), api_name="/replay_upload")))


def unchanged(value) -> bool:
    """An output the handler did not update (Gradio sends an empty update for it)."""
    return value is None or (isinstance(value, dict) and value.get("__type__") == "update" and "value" not in value
                             and not value.get("props", {}).get("value"))


def unwrap(value):
    """A component update's value (a handler returning ``gr.Dataframe(value=…)`` sends it wrapped)."""
    if isinstance(value, dict) and value.get("__type__") == "update" and "value" in value:
        return value["value"]
    return value


def payload_of(value) -> dict:
    """The viewer payload a data component received (JSON text)."""
    return json.loads(value)


def test_upload_a_good_recording(client, server, tmp_path):
    path = tmp_path / "evil name.json"  # the uploader's file name must not matter
    path.write_bytes(sample_path().read_bytes())
    out = upload_outputs(client, path)
    assert text(out["message"]).startswith("✓ Uploaded as upload-")
    stored = out["select"]["value"]
    assert stored.startswith("upload-") and (server.recordings / f"{stored}.json").exists()
    assert (server.recordings / f"{stored}.json").read_bytes() == sample_path().read_bytes()  # byte for byte
    payload = payload_of(out["data"])
    assert payload["id"] == stored and payload["start"] == 0 and 'data-step="0"' in payload["panels"][0]
    assert not any("evil" in name for name in server.files())


@pytest.mark.parametrize("kind", ["junk-10MB", "nested-10000", "not-a-recording", "truncated", "one-player"])
def test_upload_a_bad_recording(client, server, tmp_path, kind):
    one_player = json.loads(sample_path().read_text())
    one_player["players"] = {"p1": one_player["players"]["p1"]}
    data = {
        "junk-10MB": bytes(range(256)) * (10 * 1024 * 1024 // 256),
        "nested-10000": b"[" * 10_000 + b"]" * 10_000,
        "not-a-recording": json.dumps({"schema": "wolfeclick.recording/1", "id": "../../etc/passwd"}).encode(),
        "truncated": sample_path().read_bytes()[:5000],
        "one-player": json.dumps(one_player).encode(),
    }[kind]
    path = tmp_path / f"{kind}.json"
    path.write_bytes(data)
    before = server.files()
    out = upload_outputs(client, path)
    message = text(out["message"])
    assert message.startswith("⚠ Not a valid recording:") and message.endswith("Nothing was saved.")
    assert message.count("\n") == 0 and len(message) < 300
    assert server.files() == before
    assert unchanged(out["data"]) and unchanged(out["select"])  # the open replay is left alone


def test_upload_error_quoting_the_file_is_escaped(client, server, tmp_path):
    data = json.loads(sample_path().read_text())
    data['<img src=x id="pwned" onerror="alert(1)">'] = 1
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(data))
    message = upload_outputs(client, path)["message"]
    assert "<img" not in message and "&lt;img" in message and "unexpected field" in message


def test_a_broken_file_on_disk_never_locks_anyone_out(client, server, tmp_path):
    """Issue 8 (2): a one-player (or {}-players) file in the folder is skipped; the page, list and uploads work."""
    data = json.loads(sample_path().read_text())
    for name, players in (("zz-one-player", {"p1": data["players"]["p1"]}), ("zz-no-players", {})):
        (server.recordings / f"{name}.json").write_text(json.dumps(dict(data, id=name, players=players)))
    try:
        ids = {row["id"] for row in client.predict(api_name="/list_replays")}
        assert SAMPLE_ID in ids and "zz-one-player" not in ids
        out = raw_load(server, "")
        assert any(isinstance(v, str) and '"kind":"open"' in v for v in out)  # the page still opens a replay
        path = tmp_path / "good.json"
        path.write_bytes(sample_path().read_bytes())
        assert text(upload_outputs(client, path)["message"]).startswith("✓")
        assert "error" in client.predict("zz-one-player", 0, "p1", api_name="/replay_turn")
    finally:
        for name in ("zz-one-player", "zz-no-players"):
            (server.recordings / f"{name}.json").unlink()


# --------------------------------------------------------------------------------------------------------------
# Share links: the load event
# --------------------------------------------------------------------------------------------------------------
LOAD_OUTPUTS = ("tabs", "data", "select", "message", "json_file", "export_file", "table", "page", "caption")


def loaded(server, query: str) -> dict:
    return dict(zip(LOAD_OUTPUTS, raw_load(server, query)))


def test_share_link_opens_the_turn(server):
    out = loaded(server, f"replay={SAMPLE_ID}&turn=5")
    assert out["tabs"].get("selected") == "replays"
    payload = payload_of(out["data"])
    assert payload["id"] == SAMPLE_ID and payload["turns"][payload["start"]] == 5
    assert f'data-step="{payload["start"]}"' in payload["panels"][payload["start"] - payload["first"]]
    assert out["select"]["value"] == SAMPLE_ID
    # a precise decision point too
    assert payload_of(loaded(server, f"replay={SAMPLE_ID}&turn=2&step=2")["data"])["start"] == 2


@pytest.mark.parametrize("query", ["replay=../../etc/passwd&turn=1", "replay=%2e%2e/&turn=1",
                                   "replay=%2Fetc%2Fpasswd", "replay=" + "a" * 3000, "replay=nope&turn=-1",
                                   f"replay={SAMPLE_ID}&turn=99999999999999999999", f"replay={SAMPLE_ID}&turn=abc",
                                   "replay=%00", "tab=<script>"])
def test_hostile_share_links(server, query):
    out = loaded(server, query)
    if query.startswith(f"replay={SAMPLE_ID}"):
        assert payload_of(out["data"])["id"] == SAMPLE_ID  # a bad turn number just falls back
    elif query.startswith("replay="):
        assert "could not be opened" in (out["message"] or "") and "passwd" not in (out["data"] or "")
    assert "<script>" not in str(out["data"]) + str(out["message"])  # (the list holds the hostile names as text)


def test_load_event_with_a_request(tmp_path):
    """The same load event called in-process with a gr.Request carrying the query parameters."""
    import asyncio

    (tmp_path / f"{SAMPLE_ID}.json").write_bytes(sample_path().read_bytes())
    demo = build_app(Library(tmp_path))
    load = next(f for f in demo.fns.values() if f.api_name == "open_share_link")
    update = asyncio.run(load.fn(gr.Request(query_params={"replay": SAMPLE_ID, "turn": "4"})))
    values = {getattr(k, "elem_id", None) or type(k).__name__: v for k, v in update.items()}
    payload = payload_of(values["wc-replays-data"])
    assert payload["turns"][payload["start"]] == 4
    update = asyncio.run(load.fn(gr.Request(query_params={"replay": "../../etc/passwd", "turn": "4"})))
    assert any("invalid" in str(v) for v in update.values())
    assert not any(getattr(k, "elem_id", None) == "wc-replays-data" for k in update)


# --------------------------------------------------------------------------------------------------------------
# Live battles
# --------------------------------------------------------------------------------------------------------------
LIVE_OUTPUTS = ("status", "data", "turn", "link")  # gradio_client leaves out the Button and the State


def live_updates(job) -> list[dict]:
    return [dict(zip(LIVE_OUTPUTS, u)) for u in outputs_of(job)]


def test_live_heuristic_vs_random_streams_to_the_end(client, server):
    job = client.submit("heuristic", "random", "gen4randombattle", "11", "score", 0, api_name="/live_start")
    updates = live_updates(job)
    turns = [u["turn"] for u in updates if isinstance(u["turn"], dict) and "decisions" in u["turn"]]
    assert len(turns) >= 10
    assert [t["index"] for t in turns] == list(range(len(turns)))  # every turn record, in order
    final = updates[-1]
    assert final["status"].startswith("Finished") and final["turn"]["done"]
    assert final["turn"]["result"]["reason"] in ("win", "tie") and "Stopped" not in final["status"]
    recording_id = final["turn"]["recording"]
    assert (server.recordings / f"{recording_id}.json").exists()
    assert f"?replay={recording_id}&turn=" in final["link"]
    assert final["turn"]["step"] == len(turns) - 1  # Open in Replays opens this step: the link's own
    assert f"turn={turns[-1]['turn']}" in final["link"]
    listed = {row["id"] for row in client.predict(api_name="/list_replays")}
    assert recording_id in listed
    # each live update carries only the new steps (and the previous one, now settled), never the whole battle;
    # the last one, the battle over, every step again (the earlier panels said "in progress": issue 27)
    payloads = [payload_of(u["data"]) for u in updates if isinstance(u["data"], str) and u["data"]]
    grown = [p for p in payloads if p["decisions"] >= 2 and not p["finished"]]
    assert grown and all(len(p["panels"]) <= 3 for p in grown)
    [end] = [p for p in payloads if p["finished"]]
    assert end["first"] == 0 and len(end["panels"]) == end["total"] == len(turns) + 1
    assert not any("in progress" in panel or "Still to come" in panel for panel in end["panels"])
    mid = next(p for p in grown if not p["finished"])
    assert "Still to come" in mid["panels"][-1] and "Still to come" not in mid["panels"][0]


def test_two_sessions_do_not_block_each_other(server):
    spans: dict[int, list[float]] = {}

    def run(n: int) -> None:
        c = app_client(server.url)
        job = c.submit("heuristic", "random", "gen4randombattle", str(100 + n), "score", 0.05,
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


def test_battle_stream_api(client, server):
    items = outputs_of(client.submit("maxdamage", "random", "gen9randombattle", 3, 4, api_name="/battle_stream"))
    turns = [i for i in items if "decisions" in i]
    assert turns and items[-1]["done"] and items[-1]["result"]["reason"] in ("turn_limit", "win")
    bad = outputs_of(client.submit("nonsense-policy", "random", "gen9randombattle", 1, 5, api_name="/battle_stream"))
    assert "not offered" in bad[-1]["error"] and "\n" not in bad[-1]["error"]


def test_the_same_seed_played_twice_leaves_two_recordings(client, server):
    """Issue 8 (5): /battle_stream with max_turns=1 no longer replaces the full battle of the same seed."""
    full = outputs_of(client.submit("heuristic", "random", "gen4randombattle", 777, 300, api_name="/battle_stream"))
    short = outputs_of(client.submit("heuristic", "random", "gen4randombattle", 777, 1, api_name="/battle_stream"))
    a, b = full[-1]["recording"], short[-1]["recording"]
    assert a != b
    kept = json.loads((server.recordings / f"{a}.json").read_text())
    assert kept["result"]["reason"] in ("win", "tie") and len(kept["turns"]) > 2
    assert json.loads((server.recordings / f"{b}.json").read_text())["result"]["reason"] == "turn_limit"


def test_live_errors_are_one_line(client):
    for args in [("heuristic", "random", "not a format!", "", "score", 0),
                 ("heuristic", "random", "gen4randombattle", "-5", "score", 0)]:
        status = live_updates(client.submit(*args, api_name="/live_start"))[-1]["status"]
        assert status.startswith("⚠") and "\n" not in status, status


def test_live_checkpoint_shows_loading_and_stops(tmp_path_factory):
    """A checkpoint the operator lists ($WOLFECLICK_APP_POLICIES) is one of the app's choices and plays there."""
    pytest.importorskip("torch")
    pytest.importorskip("wolfeclick.llm.policy")
    from devkit.appserver import Server
    from devkit.llm_fixtures import build_tiny_checkpoint

    tiny = build_tiny_checkpoint(tmp_path_factory.mktemp("tiny"))
    own = Server(extra_env={"WOLFECLICK_APP_POLICIES": f"llm:{tiny}"})
    try:
        config = httpx.get(own.url + "config", timeout=30).json()
        agent = next(c for c in config["components"] if c.get("props", {}).get("elem_id") == "wc-live-agent")
        assert f"llm:{tiny}" in [value for _, value in agent["props"]["choices"]]
        _play_and_stop(app_client(own.url), f"llm:{tiny}")
    finally:
        own.stop(wait=False)


def _play_and_stop(c, spec: str) -> None:
    job = c.submit(spec, "random", "gen4randombattle", "5", "score", 0.2, api_name="/live_start")
    statuses, stopped = [], False
    for update in job:
        out = dict(zip(LIVE_OUTPUTS, update))
        statuses.append(out["status"])
        if not stopped and isinstance(out["turn"], dict) and "decisions" in out["turn"]:
            assert c.predict(api_name="/live_stop").startswith("■")
            stopped = True
    assert any("Loading" in s or "Starting" in s for s in statuses), statuses
    assert stopped and statuses[-1].startswith("Stopped") and "Finished" not in statuses[-1]


# --------------------------------------------------------------------------------------------------------------
# Compare
# --------------------------------------------------------------------------------------------------------------
def test_compare_runs_a_small_tournament(client):
    from wolfeclick.ui.tabs.compare import LOAD_OUTPUTS, RUN_OUTPUTS

    job = client.submit(["random", "maxdamage"], 2, "gen4randombattle", "7", "score", api_name="/compare_run")
    updates = [{k: unwrap(v) for k, v in zip(RUN_OUTPUTS, u)} for u in outputs_of(job)]
    assert len(updates) >= 3  # start, each battle, the end
    last = updates[-1]
    assert "2 battles" in last["status"] and "complete" in last["status"]
    policies = {row[0] for row in last["table"]["data"]}
    assert policies == {"random", "maxdamage"}
    # every battle is one click from its replay, and the replay is in the Replays library
    links = [row[-1] for row in last["games"]["data"]]
    assert len(links) == 2 and all(link.startswith("[open](?replay=") for link in links)
    listed = {r["id"] for r in client.predict(api_name="/list_replays")}
    assert {link[len("[open](?replay="):-1] for link in links} <= listed
    tournament = last["select"]
    earlier = client.predict(api_name="/compare_list")
    entry = next(e for e in earlier if e["id"] == tournament)
    assert "random vs maxdamage" in entry["label"] and "2 battles" in entry["label"] and "UTC" in entry["label"]
    loaded_out = {k: unwrap(v) for k, v in zip(LOAD_OUTPUTS, client.predict(tournament, api_name="/compare_load"))}
    assert "complete" in loaded_out["status"] and {row[0] for row in loaded_out["table"]["data"]} == policies
    assert loaded_out["games"]["data"] == last["games"]["data"]
    status = client.predict("../../etc", api_name="/compare_load")[0]
    assert status.startswith("⚠")
