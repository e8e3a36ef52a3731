"""Foreign files through the app's real upload path (`python app.py` driven by gradio_client), the recordings
list's source field and filter, and a hostile Showdown log opened in a real browser."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from gradio_client import handle_file

from devkit.appserver import app_client
from devkit.browser import CHROMIUM, Browser
from wolfeclick.battle.store import load_recording
from wolfeclick.interop.sniff import read_any

DATA = Path(__file__).resolve().parent / "data" / "interop"
FIXTURES = ["record_battle.json", "replay_battle.json", "showdown_replay.json", "showdown_hostile.log",
            "showdown_replay.html", "showdown_server.json", "showdown_tierless.log"]
UPLOAD_OUTPUTS = ("data", "select", "message", "json_file", "export_file")
VIEW = "document.querySelector('#wc-replays-viewer')"


@pytest.fixture(scope="module")
def client(server):
    return app_client(server.url)


def text(message: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", message))


def upload(client, path: Path) -> dict:
    return dict(zip(UPLOAD_OUTPUTS, client.predict(handle_file(str(path)), api_name="/replay_upload")))


@pytest.mark.parametrize("name", FIXTURES)
def test_each_foreign_format_uploads_and_opens_with_every_turn(client, server, tmp_path, name):
    source = DATA / name
    expected = read_any(source.read_bytes())
    path = tmp_path / ("renamed" + source.suffix)  # the format is sniffed from the content, not the name
    path.write_bytes(source.read_bytes())
    out = upload(client, path)
    assert text(out["message"]).startswith(("✓ Uploaded as upload-", "✓ Already here as upload-")), out["message"]
    stored = out["select"]["value"]
    recording = load_recording(server.recordings / f"{stored}.json")  # what `validate` reads
    assert recording.source.kind == "imported" and len(recording.turns) == len(expected.turns)
    payload = json.loads(out["data"])
    assert payload["id"] == stored and 'data-step="0"' in payload["panels"][0]
    last = client.predict(stored, len(expected.turns) - 1, "p1", api_name="/replay_turn")
    assert last["decisions"] == len(expected.turns) and f'data-step="{len(expected.turns) - 1}"' in last["html"]
    row = next(r for r in client.predict("imported", api_name="/list_replays") if r["id"] == stored)
    assert row["source"] == "imported (upload)" and row["source_kind"] == "imported"  # docs/app.md


def test_the_list_says_where_recordings_came_from_and_filters_by_it(client, server):
    upload(client, DATA / "showdown_replay.json")
    everything = client.predict("all", api_name="/list_replays")
    imported = client.predict("imported", api_name="/list_replays")
    played = client.predict("played", api_name="/list_replays")
    assert imported and played and len(imported) + len(played) <= len(everything)
    assert {r["source_kind"] for r in imported} == {"imported"} and {r["source"] for r in played} == {"played here"}
    assert any(r["source"] == "imported (upload)" for r in imported)


@pytest.mark.parametrize("cut", ["truncated", "wrong-type"])
def test_a_broken_foreign_file_gets_one_line(client, server, tmp_path, cut):
    raw = (DATA / "record_battle.json").read_bytes()
    data = raw[: len(raw) // 3] if cut == "truncated" else \
        json.dumps({**json.loads(raw), "turns": {"1": "x"}}).encode()
    path = tmp_path / "broken.json"
    path.write_bytes(data)
    before = server.files()
    message = text(upload(client, path)["message"])
    assert message.startswith("⚠ Not a valid recording:") and "\n" not in message and len(message) < 300
    assert ("truncated" in message) if cut == "truncated" else ("wrong type" in message)
    assert server.files() == before


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (run `make browser`)")
def test_showdown_log_with_html_and_chat_imports_inert(client, server):
    hostile = (DATA / "showdown_hostile.log").read_text()
    assert "|html|" in hostile and "<script>window.__pwned=1</script>" in hostile and "|c|" in hostile
    stored = upload(client, DATA / "showdown_hostile.log")["select"]["value"]
    with Browser() as browser:
        browser.open(f"{server.url}?replay={stored}&turn=3")
        assert browser.wait_for(f"{VIEW}?.querySelector('.wc-turn')?.dataset.turn") == "3"
        assert browser.evaluate("window.__pwned === undefined")  # no script ran
        assert browser.evaluate("document.getElementById('pwned') === null")  # no markup was injected
        view = browser.evaluate(f"{VIEW}.querySelector('.wc-view').innerText")
        assert "Alice" in view or "Bob" in view
        assert "gl hf" not in view and "__pwned" not in view  # chat and |html| lines were dropped on import
        dom = browser.dom()
        assert not re.search(r"<script>window\.__pwned", dom) and "broadcast-blue" not in dom


def test_the_upload_box_offers_every_file_kind_the_importers_read() -> None:
    from wolfeclick.ui.tabs.replays import UPLOAD_TYPES

    assert {".json", ".log", ".html", ".htm"} <= set(UPLOAD_TYPES)  # a saved replay page could not be picked

