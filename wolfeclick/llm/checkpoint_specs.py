"""Checkpoint specs: which weights a language-model policy plays with, and where they come from.

Grammar (``docs/llm.md`` has the long form)::

    preset:NAME[?OPTIONS]              run1 | run2 | run3 (the published WolfeClick adapters)
    llm:MODEL[?OPTIONS]                a full model, or an adapter whose config names its base
    llm:BASE+ADAPTER[?OPTIONS]         a base model plus a LoRA adapter

    MODEL, BASE, ADAPTER:  HUB_ID[@REVISION]  (owner/name, revision = branch, tag or commit)
                        |  /local/path  (./rel and ~/… too; no revision)
    OPTIONS:               key=value&key=value   (``CHECKPOINT_OPTIONS`` below; ``wolfeclick policies`` lists them)

Hub checkpoints are fetched with ``huggingface_hub.snapshot_download`` (so they land in the usual cache); the
revision is resolved to the commit sha of the snapshot, which goes into the recording. With ``HF_HUB_OFFLINE=1`` or
no network, a checkpoint already in the cache still loads. Anything that goes wrong here is a ``CheckpointError``
whose message is one line.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from wolfeclick.errors import WolfeClickError
from wolfeclick.policies.registry import Option

PRESET_REPO = "Atharva2099/openenv-smogon-rl"
PRESET_BASE = "Qwen/Qwen3-4B-Instruct-2507"
PRESET_FORMAT = "gen4randombattle"

HUB_PATTERNS = ["*.json", "*.safetensors", "*.txt", "*.jinja", "*.model", "*.tiktoken", "adapter_model.bin"]
"""What is fetched from a Hub repo: configs, safetensors weights, tokenizer files (not duplicate .bin/.pth/.gguf)."""

REFERENCE_SAMPLING = {"samples": 4, "max_new_tokens": 24, "temperature": 0.3, "top_p": 0.95, "top_k": 20}
"""The reference harness's sampling in generate mode (k samples of up to 24 new tokens)."""

CHECKPOINT_OPTIONS: tuple[Option, ...] = (
    Option("mode", str, "score", "score every legal action, or generate (sample like the reference)",
           ("score", "generate")),
    Option("quant", str, None, "weights: auto (nf4 on CUDA, none on CPU; the default), none, nf4 or int8",
           ("auto", "none", "nf4", "int8")),
    Option("profile", str, None, "prompt profile (default: the checkpoint's own, else arena-v1)"),
    Option("temperature", float, 0.0, "score mode: 0 plays the best-scored action, >0 draws from softmax(score/T)",
           visitor_range=(0.0, 5.0)),
    Option("device", str, None, "cuda, cuda:1, cpu… (default: cuda when there is one)"),
    Option("norm", str, "sum", "score mode: an answer's log-probability summed or averaged over its tokens",
           ("sum", "mean")),
    Option("samples", int, REFERENCE_SAMPLING["samples"], "generate mode: completions sampled per decision",
           visitor_range=(1, 8)),
    Option("max_new_tokens", int, REFERENCE_SAMPLING["max_new_tokens"], "generate mode: tokens per completion",
           visitor_range=(1, 64)),
    Option("gen_temperature", float, REFERENCE_SAMPLING["temperature"], "generate mode: sampling temperature",
           visitor_range=(0.0, 2.0)),
    Option("top_p", float, REFERENCE_SAMPLING["top_p"], "generate mode: nucleus sampling", visitor_range=(0.0, 1.0)),
    Option("top_k", int, REFERENCE_SAMPLING["top_k"], "generate mode: top-k sampling", visitor_range=(1, 100)),
    Option("parser", str, "tolerant", "generate mode: tolerant, or reference (exactly what the reference harness "
           "accepted)", ("tolerant", "reference")),
)
"""The options every checkpoint spec takes (``llm:…?mode=generate``; the CLI's ``--mode``…), typed: the registry
lists them, and ``make_llm_policy`` refuses any other."""

OPTION_KEYS = {option.name for option in CHECKPOINT_OPTIONS}
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


class CheckpointError(WolfeClickError, ValueError):
    """A checkpoint that cannot be named, found or loaded. ``str()`` is always a single line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


@dataclass(frozen=True)
class Preset:
    name: str
    adapter_repo: str
    adapter_revision: str
    base: str
    profile: str
    format: str
    note: str


PRESETS: dict[str, Preset] = {
    f"run{n}": Preset(
        name=f"run{n}", adapter_repo=PRESET_REPO, adapter_revision=f"grpo-qwen3-4b-run{n}", base=PRESET_BASE,
        profile="wolfeclick-v1", format=PRESET_FORMAT,
        note=f"WolfeClick GRPO LoRA run {n} (r=32, all seven projections) on {PRESET_BASE}",
    )
    for n in (1, 2, 3)
}


def preset_names() -> list[str]:
    return sorted(PRESETS)


def preset_naming(text: str | None) -> str | None:
    """``preset:runN`` when ``text`` (a model name someone logged) names a published adapter's revision, else None."""
    for name, preset in PRESETS.items():
        if text and preset.adapter_revision in text:
            return f"preset:{name}"
    return None


def preset_choices() -> list[tuple[str, str]]:
    """The presets as concrete specs for choosers: ``("preset:run1", "WolfeClick GRPO run 1")``."""
    return [(f"preset:{name}", f"WolfeClick GRPO run {name.removeprefix('run')} (Qwen3-4B + LoRA)")
            for name in preset_names()]


@dataclass(frozen=True)
class ModelRef:
    """One model or adapter: a Hub repo id (with an optional revision) or a local folder."""

    source: str
    revision: str | None = None
    local: bool = False

    def label(self) -> str:
        if self.local:
            return self.source
        return f"{self.source}@{self.revision}" if self.revision else self.source


@dataclass(frozen=True)
class CheckpointSpec:
    """A parsed spec. ``base`` is None when ``model`` may be an adapter whose config names the base."""

    spec: str
    model: ModelRef
    adapter: ModelRef | None = None
    preset: Preset | None = None
    options: dict[str, str] = field(default_factory=dict)


def is_llm_spec(spec: str) -> bool:
    """True for the specs this package handles: ``llm:…`` and ``preset:…``."""
    return isinstance(spec, str) and spec.strip().startswith(("llm:", "preset:"))


def _looks_local(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~")) or text in (".", "..") or os.path.isdir(os.path.expanduser(text))


def parse_ref(text: str, spec: str) -> ModelRef:
    """``owner/name@rev`` → Hub ref; ``/path`` (or an existing folder) → local ref."""
    text = text.strip()
    if not text:
        raise CheckpointError(f"checkpoint spec {spec!r} names an empty model")
    if _looks_local(text):
        return ModelRef(str(Path(os.path.expanduser(text)).resolve()), None, local=True)
    repo, _, revision = text.partition("@")
    if not _HUB_ID.match(repo):
        raise CheckpointError(f"checkpoint spec {spec!r}: {repo!r} is neither a Hub repo id (owner/name) nor an "
                              "existing folder")
    if "@" in text and not revision:
        raise CheckpointError(f"checkpoint spec {spec!r}: empty revision after '@'")
    return ModelRef(repo, revision or None, local=False)


def _split_options(body: str, spec: str) -> tuple[str, dict[str, str]]:
    if "?" not in body:
        return body, {}
    body, _, query = body.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=False))
    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise CheckpointError(f"checkpoint spec {spec!r}: unknown option(s) {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(OPTION_KEYS))}")
    return body, options


def parse_spec(spec: str) -> CheckpointSpec:
    """Parse a ``preset:`` or ``llm:`` spec (no file or network access beyond checking whether a path exists)."""
    if not is_llm_spec(spec):
        raise CheckpointError(f"not a checkpoint spec: {spec!r} (expected llm:… or preset:…)")
    spec = spec.strip()
    kind, _, body = spec.partition(":")
    body, options = _split_options(body, spec)
    if kind == "preset":
        name = body.strip()
        name = {f"grpo-qwen3-4b-run{n}": f"run{n}" for n in (1, 2, 3)}.get(name, name)
        preset = PRESETS.get(name)
        if preset is None:
            raise CheckpointError(f"unknown preset {body!r}; presets: {', '.join(preset_names())}")
        return CheckpointSpec(spec, ModelRef(preset.base), ModelRef(preset.adapter_repo, preset.adapter_revision),
                              preset, options)
    # A local path may itself contain '+'; only split when the whole body is not an existing folder.
    if "+" in body and not os.path.isdir(os.path.expanduser(body.strip())):
        base_text, _, adapter_text = body.partition("+")
        return CheckpointSpec(spec, parse_ref(base_text, spec), parse_ref(adapter_text, spec), None, options)
    return CheckpointSpec(spec, parse_ref(body, spec), None, None, options)


# ---------------------------------------------------------------------------------------------------- resolving


@dataclass(frozen=True)
class ResolvedModel:
    """A model or adapter on local disk, with where it came from."""

    ref: ModelRef
    path: Path
    sha: str | None
    """The commit sha of the Hub snapshot; None for a local folder."""

    def describe(self) -> dict[str, Any]:
        if self.ref.local:
            return {"path": str(self.path)}
        return {"repo": self.ref.source, "revision": self.ref.revision or "main", "sha": self.sha}


@dataclass(frozen=True)
class ResolvedCheckpoint:
    spec: CheckpointSpec
    base: ResolvedModel
    adapter: ResolvedModel | None

    def label(self) -> str:
        text = self.base.ref.label()
        return f"{text}+{self.adapter.ref.label()}" if self.adapter else text


def _hub_error(ref: ModelRef, exc: BaseException) -> CheckpointError:
    from huggingface_hub import errors

    what = f"checkpoint {ref.label()!r}"
    if isinstance(exc, errors.GatedRepoError):
        return CheckpointError(f"{what} is gated on the Hub: accept its terms and set HF_TOKEN")
    if isinstance(exc, errors.RevisionNotFoundError):
        return CheckpointError(f"{what}: revision {ref.revision!r} not found in {ref.source}")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return CheckpointError(f"{what}: no such model on the Hub (or it is private: set HF_TOKEN)")
    if isinstance(exc, (errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled)) or "offline" in str(exc).lower():
        return CheckpointError(f"{what} is not in the local Hugging Face cache and the Hub cannot be reached "
                               "(offline or no network); fetch it once with network access")
    if isinstance(exc, errors.HFValidationError):
        return CheckpointError(f"{what} is not a valid Hub repo id")
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    return CheckpointError(f"{what} could not be fetched: {first}")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def local_folder(ref: ModelRef) -> Path:
    """A local ref's folder, once it is there and holds a model or adapter config (two stats: cheap enough to run
    when a tournament is configured, long before anything loads)."""
    path = Path(ref.source)
    if not path.is_dir():
        raise CheckpointError(f"checkpoint folder {ref.source!r} does not exist")
    if not ((path / "config.json").is_file() or (path / "adapter_config.json").is_file()):
        raise CheckpointError(f"checkpoint folder {ref.source!r} has neither config.json nor adapter_config.json")
    return path


def resolve_ref(ref: ModelRef) -> ResolvedModel:
    """Bring a ref onto local disk: a local folder is checked; a Hub repo is fetched (or found in the cache)."""
    if ref.local:
        return ResolvedModel(ref, local_folder(ref), None)
    try:
        from huggingface_hub import snapshot_download

        folder = snapshot_download(
            ref.source, revision=ref.revision, allow_patterns=HUB_PATTERNS, local_files_only=_offline(),
            cache_dir=os.environ.get("HF_HUB_CACHE") or None,
        )
    except Exception as exc:  # every Hub failure becomes one line
        raise _hub_error(ref, exc) from exc
    path = Path(folder)
    if not ((path / "config.json").is_file() or (path / "adapter_config.json").is_file()):
        raise CheckpointError(f"checkpoint {ref.label()!r} has neither config.json nor adapter_config.json")
    return ResolvedModel(ref, path, path.name)


def is_adapter(path: Path) -> bool:
    return (path / "adapter_config.json").is_file()


def adapter_base(path: Path) -> ModelRef | None:
    """The base model an adapter's config names (``base_model_name_or_path`` + ``revision``), if any."""
    try:
        config = json.loads((path / "adapter_config.json").read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"adapter {str(path)!r} has an unreadable adapter_config.json: {exc}") from exc
    name = config.get("base_model_name_or_path")
    if not name:
        return None
    if _looks_local(name):
        return ModelRef(str(Path(os.path.expanduser(name)).resolve()), None, local=True)
    if not _HUB_ID.match(name):
        return None
    return ModelRef(name, config.get("revision") or None, local=False)


def resolve_checkpoint(spec: CheckpointSpec) -> ResolvedCheckpoint:
    """Fetch (or find) base and adapter; an ``llm:MODEL`` that is an adapter brings in the base its config names."""
    if spec.adapter is not None:
        base = resolve_ref(spec.model)
        if is_adapter(base.path):
            raise CheckpointError(f"checkpoint spec {spec.spec!r}: {spec.model.label()!r} is an adapter, "
                                  "not a base model")
        adapter = resolve_ref(spec.adapter)
        if not is_adapter(adapter.path):
            raise CheckpointError(f"checkpoint spec {spec.spec!r}: {spec.adapter.label()!r} has no adapter_config.json")
        return ResolvedCheckpoint(spec, base, adapter)
    model = resolve_ref(spec.model)
    if not is_adapter(model.path):
        return ResolvedCheckpoint(spec, model, None)
    base_ref = adapter_base(model.path)
    if base_ref is None:
        raise CheckpointError(f"adapter {spec.model.label()!r} does not name its base model; name it: "
                              f"llm:BASE+{spec.model.label()}")
    return ResolvedCheckpoint(spec, resolve_ref(base_ref), model)
