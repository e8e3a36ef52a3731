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
from wolfeclick.battle.specs import PolicySpecError, make_policy, needs_gpu, spec_help
from wolfeclick.battle.store import RecordingSaver
from wolfeclick.battle.stream import Stream
from wolfeclick.digits import ascii_int
from wolfeclick.errors import WolfeClickError
from wolfeclick.policies.base import Policy
from wolfeclick.policies.human import HUMAN_SPEC, Answered, HumanPolicy, HumanSeat, Prompt
from wolfeclick.policies.registry import PolicyRegistry, default_registry
from wolfeclick.settings import settings
from wolfeclick.sides import SIDES
from wolfeclick.sim.protocol import door_names
from wolfeclick.ui.view import BattleMeta, BattleView

__all__ = [
    "policy_choices", "builds_once", "FORMATS", "CUSTOM", "LiveError", "LiveEvent", "PolicyCache",
    "HardwareProbe", "hardware_report", "parse_seed", "check_format", "resolve_spec", "run_live", "HUMAN",
    "SeatRegistry", "prompt_markdown", "human_sides",
]

CUSTOM = "custom"
HUMAN = HUMAN_SPEC
YOU = "You"
"""How the page names the side its own person plays (header, panels, narration, result)."""
HUMAN_CHOICE = ("You — play this side yourself (buttons)", HUMAN)
"""The choice (and recorded policy spec) for a side a person plays with the buttons."""


def policy_choices(registry: PolicyRegistry | None = None, *, opponent: bool = False) -> list[tuple[str, str]]:
    """The dropdown of a side, from the policy registry: every listed spec (baselines, presets, installed agents),
    then a person, then a custom spec. The agent's side leads with the strongest baseline, the opponent's with the
    weakest."""
    listed = (registry or default_registry()).choices()
    cheap = [(f"{spec} — {label}", spec) for spec, label, kind in listed if not kind.gpu and not kind.external]
    models = [(f"{spec} — {label}", spec) for spec, label, kind in listed if kind.gpu and not kind.external]
    installed = [(f"{spec} — {label} (installed agent)", spec) for spec, label, kind in listed if kind.external]
    custom = ("another checkpoint (custom spec)…" if opponent else "custom spec…", CUSTOM)
    return [*(cheap if opponent else cheap[::-1]), *models, *installed, HUMAN_CHOICE, custom]


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
        value = int(text) if isinstance(text, (int, float)) else ascii_int(str(text).strip(), 19)
        if value is None:
            raise ValueError
    except (ValueError, OverflowError):
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
        raise LiveError(f"enter a policy spec ({spec_help()})")
    if len(spec) > 300 or "\n" in spec:
        raise LiveError("policy spec is too long")
    return spec


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return text[:300]


# --------------------------------------------------------------------------------------------------------------
# Checkpoints, shared
# --------------------------------------------------------------------------------------------------------------
def builds_once(spec: str) -> bool:
    """Kinds that need a GPU (checkpoints) are built once and shared; an unknown spec is one line for the page."""
    try:
        return needs_gpu(spec)
    except PolicySpecError as exc:
        raise LiveError(one_line(exc)) from None


class PolicyCache:
    """Checkpoint policies by (spec, mode), built once even when many sessions ask at the same time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._policies: dict[tuple[str, str], Policy] = {}
        self._building: dict[tuple[str, str], threading.Lock] = {}

    def loaded(self, spec: str, mode: str) -> bool:
        return (spec, mode) in self._policies

    def build(self, spec: str, mode: str = "score") -> Policy:
        """Blocking: the policy for ``spec`` (cheap kinds are made fresh; checkpoints come from the cache)."""
        if not builds_once(spec):
            try:
                return make_policy(spec)
            except WolfeClickError as exc:  # a bad spec, or a third-party factory's own one-line refusal
                raise LiveError(one_line(exc)) from None
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
# People playing ("You")
# --------------------------------------------------------------------------------------------------------------
def human_sides(specs: dict[str, str]) -> list[str]:
    """The sides a person plays; one at most (a second person plays from their own session)."""
    sides = [side for side in SIDES if specs.get(side) == HUMAN]
    if len(sides) > 1:
        raise LiveError("you can play one side; choose a policy for the other (a friend plays from their own page)")
    return sides


class SeatRegistry:
    """The human seat of each browser session's live battle: a button click answers its own session's seat only."""

    def __init__(self) -> None:
        self._seats: dict[str, HumanSeat] = {}

    @staticmethod
    def session(request: Any) -> str:
        return getattr(request, "session_hash", None) or "anonymous"

    def open(self, request: Any, seat: HumanSeat) -> None:
        previous = self._seats.get(self.session(request))
        if previous is not None and previous is not seat:
            previous.close("a new battle was started in this session")
        self._seats[self.session(request)] = seat

    def get(self, request: Any) -> HumanSeat | None:
        return self._seats.get(self.session(request))

    def release(self, request: Any, seat: HumanSeat) -> None:
        seat.close()
        if self._seats.get(self.session(request)) is seat:
            del self._seats[self.session(request)]

    def __len__(self) -> int:
        return len(self._seats)


def _md(text: str) -> str:
    """Plain text safe inside Markdown (names come from policy specs and the simulator)."""
    return "".join("\\" + c if c in "\\`*_{}[]<>()#+-.!|~" else c for c in str(text))


def prompt_markdown(prompt: Prompt, names: dict[str, str]) -> str:
    """Pure: what the person reads above the buttons: whose turn, both actives, what just happened, the timer."""
    from wolfeclick.ui.narrate import narrate

    number = prompt.key.rsplit("-", 1)[-1]
    lines = [f"### Your move ({prompt.side}, turn {prompt.turn} · choice #{number})",
             f"**You:** {_md(prompt.you)} · **Opponent:** {_md(prompt.foe)}"]
    said = [s.text for s in narrate(list(prompt.lines), names) if s.kind != "turn"]
    if said:
        lines.append("**Since your last decision:** " + " ".join(_md(t) for t in said[-12:]))
    if prompt.rejected:
        lines.append(f"⚠ The simulator refused {_md(', '.join(prompt.rejected))}: choose again.")
    if prompt.timer_s is not None:
        lines.append(f"⏱ You have {prompt.timer_s:g} s; then a seeded fallback plays for you (flagged in the "
                     "recording).")
    else:
        lines.append("The battle waits for your click.")
    return "\n\n".join(lines)


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
    """What the page should show next. ``kind``: loading | turn | prompt | answered | done | error."""

    kind: str
    message: str
    view: BattleView | None = None
    turn: TurnRecord | None = None
    recording: Recording | None = None
    prompt: Prompt | None = None
    """``prompt``: the decision waiting for the person (its buttons); ``answered``: it is gone."""


async def _with_prompts(battle: AsyncIterator[Any], seats: list[HumanSeat],
                        stop: asyncio.Event) -> AsyncIterator[Any]:
    """The battle's items and the seats' prompts, in the order they happen.

    The battle is iterated in a task of its own (it waits on the person while the page must hear of the prompt);
    stopping releases a waiting decision. Leaving (the end, an error, the page going away) closes the seats and
    the battle task, which closes its simulator.
    """
    stream: Stream[Any] = Stream()
    for seat in seats:
        seat.notify = stream.put

    async def pump() -> None:
        async for item in battle:
            stream.put(item)

    async def watch_stop() -> None:
        await stop.wait()
        for seat in seats:
            seat.close("stopped by the user")

    stream.spawn(pump())
    stream.spawn(watch_stop(), feeds=False)
    try:
        async for item in stream:
            yield item
    finally:
        for seat in seats:
            seat.close()
        await stream.aclose()


async def _build(spec: str, mode: str, cache: PolicyCache, stop: asyncio.Event | None) -> AsyncIterator[Any]:
    """Yield loading messages every second while the policy builds; the last item is the policy."""
    if not builds_once(spec):
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
    seats: dict[str, HumanSeat] | None = None,
) -> AsyncIterator[LiveEvent]:
    """Play one battle, yielding an event per finished turn record.

    ``takeover`` (a recording and a decision index) plays on from that decision of a recorded battle instead of a
    fresh one (``branch.stream_branch``: its format and seed, its choices replayed up to there, unpaced; saved with
    ``source=branch``). ``seats`` hold the person of each side whose spec is ``human``: their prompts come as
    ``prompt``/``answered`` events, and such a battle is not paced (the person is). With a ``saver`` the recording
    is saved as it goes (every few turns, marked as interrupted until it ends) and finally whole, always under
    the one id the saver chose for this run (``LiveEvent.recording.id``).
    """
    stop = stop or asyncio.Event()
    seats = dict(seats or {})
    policies: list[Policy] = []
    try:
        for side, spec in (("p1", p1_spec), ("p2", p2_spec)):
            if spec == HUMAN:
                if side not in seats:
                    raise LiveError(f"{side} is played by a person, but this run has no seat for them")
                policies.append(HumanPolicy(seats[side]))
                continue
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
        names = door_names({side: parent.players[side].name for side in SIDES})  # as the simulator has them
        battle_id = branch_id(parent, replayed, {"p1": p1.spec, "p2": p2.spec})
        stream = stream_branch(parent, replayed, {"p1": p1, "p2": p2}, stop=stop, checkpoint=checkpoint)
    meta = BattleMeta(id=battle_id, format=format_id, seed=seed, names=names,
                      policies={"p1": p1.spec, "p2": p2.spec})
    view = BattleView(meta)
    view.rename({side: YOU for side, policy in (("p1", p1), ("p2", p2)) if policy.spec == HUMAN})
    yield LiveEvent("loading", "Starting the simulator…", view)
    playing = [seats[side] for side, spec in (("p1", p1.spec), ("p2", p2.spec)) if spec == HUMAN]
    if playing:
        stream = _with_prompts(stream, playing, stop)
        pace = 0.0

    recording: Recording | None = None
    try:
        async for item in stream:
            if isinstance(item, Recording):
                recording = item
                break
            if isinstance(item, Prompt):
                yield LiveEvent("prompt", f"Turn {item.turn}: your move", view, prompt=item)
                continue
            if isinstance(item, Answered):
                yield LiveEvent("answered", item.note, view)
                continue
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
    finally:
        if playing:  # the seats and the battle task end here, whether the battle ended or the page left
            await stream.aclose()  # type: ignore[attr-defined]
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
        return settings().live_pace
    except WolfeClickError:  # a bad $WOLFECLICK_LIVE_PACE: the default, as before
        return 0.4
