"""The policies a web visitor may choose: the served catalogue, and the one rule that admits a visitor's spec.

Two audiences, one rule. The operator (the CLI, Python, config files, the environment) may name any spec the
registry builds. A visitor of the app — every UI event and every ``/gradio_api/`` call — chooses from this
catalogue only: the poke-env baselines, the published presets, the agents the operator installed (entry points), a
person's seat (``human``), and the specs the operator lists in ``$WOLFECLICK_APP_POLICIES``. ``admit`` is plain
string matching against those entries: it imports, reads and connects to nothing, so a refused spec (``py:…``,
``llm:/some/path``, ``showdown:…`` to anyone, a typo) never reaches the registry's ``check`` or ``build``.

A visitor may add options to an offered spec only where the option is safe to open: one with fixed choices, a
true/false one, or a number with a visitor range (``Option.visitor_range``); free text (a device, a path) and
unbounded numbers stay the operator's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from wolfeclick.errors import InputError
from wolfeclick.policies.registry import Option, PolicySpecError, parse_options

if TYPE_CHECKING:
    from wolfeclick.policies.registry import PolicyRegistry

__all__ = ["HUMAN", "PolicyRefused", "ServedPolicy", "ServedCatalogue", "visitor_settable"]

HUMAN = "human"
"""A person's seat: always offered (the app seats the visitor who chose it)."""
MAX_SPEC_CHARS = 300


class PolicyRefused(InputError):
    """A visitor named a policy this app does not serve (or an option only the operator may set); one line."""


@dataclass(frozen=True)
class ServedPolicy:
    """One entry of the catalogue: the spec as offered, its label, and what the chooser needs to group it."""

    spec: str
    label: str
    kind: str
    gpu: bool = False
    external: bool = False
    operator: bool = False
    """Listed by the operator in ``$WOLFECLICK_APP_POLICIES`` (not one of the catalogue's own)."""


def visitor_settable(option: Option) -> bool:
    """Whether a visitor may set ``option``: fixed choices, true/false, or a number with a visitor range."""
    return option.choices is not None or option.type is bool or option.visitor_range is not None


class ServedCatalogue:
    """The entries a visitor chooses from, and ``admit`` — the only way a visitor's text becomes a spec."""

    def __init__(self, entries: Iterable[ServedPolicy], registry: "PolicyRegistry | None" = None) -> None:
        self._entries: dict[str, ServedPolicy] = {}
        for entry in entries:
            self._entries.setdefault(entry.spec, entry)
        self._registry = registry

    @classmethod
    def from_registry(cls, registry: "PolicyRegistry", listed: Sequence[str] = (),
                      where: str = "$WOLFECLICK_APP_POLICIES") -> "ServedCatalogue":
        """The registry's own offered specs (baselines, presets, installed agents) plus the operator's ``listed``
        ones, each read as the registry reads it (a spec it cannot name is one line naming ``where``)."""
        entries = [ServedPolicy(spec, label, kind.name, kind.gpu, kind.external)
                   for spec, label, kind in registry.choices() if kind.buildable]
        for spec in listed:
            text = spec.strip()
            if not text:
                continue
            try:
                kind = registry.lookup(text)
            except PolicySpecError as exc:
                raise InputError(f"{where}: {exc}") from None
            if not kind.buildable:
                raise InputError(f"{where}: {text[:60]!r} cannot be served ({kind.refusal or 'not buildable'})")
            entries.append(ServedPolicy(text, "listed by the operator", kind.name, kind.gpu, kind.external,
                                        operator=True))
        return cls(entries, registry)

    def entries(self) -> list[ServedPolicy]:
        return list(self._entries.values())

    def specs(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, spec: object) -> bool:
        return isinstance(spec, str) and spec in self._entries

    def visitor_options(self, entry: ServedPolicy) -> tuple[Option, ...]:
        """The options a visitor may add to ``entry`` (none for an entry the operator wrote options into)."""
        if self._registry is None or "?" in entry.spec:
            return ()
        kind = self._registry.lookup(entry.spec)
        return tuple(o for o in kind.option_list() if visitor_settable(o))

    def admit(self, spec: object, *, human: bool = True) -> str:
        """``spec`` as the app may play it, or ``PolicyRefused`` in one line. Pure matching: nothing is imported,
        read or connected to for a spec that is not offered. ``human=False`` where no person can be seated."""
        if not isinstance(spec, str):
            raise PolicyRefused("a policy is chosen by name from the app's list")
        text = spec.strip()
        if not text:
            raise PolicyRefused(f"choose a policy: {self._offer(human=human)}")
        if len(text) > MAX_SPEC_CHARS or any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise PolicyRefused("that policy is not offered by this app (too long, or not one line)")
        if text == HUMAN:
            if human:
                return text
            raise PolicyRefused("a person cannot play here; choose a policy")
        if text in self._entries:
            return text
        base, _, query = text.partition("?")
        entry = self._entries.get(base.strip())
        if entry is None:
            raise PolicyRefused(f"policy {text[:60]!r} is not offered by this app; choose one of: "
                                f"{self._offer(human=human)} "
                                "(an operator lists more in $WOLFECLICK_APP_POLICIES)")
        allowed = {o.name: o for o in self.visitor_options(entry)}
        where = f"policy {text[:60]!r}"
        try:
            written = parse_options(query, where)
        except PolicySpecError as exc:
            raise PolicyRefused(str(exc)) from None
        for name, value in written.items():
            option = allowed.get(name)
            if option is None:
                open_ = ", ".join(sorted(allowed)) or "none"
                raise PolicyRefused(f"{where}: option {name[:30]!r} cannot be set here (options a visitor may set: "
                                    f"{open_})")
            try:
                typed = option.coerce(value, where)
            except PolicySpecError as exc:
                raise PolicyRefused(str(exc)) from None
            if option.visitor_range is not None and typed is not None:
                low, high = option.visitor_range
                if not low <= typed <= high:
                    raise PolicyRefused(f"{where}: option {name}={value[:20]!r} must be from {low:g} to {high:g} here")
        return f"{entry.spec}?{query}" if query else entry.spec

    def _offer(self, most: int = 12, *, human: bool = True) -> str:
        """The choices a refusal names: only what would be admitted (``human`` only where a person can sit)."""
        names = [*self._entries, *([HUMAN] if human else [])]
        return ", ".join(names[:most]) + (f", … ({len(names)} in all)" if len(names) > most else "")
