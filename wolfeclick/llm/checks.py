"""Everything a checkpoint spec can be refused for before any weights are touched, checked in one place.

``make_llm_policy`` runs this first; a tournament runs it alone on every checkpoint spec when its config is made
(``arena.schedule.check_specs``), so a misspelt option in the fifth spec is told before the first model loads.
It imports no torch, asks no Hub and reads no weights: the spec's form, its options (written in it or given) with
their types, the prompt profile, and a local folder's config file.
"""

from __future__ import annotations

from typing import Any

from wolfeclick.errors import InputError
from wolfeclick.game.prompts import make_profile
from wolfeclick.llm.checkpoint_specs import CHECKPOINT_OPTIONS, CheckpointError, CheckpointSpec, local_folder, parse_spec
from wolfeclick.policies.registry import PolicySpecError, check_options

__all__ = ["checkpoint_options", "checked_checkpoint", "check_checkpoint_spec"]


def checkpoint_options(spec: str, given: dict[str, Any], written: dict[str, str]) -> dict[str, Any]:
    """Every checkpoint option, typed: written in the spec (wins), else given as an argument, else the default.

    An unknown or mistyped option (in either place) is a ``CheckpointError`` naming the valid ones."""
    where = f"checkpoint spec {spec.strip()!r}"
    try:
        passed = check_options({k: v for k, v in given.items() if v is not None}, CHECKPOINT_OPTIONS, where)
        inline = check_options(written, CHECKPOINT_OPTIONS, where)
    except PolicySpecError as exc:
        raise CheckpointError(str(exc)) from None
    return {o.name: inline.get(o.name, passed.get(o.name, o.default)) for o in CHECKPOINT_OPTIONS}


def checked_checkpoint(spec: str, **options: Any) -> tuple[CheckpointSpec, dict[str, Any]]:
    """The parsed spec and every option typed, once nothing short of loading can refuse them (one-line
    ``CheckpointError`` otherwise). A Hub repo is not asked whether it exists: that is the network's answer."""
    parsed = parse_spec(spec)
    typed = checkpoint_options(spec, options, parsed.options)
    try:
        make_profile(typed["profile"] or (parsed.preset.profile if parsed.preset else None))
    except InputError as exc:  # the profile option of a checkpoint spec: a checkpoint error, as every other option
        raise CheckpointError(str(exc)) from None
    for ref in (parsed.model, parsed.adapter):
        if ref is not None and ref.local:
            local_folder(ref)
    return parsed, typed


def check_checkpoint_spec(spec: str, **options: Any) -> None:
    """The registry's check for ``llm:`` and ``preset:`` specs (``PolicyKind.check``)."""
    checked_checkpoint(spec, **options)
