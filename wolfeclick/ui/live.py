"""Live battles for the app: choosing policies, loading checkpoints (shared), and streaming a battle. No Gradio.

Each live battle runs ``runner.stream_battle`` with its own simulator process (the runner's default), so two
sessions' battles never wait on each other; baseline policies decide in microseconds on the event loop, and
checkpoints decide in a worker thread (``policy.blocking``). Checkpoints are built once per (spec, mode) and shared
by every session through the app context's ``PolicyCache``; their weights are shared further down by
``wolfeclick.llm``'s model cache. A battle run is saved through one ``RecordingSaver``: its first save picks an
id no other battle holds, every later save (checkpoints, the final one) reuses it.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator

from wolfeclick.battle.runner import DEFAULT_FORMAT, DEFAULT_MAX_TURNS, player_names, recording_id
from wolfeclick.battle.schema import Recording, TurnRecord
from wolfeclick.battle.specs import SPEC_HELP, PolicySpecError, is_baseline, make_policy
from wolfeclick.battle.store import RecordingSaver
from wolfeclick.errors import WolfeClickError
from wolfeclick.policies.base import Policy
from wolfeclick.ui.view import BattleMeta, BattleView

__all__ = [
    "AGENT_CHOICES", "OPPONENT_CHOICES", "FORMATS", "CUSTOM", "LiveError", "LiveEvent", "PolicyCache",
    "HardwareProbe", "hardware_report", "parse_seed", "check_format", "resolve_spec", "run_live",
]

CUSTOM = "custom"
PRESETS = [("preset:run1", "WolfeClick GRPO run 1"), ("preset:run2", "WolfeClick GRPO run 2"),
           ("preset:run3", "WolfeClick GRPO run 3")]
BASELINE_LABELS = [("heuristic", "heuristic baseline"), ("maxdamage", "max-damage baseline"),
                   ("random", "random baseline")]
AGENT_CHOICES = ([(f"{spec} — {label}", spec) for spec, label in BASELINE_LABELS]
                 + [(f"{spec} — {label} (Qwen3-4B + LoRA)", spec) for spec, label in PRESETS]
                 + [("custom spec…", CUSTOM)])
OPPONENT_CHOICES = ([(f"{spec} — {label}", spec) for spec, label in reversed(BASELINE_LABELS)]
                    + [(f"{spec} — {label} (checkpoint)", spec) for spec, label in PRESETS]
                    + [("another checkpoint (custom spec)…", CUSTOM)])
FORMATS = [DEFAULT_FORMAT] + [f"gen{n}randombattle" for n in (9, 8, 7, 6, 5, 3, 2, 1)]
_FORMAT_RE = re.compile(r"^gen[1-9][a-z0-9]{2,60}$")
MAX_SEED = 2**31 - 1


class LiveError(WolfeClickError, ValueError):
    """A choice the live tab cannot start with; the message is one line fit for the page."""


def parse_seed(text: str | int | float | None) -> int:
    """Blank → a fresh random seed; otherwise a non-negative integer below 2**31."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return random.SystemRandom().randrange(MAX_SEED)
    try:
        value = int(str(text).strip()) if not isinstance(text, (int, float)) else int(text)
    except ValueError:
        raise LiveError(f"seed must be a whole number (or blank for a random one), not {str(text)[:40]!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise LiveError(f"seed must be between 0 and {MAX_SEED}")
    return value


def check_format(text: str | None) -> str:
    value = (text or DEFAULT_FORMAT).strip().lower()
    if not _FORMAT_RE.match(value):
        raise LiveError(f"format must look like gen4randombattle, not {str(text)[:40]!r}")
    return value


def resolve_spec(choice: str | None, custom: str | None) -> str:
    """The policy spec a dropdown choice (plus the custom-spec box) names."""
    spec = (custom if choice == CUSTOM else choice) or ""
    spec = spec.strip()
    if not spec:
        raise LiveError(f"enter a policy spec ({SPEC_HELP})")
    if len(spec) > 300 or "\n" in spec:
        raise LiveError("policy spec is too long")
    return spec


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return text[:300]


# --------------------------------------------------------------------------------------------------------------
# Checkpoints, shared
# --------------------------------------------------------------------------------------------------------------
class PolicyCache:
    """Checkpoint policies by (spec, mode), built once even when many sessions ask at the same time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._policies: dict[tuple[str, str], Policy] = {}
        self._building: dict[tuple[str, str], threading.Lock] = {}

    def loaded(self, spec: str, mode: str) -> bool:
        return (spec, mode) in self._policies

    def build(self, spec: str, mode: str = "score") -> Policy:
        """Blocking: the policy for ``spec`` (baselines are made fresh; checkpoints come from the cache)."""
        if is_baseline(spec):
            return make_policy(spec)
        key = (spec, mode)
        with self._lock:
            if key in self._policies:
                return self._policies[key]
            building = self._building.setdefault(key, threading.Lock())
        with building:
            with self._lock:
                if key in self._policies:
                    return self._policies[key]
            try:
                policy = make_policy(spec, mode=mode)
            except PolicySpecError as exc:
                raise LiveError(one_line(exc)) from None
            except ImportError as exc:
                raise LiveError(f"checkpoint support is not available in this install ({one_line(exc)})") from None
            except (WolfeClickError, OSError) as exc:  # CheckpointError, offline Hub, unreadable files
                raise LiveError(f"could not load {spec}: {one_line(exc)}") from None
            with self._lock:
                self._policies[key] = policy
            return policy


# --------------------------------------------------------------------------------------------------------------
# Hardware
# --------------------------------------------------------------------------------------------------------------
_PROBE = """
import json
info = {"torch": None, "cuda": False}
try:
    import torch
    info["torch"] = torch.__version__
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info.update(cuda=True, gpu=p.name, gpu_gb=p.total_memory / 2**30, gpus=torch.cuda.device_count())
except Exception as exc:
    info["error"] = " ".join(str(exc).split())[:200] or exc.__class__.__name__
print(json.dumps(info))
"""


class HardwareProbe:
    """CUDA availability and memory, asked once per app (the context holds one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._info: dict[str, Any] = {}

    def __call__(self) -> dict[str, Any]:
        with self._lock:
            if not self._info:
                self._info.update(probe_hardware())
            return dict(self._info)


def probe_hardware() -> dict[str, Any]:
    """CUDA availability and memory. Asked of a separate Python process, so importing torch (a second or
    two of CPU) never holds this server's interpreter lock; a process that already has torch is asked directly."""
    info: dict[str, Any] = {"torch": None, "cuda": False}
    try:
        import psutil

        ram = psutil.virtual_memory().total / 2**30
    except Exception:
        ram = None
    try:
        if "torch" in sys.modules:
            import torch

            info["torch"] = torch.__version__
            if torch.cuda.is_available():
                props = torch.cuda.get_device_properties(0)
                info.update(cuda=True, gpu=props.name, gpu_gb=props.total_memory / 2**30,
                            gpus=torch.cuda.device_count())
        else:
            out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
            info.update(json.loads(out.stdout.strip().splitlines()[-1]))
    except Exception as exc:
        info["error"] = one_line(exc)
    info["ram_gb"] = ram
    return info


def hardware_report(info: dict[str, Any] | None = None) -> str:
    """Markdown: is CUDA here, and what that means for a 4B checkpoint."""
    info = info if info is not None else probe_hardware()
    ram = f"{info['ram_gb']:.0f} GB RAM" if info.get("ram_gb") else "RAM unknown"
    if info.get("torch") is None:
        return (f"**No PyTorch** ({info.get('error', 'not installed')}): baselines only. {ram}.")
    if info.get("cuda"):
        gb = info.get("gpu_gb", 0.0)
        fits = ("a 4B checkpoint fits in 4-bit nf4 (about 3 GB) or bf16 (about 8 GB); expect well under a second "
                "per decision" if gb >= 10 else
                "a 4B checkpoint fits in 4-bit nf4 (about 3 GB) only" if gb >= 4 else
                "too little GPU memory for a 4B checkpoint; it would run on CPU")
        return f"**CUDA available**: {info.get('gpu')} ({gb:.0f} GB). {fits}. {ram}."
    return (f"**No CUDA** on this machine: baselines run at full speed, but a 4B checkpoint runs on CPU in float32 "
            f"(about 16 GB of RAM; this machine has {ram}), loads in minutes and takes many seconds per decision. "
            f"Use a GPU (see docs/app.md) for checkpoints.")


# --------------------------------------------------------------------------------------------------------------
# One live battle
# --------------------------------------------------------------------------------------------------------------
@dataclass
class LiveEvent:
    """What the page should show next. ``kind``: loading | turn | done | error."""

    kind: str
    message: str
    view: BattleView | None = None
    turn: TurnRecord | None = None
    recording: Recording | None = None


async def _build(spec: str, mode: str, cache: PolicyCache, stop: asyncio.Event | None) -> AsyncIterator[Any]:
    """Yield loading messages every second while the policy builds; the last item is the policy."""
    if is_baseline(spec):
        yield cache.build(spec, mode)
        return
    if cache.loaded(spec, mode):
        yield await asyncio.to_thread(cache.build, spec, mode)
        return
    started = time.monotonic()
    task = asyncio.ensure_future(asyncio.to_thread(cache.build, spec, mode))
    while not task.done():
        done, _ = await asyncio.wait({task}, timeout=1.0)
        if not done:
            if stop is not None and stop.is_set():
                raise LiveError("stopped while loading (the model keeps loading in the background)")
            yield f"Loading {spec} ({mode} mode)… {time.monotonic() - started:.0f} s"
    yield task.result()


async def run_live(
    p1_spec: str,
    p2_spec: str,
    *,
    cache: PolicyCache,
    saver: RecordingSaver | None = None,
    format_id: str = DEFAULT_FORMAT,
    seed: int = 0,
    mode: str = "score",
    pace: float = 0.0,
    max_turns: int = DEFAULT_MAX_TURNS,
    stop: asyncio.Event | None = None,
    takeover: tuple[Recording, int] | None = None,
) -> AsyncIterator[LiveEvent]:
    """Play one battle, yielding an event per finished turn record.

    ``takeover`` (a recording and a decision index) plays on from that decision of a recorded battle instead of a
    fresh one (``branch.stream_branch``: its format and seed, its choices replayed up to there, unpaced; saved with
    ``source=branch``). With a ``saver`` the recording is saved as it goes (every few turns, marked as interrupted until it ends) and
    finally whole, always under the one id the saver chose for this run (``LiveEvent.recording.id``).
    """
    stop = stop or asyncio.Event()
    policies: list[Policy] = []
    try:
        for spec in (p1_spec, p2_spec):
            async for item in _build(spec, mode, cache, stop):
                if isinstance(item, str):
                    yield LiveEvent("loading", item)
                else:
                    policies.append(item)
    except LiveError as exc:
        yield LiveEvent("error", str(exc))
        return
    p1, p2 = policies
    from wolfeclick.battle.branch import branch_id, stream_branch
    from wolfeclick.battle.runner import stream_battle

    async def checkpoint(partial: Recording) -> None:
        if saver is not None:  # what a crash would leave; the finished recording replaces it (same id)
            await asyncio.to_thread(saver.save, partial)

    replayed = 0
    if takeover is None:
        names = player_names(p1.spec, p2.spec)
        battle_id = recording_id(format_id, seed, p1.spec, p2.spec)
        stream = stream_battle(p1, p2, format_id=format_id, seed=seed, max_turns=max_turns, stop=stop,
                               checkpoint=checkpoint)
    else:
        parent, replayed = takeover
        format_id, seed = parent.format, parent.seed or 0
        names = {side: parent.players[side].name for side in ("p1", "p2")}
        battle_id = branch_id(parent, replayed, {"p1": p1.spec, "p2": p2.spec})
        stream = stream_branch(parent, replayed, {"p1": p1, "p2": p2}, stop=stop, checkpoint=checkpoint)
    meta = BattleMeta(id=battle_id, format=format_id, seed=seed, names=names,
                      policies={"p1": p1.spec, "p2": p2.spec})
    view = BattleView(meta)
    yield LiveEvent("loading", "Starting the simulator…", view)

    recording: Recording | None = None
    try:
        async for item in stream:
            if isinstance(item, Recording):
                recording = item
                break
            view.add(item)
            yield LiveEvent("turn", f"Turn {item.turn}", view, turn=item)
            if pace > 0 and not stop.is_set() and item.index >= replayed:
                try:
                    await asyncio.wait_for(stop.wait(), timeout=pace)
                except asyncio.TimeoutError:
                    pass
    except WolfeClickError as exc:  # a format the simulator does not know, a dead simulator…
        hint = "" if format_id in FORMATS else f" (is {format_id} a random-battle format this Showdown knows?)"
        yield LiveEvent("error", f"the battle could not go on: {one_line(exc)}{hint}", view)
        return
    if recording is None:
        yield LiveEvent("error", "the battle ended without a recording", view)
        return
    message = ""
    if saver is not None:
        try:
            await asyncio.to_thread(saver.save, recording)
            recording = recording.model_copy(update={"id": saver.id})
        except (OSError, WolfeClickError) as exc:
            message = f"the recording could not be saved: {one_line(exc)}"
    view.finish(recording)
    yield LiveEvent("done", message, view, recording=recording)


def default_pace() -> float:
    try:
        return max(0.0, float(os.environ.get("WOLFECLICK_LIVE_PACE", "0.4")))
    except ValueError:
        return 0.4
