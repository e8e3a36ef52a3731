"""Loading checkpoints: device and quantisation choice, and a process-wide cache that shares base weights.

- On CUDA the default is 4-bit nf4 through bitsandbytes (bf16 compute); ``quant`` may be ``none``, ``nf4`` or
  ``int8``. Without CUDA the default is unquantised float32 weights, with a notice that a 4B model is very slow on
  CPU (bitsandbytes 0.50 also runs nf4 on CPU when asked for explicitly).
- Checkpoints on the same base (same folder, device and quantisation) share one copy of the base weights: each
  LoRA adapter is loaded into the same peft model under its own name, and a batch may mix adapters (peft's
  ``adapter_names``), so run1 vs run3 costs one base and one forward pass per batch.
- ``MODEL_CACHE`` keeps loaded bases across UI sessions and battles: bounded (least recently used bases and
  adapters are dropped first) and thread-safe (a base is loaded once even when asked for from many threads). It is
  made at first use (``model_cache()``), its bounds from the settings then (``$WOLFECLICK_LLM_MAX_MODELS``,
  ``$WOLFECLICK_LLM_MAX_ADAPTERS``), not at import; a ``ModelCache`` of one's own can be passed wherever a cache is.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

logging.getLogger("bitsandbytes").setLevel(logging.ERROR)  # before anything imports it (peft does)

from wolfeclick.llm.checkpoint_specs import CheckpointError, ResolvedCheckpoint, ResolvedModel  # noqa: E402
from wolfeclick.llm.names import BASE_ADAPTER  # noqa: E402
from wolfeclick.settings import Settings  # noqa: E402
from wolfeclick.settings import settings as current_settings  # noqa: E402

log = logging.getLogger("wolfeclick.llm")

QUANTS = ("none", "nf4", "int8")

_ADAPTER_IDS = itertools.count(1)

CPU_NOTICE_PARAMS = 1_000_000_000
"""Above this many parameters, loading on CPU prints the 'very slow' notice."""


def choose_device(device: str | None = None) -> str:
    """``cuda`` (first GPU) when available, else ``cpu``; an explicit choice is checked."""
    import torch

    if device in (None, "", "auto"):
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    device = str(device)
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise CheckpointError(f"device {device!r} asked for, but no CUDA device is available")
        return device if ":" in device else "cuda:0"
    if device != "cpu":
        raise CheckpointError(f"unknown device {device!r} (expected cpu, cuda or cuda:N)")
    return device


def choose_quant(quant: str | None, device: str) -> str:
    """nf4 on CUDA, none on CPU, unless asked otherwise."""
    if quant in (None, "", "auto"):
        return "nf4" if device.startswith("cuda") else "none"
    if quant not in QUANTS:
        raise CheckpointError(f"unknown quantisation {quant!r} (expected one of {', '.join(QUANTS)})")
    return quant


def compute_dtype(device: str):
    import torch

    return torch.bfloat16 if device.startswith("cuda") else torch.float32


def quantization_config(quant: str, device: str):
    """The ``BitsAndBytesConfig`` for ``quant`` (None for unquantised weights)."""
    if quant == "none":
        return None
    try:
        from transformers import BitsAndBytesConfig
    except ImportError as exc:  # pragma: no cover - pinned in requirements
        raise CheckpointError(f"quantisation {quant} needs bitsandbytes: {exc}") from exc
    if quant == "nf4":
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                  bnb_4bit_compute_dtype=compute_dtype(device), bnb_4bit_use_double_quant=False)
    return BitsAndBytesConfig(load_in_8bit=True)


def _load_error(what: str, exc: BaseException) -> CheckpointError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    return CheckpointError(f"could not load {what}: {exc.__class__.__name__}: {first}")


@dataclass
class BaseEntry:
    """One loaded base model (and tokenizer) with the adapters loaded into it."""

    key: tuple[str, str, str]
    base: ResolvedModel
    model: Any
    tokenizer: Any
    device: str
    quant: str
    dtype: str
    parameters: int
    adapters: "OrderedDict[str, str]" = field(default_factory=OrderedDict)
    """adapter folder → adapter name in the peft model, least recently used first."""
    lock: threading.RLock = field(default_factory=threading.RLock)
    """Held while the model runs or while adapters are added or dropped."""
    tokenizer_lock: threading.Lock = field(default_factory=threading.Lock)
    """Held while the (Rust, not re-entrant) tokenizer runs."""
    notice: str | None = None
    max_adapters: int = 8
    """Adapters kept loaded on this base (set by the cache that loads it)."""
    _batcher: Any = None
    _batcher_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def is_peft(self) -> bool:
        return hasattr(self.model, "peft_config")

    def adapter_name(self, adapter: ResolvedModel | None, max_adapters: int | None = None) -> str:
        """Load ``adapter`` into this base if needed; return its name (``__base__`` for none). At most
        ``max_adapters`` (default: the bound of the cache that loaded this base) stay loaded."""
        max_adapters = self.max_adapters if max_adapters is None else max_adapters
        if adapter is None:
            return BASE_ADAPTER
        key = str(adapter.path)
        with self.lock:
            if key in self.adapters:
                self.adapters.move_to_end(key)
                return self.adapters[key]
            name = f"adapter{next(_ADAPTER_IDS)}"
            while len(self.adapters) >= max_adapters:
                old_key, old_name = self.adapters.popitem(last=False)
                self.model.delete_adapter(old_name)
                log.info("dropped adapter %s from %s", old_key, self.base.ref.label())
            try:
                if self.is_peft:
                    self.model.load_adapter(str(adapter.path), adapter_name=name, is_trainable=False,
                                            autocast_adapter_dtype=False)
                else:
                    from peft import PeftModel

                    self.model = PeftModel.from_pretrained(self.model, str(adapter.path), adapter_name=name,
                                                           is_trainable=False, autocast_adapter_dtype=False)
                self.model.eval()
            except Exception as exc:
                raise _load_error(f"adapter {adapter.ref.label()!r} onto {self.base.ref.label()!r}", exc) from exc
            self.adapters[key] = name
            return name

    def batcher(self):
        """This base's request batcher (created on first use; never waits for a running forward pass)."""
        with self._batcher_lock:
            if self._batcher is None:
                from wolfeclick.llm.batcher import Batcher

                self._batcher = Batcher(self)
            return self._batcher


def load_tokenizer(base: ResolvedModel) -> Any:
    """The base's tokenizer, padded with its end token when it has no pad token (as every loaded base is)."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(base.path))
    except Exception as exc:
        raise _load_error(f"the tokenizer of {base.ref.label()!r}", exc) from exc
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def _load_base(base: ResolvedModel, device: str, quant: str) -> BaseEntry:
    from transformers import AutoModelForCausalLM

    label = base.ref.label()
    tokenizer = load_tokenizer(base)
    kwargs: dict[str, Any] = {"dtype": compute_dtype(device), "device_map": {"": device}}
    config = quantization_config(quant, device)
    if config is not None:
        kwargs["quantization_config"] = config
    try:
        model = AutoModelForCausalLM.from_pretrained(str(base.path), **kwargs)
    except Exception as exc:
        raise _load_error(f"model {label!r} ({quant} on {device})", exc) from exc
    model.eval()
    if getattr(model, "config", None) is not None:
        model.config.use_cache = True
    parameters = sum(p.numel() for p in model.parameters())
    if quant != "none":
        parameters *= 2 if quant == "nf4" else 1  # 4-bit weights are packed two to a byte
    notice = None
    if device == "cpu" and quant != "none" and parameters >= CPU_NOTICE_PARAMS:
        notice = f"{label} runs {quant} on CPU (bitsandbytes CPU kernels): very slow for a model this size"
        log.warning("notice: %s", notice)
    if device == "cpu" and quant == "none":
        size = f"{parameters / 1e9:.1f}B" if parameters >= 1e8 else f"{parameters / 1e6:.1f}M"
        notice = (f"no CUDA device: {label} runs unquantised on CPU ({size} parameters)"
                  + ("; a 4B model on CPU is very slow (many seconds per decision)"
                     if parameters >= CPU_NOTICE_PARAMS else ""))
        log.warning("notice: %s", notice)
    return BaseEntry(key=(str(base.path), device, quant), base=base, model=model, tokenizer=tokenizer, device=device,
                     quant=quant, dtype=str(kwargs["dtype"]).replace("torch.", ""), parameters=parameters,
                     notice=notice)


@dataclass
class ModelHandle:
    """What a policy holds: a base entry and the adapter name to run under (``__base__`` for none)."""

    entry: BaseEntry
    adapter: str
    checkpoint: ResolvedCheckpoint

    @property
    def tokenizer(self):
        return self.entry.tokenizer


class ModelCache:
    """Loaded bases, least recently used dropped first beyond ``max_bases``; safe to use from many threads."""

    def __init__(self, max_bases: int | None = None, max_adapters: int | None = None,
                 settings: Settings | None = None) -> None:
        """Bounds not given come from ``settings`` (default: the environment now)."""
        if max_bases is None or max_adapters is None:
            settings = settings or current_settings()
        self.max_bases = max_bases if max_bases is not None else settings.llm_max_models  # type: ignore[union-attr]
        self.max_adapters = max_adapters if max_adapters is not None else settings.llm_max_adapters  # type: ignore[union-attr]
        self._entries: "OrderedDict[tuple[str, str, str], BaseEntry]" = OrderedDict()
        self._loading: dict[tuple[str, str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def entries(self) -> list[BaseEntry]:
        with self._lock:
            return list(self._entries.values())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def base(self, base: ResolvedModel, device: str, quant: str) -> BaseEntry:
        key = (str(base.path), device, quant)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:  # one thread loads; the others wait here and then find it
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None:
                    return entry
            entry = _load_base(base, device, quant)
            entry.max_adapters = self.max_adapters
            with self._lock:
                self._entries[key] = entry
                self._loading.pop(key, None)
                while len(self._entries) > self.max_bases:
                    old_key, old = self._entries.popitem(last=False)
                    log.info("model cache: dropped %s (%s, %s)", old.base.ref.label(), old.device, old.quant)
            return entry

    def get(self, checkpoint: ResolvedCheckpoint, *, device: str | None = None,
            quant: str | None = None) -> ModelHandle:
        """Load (or reuse) the checkpoint's base and adapter; returns the handle a policy keeps."""
        device = choose_device(device)
        quant = choose_quant(quant, device)
        entry = self.base(checkpoint.base, device, quant)
        name = entry.adapter_name(checkpoint.adapter, self.max_adapters)
        return ModelHandle(entry, name, checkpoint)


_SHARED: list[ModelCache] = []
_SHARED_LOCK = threading.Lock()


def model_cache() -> ModelCache:
    """This process's shared cache (``MODEL_CACHE``), made at the first call with the settings of that moment."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(ModelCache())
        return _SHARED[0]


def __getattr__(name: str) -> Any:
    """``MODEL_CACHE`` is ``model_cache()``: read on first use, not at import."""
    if name == "MODEL_CACHE":
        return model_cache()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
