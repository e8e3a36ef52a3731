"""Training recordings are compact at rest: the env saves each episode gzip-compressed by default (a tenth of the JSON
or less; ``python -m benchmarks.recording_size`` measures it, docs/benchmarks.md has the numbers), in a ``.json`` file
that every reader of recordings takes as it is: the strict loader, ``validate``, the exporter, local imports, the app's
library (which charges its view cache what the file holds, not its size on disk, and whose JSON download is the JSON
itself) and the tool env's prompt keeping (which writes it back compressed). Uploads stay JSON: a compressed upload is
refused in one line, since it would hold more than the operator's upload limit counted. The same recording always compresses to the same
bytes, and the recording itself is the one ``compress_recordings=False`` writes. A gzip file that inflates past the
recording limit, or is cut short, is refused in one line."""

from __future__ import annotations

import gzip
import json

import pytest

from devkit.samples import play_random_episode
from wolfeclick.battle.store import (
    GZIP_MAGIC,
    MAX_RECORDING_BYTES,
    RecordingError,
    compress_recording,
    inflate,
    load_recording,
    parse_recording,
    rewrite_recording,
    same_battle,
)
from wolfeclick.env import ShowdownEnv, SimService

FORMAT = "gen9randombattle"


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    """One seeded episode saved by default (compressed) and the same episode saved as plain JSON."""
    root = tmp_path_factory.mktemp("episodes")
    service = SimService(1)
    try:
        compact = ShowdownEnv("random", format=FORMAT, recordings=root / "compact", service=service,
                              action="discrete", max_turns=40)
        plain = ShowdownEnv("random", format=FORMAT, recordings=root / "plain", service=service, action="discrete",
                            max_turns=40, compress_recordings=False)
        paths = play_random_episode(compact, 3), play_random_episode(plain, 3)
        compact.close()
        plain.close()
    finally:
        service.close()
    return paths


def test_the_env_saves_compressed_json_by_default_a_tenth_of_the_size_or_less(episodes):
    compact, plain = episodes
    data = compact.read_bytes()
    assert compact.suffix == ".json" and data.startswith(GZIP_MAGIC)
    assert plain.read_bytes()[:1] == b"{"
    assert len(data) * 10 <= plain.stat().st_size
    assert same_battle(load_recording(compact), load_recording(plain))  # the recording is the same
    text = gzip.decompress(data)
    assert load_recording(compact).to_json().encode("utf-8") == text
    assert compress_recording(text) == data  # same recording, same bytes: no time or name in the gzip header


def test_every_reader_of_recordings_takes_the_compressed_file(episodes, tmp_path):
    from wolfeclick.cli import main
    from wolfeclick.interop.export import export_files, read_rows
    from wolfeclick.ui.library import Library

    compact, plain = episodes
    assert main(["validate", str(compact)]) == 0
    export_files([compact], tmp_path / "a.jsonl", side="p1", kind="grpo")
    export_files([plain], tmp_path / "b.jsonl", side="p1", kind="grpo")
    assert read_rows(tmp_path / "a.jsonl") == read_rows(tmp_path / "b.jsonl")
    library = Library(compact.parent)
    assert [info.id for info in library.list()] == [compact.stem]
    assert same_battle(library.get(compact.stem), load_recording(plain))


def test_the_library_opens_a_compressed_recording_charges_what_it_holds_and_downloads_its_json(episodes):
    from wolfeclick.interop.sniff import FORMATS, read_any, sniff
    from wolfeclick.ui.library import VIEW_BYTES_PER_FILE_BYTE, Library

    compact, plain = episodes
    data = compact.read_bytes()
    assert sniff(data) == FORMATS[0] and same_battle(read_any(data), load_recording(plain))  # local imports too
    library = Library(compact.parent)
    library.get(compact.stem)
    assert library.cached_bytes() == len(gzip.decompress(data)) * VIEW_BYTES_PER_FILE_BYTE
    download = library.json_file(compact.stem)  # the viewer's JSON button: the JSON the file holds, byte for byte
    assert download.read_bytes() == gzip.decompress(data) and download.name == compact.name
    assert Library(plain.parent).json_file(plain.stem) == plain.resolve()  # a plain file is its own download


def test_an_upload_is_json_a_compressed_one_is_refused_in_one_line(episodes, tmp_path):
    from wolfeclick.ui.library import Library
    from wolfeclick.ui.uploads import check_upload

    compact, _ = episodes
    data = compact.read_bytes()  # a few KB that inflate far past what the operator's upload limit counted
    for upload in (check_upload, Library(tmp_path / "library").upload):
        with pytest.raises(RecordingError, match="gzip-compressed") as caught:
            upload(data)
        assert "\n" not in str(caught.value)
    assert not (tmp_path / "library").exists() or not list((tmp_path / "library").iterdir())


def test_rewriting_a_compressed_recording_keeps_it_compressed(episodes, tmp_path):
    compact, plain = episodes
    for source in (compact, plain):
        copy = tmp_path / source.parent.name / source.name
        copy.parent.mkdir()
        copy.write_bytes(source.read_bytes())
        recording = load_recording(copy)
        recording.turns[0].decisions["p1"].policy_info["prompt"] = "kept"
        rewrite_recording(copy, recording)
        assert copy.read_bytes().startswith(GZIP_MAGIC) == (source is compact)
        assert load_recording(copy).turns[0].decisions["p1"].policy_info["prompt"] == "kept"


def test_a_gzip_bomb_or_a_cut_file_is_refused_in_one_line():
    bomb = gzip.compress(b"{" + b" " * (MAX_RECORDING_BYTES + 10) + b"}", mtime=0)
    assert len(bomb) < 100_000
    with pytest.raises(RecordingError, match="limited to 20 MB") as caught:
        parse_recording(bomb)
    assert "\n" not in str(caught.value)
    whole = compress_recording(json.dumps({"schema": "x"}).encode())
    for broken in (whole[:-6], whole + whole, whole[:10] + b"\0" * 20):
        with pytest.raises(RecordingError, match="gzip"):
            inflate(broken)
