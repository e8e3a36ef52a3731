"""Checkpoint specs: the grammar, presets, Hub resolution offline (warm cache → commit sha), one-line errors."""

from __future__ import annotations

import os

import pytest

from devkit.llm_fixtures import SHAS
from wolfeclick.llm.checkpoint_specs import (
    PRESET_REPO,
    PRESETS,
    CheckpointError,
    is_llm_spec,
    parse_spec,
    resolve_checkpoint,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")

def test_is_llm_spec() -> None:
    assert is_llm_spec("llm:/x") and is_llm_spec("preset:run3") and is_llm_spec(" llm:owner/name")
    assert not is_llm_spec("heuristic") and not is_llm_spec("random")
    assert not is_llm_spec(None)  # type: ignore[arg-type]


def test_presets() -> None:
    assert sorted(PRESETS) == ["run1", "run2", "run3"]
    for n in (1, 2, 3):
        spec = parse_spec(f"preset:run{n}")
        assert spec.model.source == "Qwen/Qwen3-4B-Instruct-2507" and spec.model.revision is None
        assert spec.adapter.source == "Atharva2099/openenv-smogon-rl"
        assert spec.adapter.revision == f"grpo-qwen3-4b-run{n}"
        assert spec.preset.profile == "wolfeclick-v1" and spec.preset.format == "gen4randombattle"
    assert parse_spec("preset:grpo-qwen3-4b-run2").preset.name == "run2"


def test_grammar(tmp_path) -> None:
    spec = parse_spec("llm:owner/model@v2+other/adapter@abc123?mode=generate&quant=nf4")
    assert (spec.model.source, spec.model.revision, spec.model.local) == ("owner/model", "v2", False)
    assert (spec.adapter.source, spec.adapter.revision) == ("other/adapter", "abc123")
    assert spec.options == {"mode": "generate", "quant": "nf4"}
    assert parse_spec("llm:owner/model").adapter is None
    local = parse_spec(f"llm:{tmp_path}")
    assert local.model.local and local.model.source == str(tmp_path.resolve())
    plus = tmp_path / "with+plus"
    plus.mkdir()
    assert parse_spec(f"llm:{plus}").model.source == str(plus)  # an existing folder is never split at '+'
    both = parse_spec(f"llm:{tmp_path}+./rel/adapter")
    assert both.model.local and both.adapter.local


@pytest.mark.parametrize("spec, words", [
    ("preset:run9", "unknown preset"),
    ("llm:not a repo", "neither a Hub repo id"),
    ("llm:owner/model@", "empty revision"),
    ("llm:owner/model?colour=blue", "unknown option"),
    ("heuristic", "not a checkpoint spec"),
])
def test_bad_specs_one_line(spec, words) -> None:
    with pytest.raises(CheckpointError) as info:
        parse_spec(spec)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_unknown_hub_checkpoint_offline_is_one_line(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(CheckpointError) as info:
        resolve_checkpoint(parse_spec("llm:nobody/no-such-model@v1"))
    message = str(info.value)
    assert "\n" not in message and "nobody/no-such-model@v1" in message and "cache" in message


def test_local_checkpoints(tiny_checkpoint, tmp_path) -> None:
    plain = resolve_checkpoint(parse_spec(f"llm:{tiny_checkpoint}"))
    assert plain.adapter is None and plain.base.sha is None and plain.base.path == tiny_checkpoint
    # an adapter whose config names its base brings the base along
    adapter = resolve_checkpoint(parse_spec(f"llm:{tiny_checkpoint}/adapters/a"))
    assert adapter.base.path == tiny_checkpoint and adapter.adapter.path == tiny_checkpoint / "adapters" / "a"
    # one whose config names none must be given its base
    with pytest.raises(CheckpointError, match="does not name its base"):
        resolve_checkpoint(parse_spec(f"llm:{tiny_checkpoint}/adapters/b"))
    both = resolve_checkpoint(parse_spec(f"llm:{tiny_checkpoint}+{tiny_checkpoint}/adapters/b"))
    assert both.adapter.describe() == {"path": str(tiny_checkpoint / "adapters" / "b")}
    with pytest.raises(CheckpointError, match="does not exist"):
        resolve_checkpoint(parse_spec(f"llm:{tmp_path}/missing"))
    with pytest.raises(CheckpointError, match="is an adapter, not a base"):
        resolve_checkpoint(parse_spec(f"llm:{tiny_checkpoint}/adapters/a+{tiny_checkpoint}/adapters/b"))


def test_preset_resolves_offline_from_warm_cache(hub_cache) -> None:
    resolved = resolve_checkpoint(parse_spec("preset:run3"))
    assert resolved.base.sha == SHAS["base"] and resolved.adapter.sha == SHAS["grpo-qwen3-4b-run3"]
    assert resolved.adapter.describe() == {"repo": PRESET_REPO, "revision": "grpo-qwen3-4b-run3",
                                           "sha": SHAS["grpo-qwen3-4b-run3"]}
    with pytest.raises(CheckpointError) as info:  # run2 is not in this cache
        resolve_checkpoint(parse_spec("preset:run2"))
    assert "grpo-qwen3-4b-run2" in str(info.value) and "\n" not in str(info.value)
