"""Optional parts of the package and the one-line error that says how to install a missing one.

The app and the CLI need only the core dependencies; checkpoints (``llm``), the training envs (``train``) and
tournaments on Ray (``ray``) are pip extras. Code that needs one calls ``require`` before its first heavy import,
so a user without it reads which extra to install instead of a ModuleNotFoundError. Every layer may import this.
"""

from __future__ import annotations

import importlib.util

from wolfeclick.errors import InputError

__all__ = ["EXTRAS", "MissingExtra", "require"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "llm": ("torch", "transformers", "peft", "accelerate"),
    "train": ("gymnasium", "trl", "datasets", "openenv", "fastapi", "uvicorn"),
    "ray": ("ray",),
}
"""The modules each extra brings (bitsandbytes is left out: it is needed only on CUDA, and says so itself)."""


class MissingExtra(InputError):
    """A feature was asked for whose optional dependencies are not installed."""


def require(extra: str, feature: str) -> None:
    """Raise ``MissingExtra`` naming ``pip install 'wolfeclick-arena[extra]'`` if any of the extra's modules is missing."""
    missing = [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtra(f"{feature} needs the '{extra}' extra ({', '.join(missing)} not installed): "
                           f"pip install 'wolfeclick-arena[{extra}]'")
