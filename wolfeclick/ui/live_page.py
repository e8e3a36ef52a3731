"""Live battles for the app: the dropdowns, a person's prompt, the hardware report and the page's view of a live
battle. No Gradio, and no battle logic: choosing and building policies and running the battle are
``wolfeclick.battle.live_battles``'s (``play_live``); ``run_live`` here adds the view the Live tab draws.
"""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import sys
import threading
from dataclasses import dataclass, fields, replace
from typing import Any, AsyncIterator

from wolfeclick.battle.live_battles import HUMAN, LiveEvent, play_live
from wolfeclick.errors import WolfeClickError, whole_on_one_line
from wolfeclick.extras import MissingExtra, require
from wolfeclick.policies.catalogue import ServedCatalogue, ServedPolicy
from wolfeclick.policies.human import Prompt
from wolfeclick.settings import settings
from wolfeclick.ui.battle_panels import BattleMeta, BattleView
from wolfeclick.ui.presentation import played_by

__all__ = ["policy_choices", "offered", "checkpoints_missing", "UNAVAILABLE",
           "LiveViewEvent", "HardwareProbe", "hardware_report", "run_live", "prompt_markdown",
           "default_pace", "YOU", "HUMAN_CHOICE"]

YOU = "You"
"""How the page names the side its own person plays (header, panels, narration, result)."""
HUMAN_CHOICE = ("You — play this side yourself (buttons)", HUMAN)
"""The choice (and recorded policy spec) for a side a person plays with the buttons."""


UNAVAILABLE = "unavailable here"
"""How a choice that cannot play in this install is labelled (the dropdowns grey it: assets/app.css)."""


@functools.cache
def checkpoints_missing() -> str:
    """Why this install cannot load a checkpoint, short enough for a choice's label (``extras.require`` has the
    whole line, which Start still gives), or '' when it can. Asked once: finding the modules imports none of them."""
    try:
        require("llm", "a checkpoint")
    except MissingExtra:
        return "needs the llm extra (pip install 'wolfeclick-arena[llm]')"
    return ""


def needs_missing(entry: ServedPolicy, missing: str) -> bool:
    """Whether ``entry`` is a checkpoint (a GPU kind of the package's own, or one the operator listed) that this
    install cannot load."""
    return bool(missing) and entry.gpu and not entry.external


def offered(entries: list[ServedPolicy], missing: str | None = None) -> list[tuple[str, str]]:
    """``(label, spec)`` for a list of entries in their order: those this install cannot play after the others,
    labelled ``spec — unavailable here: <reason>`` (``missing``: the reason, by default ``checkpoints_missing``)."""
    missing = checkpoints_missing() if missing is None else missing
    can = [(e.label, e.spec) for e in entries if not needs_missing(e, missing)]
    cannot = [(f"{e.spec} — {UNAVAILABLE}: {missing}", e.spec) for e in entries if needs_missing(e, missing)]
    return [*can, *cannot]


def policy_choices(catalogue: ServedCatalogue, *, opponent: bool = False,
                   missing: str | None = None) -> list[tuple[str, str]]:
    """The dropdown of a side: the app's served catalogue (baselines, presets, installed agents, the operator's
    listed specs), then a person. The agent's side leads with the strongest baseline, the opponent's with the
    weakest; checkpoints this install cannot load (no ``llm`` extra: ``missing``, see ``offered``) come after every
    policy that can play, labelled with the reason, instead of failing only once Start is pressed. Nothing else can
    be chosen: a visitor never types a spec (``policies.catalogue``)."""
    def labelled(entry: ServedPolicy, more: str = "") -> ServedPolicy:
        return replace(entry, label=f"{entry.spec} — {entry.label}{more}")

    listed = catalogue.entries()
    cheap = [labelled(e) for e in listed if not e.gpu and not e.external and not e.operator]
    models = [labelled(e) for e in listed if e.gpu and not e.external and not e.operator]
    installed = [labelled(e, " (installed agent)") for e in listed if e.external and not e.operator]
    operator = [labelled(e) for e in listed if e.operator]
    return [*offered([*(cheap if opponent else cheap[::-1]), *models, *installed, *operator], missing), HUMAN_CHOICE]


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
        info["error"] = whole_on_one_line(exc)
    info["ram_gb"] = ram
    return info


def hardware_report(info: dict[str, Any] | None = None) -> str:
    """Markdown: is CUDA here, and what that means for a 4B checkpoint."""
    info = info if info is not None else probe_hardware()
    ram = f"{info['ram_gb']:.0f} GB RAM" if info.get("ram_gb") else "RAM unknown"
    if info.get("torch") is None:
        return (f"**No checkpoint stack here** (PyTorch is not installed: the app runs without the `llm` extra, "
                f"`pip install \"wolfeclick-arena[llm]\"`): baselines, replays and Compare only. {ram}.")
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
# One live battle, as the page sees it
# --------------------------------------------------------------------------------------------------------------
@dataclass
class LiveViewEvent(LiveEvent):
    """A live battle's event with the page's view of the battle: its turns so far, narrated, a person's side
    shown as "You" (set from the event that starts the simulator on)."""

    view: BattleView | None = None


async def run_live(p1_spec: str, p2_spec: str, **options: Any) -> AsyncIterator[LiveViewEvent]:
    """``wolfeclick.battle.live_battles.play_live`` (same arguments), each event with the view the Live tab draws."""
    view: BattleView | None = None
    async with contextlib.aclosing(play_live(p1_spec, p2_spec, **options)) as events:
        async for event in events:
            battle = event.battle
            if view is None and battle is not None:
                view = BattleView(BattleMeta(id=battle.id, format=battle.format, seed=battle.seed,
                                             names=played_by(battle.names, battle.policies, battle.branch),
                                             policies={side: policy for side, policy in battle.policies.items()}))
                view.rename({side: YOU for side in battle.humans})
            if view is not None and event.turn is not None:
                view.add(event.turn)
            if view is not None and event.kind == "done" and event.recording is not None:
                view.finish(event.recording)
            yield LiveViewEvent(**{f.name: getattr(event, f.name) for f in fields(event)}, view=view)


def default_pace() -> float:
    try:
        return settings().live_pace
    except WolfeClickError:  # a bad $WOLFECLICK_LIVE_PACE: the default, as before
        return 0.4
