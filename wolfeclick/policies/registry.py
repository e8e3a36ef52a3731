"""Every kind of policy a spec can name, in one registry: built-ins, installed agents, and ``py:`` factories.

A *kind* is a name, a one-line description, its options (typed, with defaults and help), whether it needs a GPU, and
a factory named lazily as ``"module:object"`` so that reading the registry imports nothing heavy: the app lists the
kinds at cold start, and only building a checkpoint brings in torch. The CLI's help and ``wolfeclick policies``, the
app's dropdowns, tournaments and the Ray workers all read it, so a kind exists in exactly one place.

Spec grammar: ``NAME[?key=value&…]`` for a kind matched by name (``heuristic``, an installed agent),
``NAME:BODY[?…]`` for a kind that takes a body (``llm:``, ``preset:``, ``py:package.module:factory``).

Third parties plug in two ways (``docs/agents.md``):

- an entry point in the group ``wolfeclick.policies`` (``myagent = "my_pkg.agent:make"``): ``myagent`` becomes a kind;
- a ``py:my_pkg.agent:make?depth=2`` spec: an importable policy factory (a class with ``decide``, or a function
  marked ``@policy_factory``), no installation needed. Nothing else: ``py:os:system`` is refused before any call.

The entry point's object is a ``PolicyKind`` (full control) or a factory callable whose keyword parameters are its
options (typed by annotation or default). The factory returns an object with ``decide(observation) -> Decision``;
the registry wraps it so the recording names the spec and the agent's distribution. Every failure is one line.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, replace
from importlib import metadata as importlib_metadata
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import parse_qsl

from wolfeclick.errors import InputError, WolfeClickError, one_line
from wolfeclick.policies.base import POLICY_FACTORY_MARK, Policy

__all__ = ["ENTRY_POINT_GROUP", "Option", "PolicyKind", "PolicyRegistry", "PolicySpecError", "ExternalPolicy",
           "builtin_kinds", "default_registry", "describe_kinds", "load_object", "parse_options"]

ENTRY_POINT_GROUP = "wolfeclick.policies"
_KIND_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
REQUIRED = object()
"""The default of an option the spec must give."""


class PolicySpecError(WolfeClickError, ValueError):
    """A spec that names no policy, or options a kind does not take; the message is one line."""


# ----------------------------------------------------------------------------------------------------------- options
@dataclass(frozen=True)
class Option:
    """One option of a kind: ``name=value`` in a spec's query, or a keyword argument."""

    name: str
    type: type = str
    default: Any = None
    help: str = ""
    choices: tuple[Any, ...] | None = None
    visitor_range: tuple[float, float] | None = None
    """For a number: the range a web visitor of the app may set it to (``policies.catalogue``). None: a number or
    free text (a device, a path) only the operator may set; choices and true/false are open as they are."""

    def type_name(self) -> str:
        return {str: "text", int: "integer", float: "number", bool: "true/false"}.get(self.type, self.type.__name__)

    def coerce(self, value: Any, where: str) -> Any:
        """``value`` (text from a spec, or a Python value) as this option's type; refused in one line otherwise."""
        try:
            typed = self._coerce(value)
        except (TypeError, ValueError):
            raise PolicySpecError(f"{where}: option {self.name}={str(value)[:40]!r} is not a valid "
                                  f"{self.type_name()}") from None
        if self.choices is not None and typed is not None and typed not in self.choices:
            raise PolicySpecError(f"{where}: option {self.name}={str(value)[:40]!r} is not one of "
                                  f"{', '.join(map(str, self.choices))}")
        return typed

    def _coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if self.type is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if self.type is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(str(value).strip(), 10) if isinstance(value, str) else int(value)
        if self.type is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        if self.type is str:
            if not isinstance(value, str):
                raise TypeError(value)
            return value
        return self.type(value)

    def describe(self) -> str:
        default = "required" if self.default is REQUIRED else f"default {self.default!r}"
        choices = f" ({' | '.join(map(str, self.choices))})" if self.choices else ""
        return f"{self.name}: {self.type_name()}{choices}, {default}" + (f" — {self.help}" if self.help else "")


def parse_options(query: str, where: str) -> dict[str, str]:
    """``a=1&b=x`` → ``{"a": "1", "b": "x"}``; a key given twice is refused."""
    pairs = parse_qsl(query, keep_blank_values=True)
    options: dict[str, str] = {}
    for key, value in pairs:
        if key in options:
            raise PolicySpecError(f"{where}: option {key} is given twice")
        options[key] = value
    return options


def check_options(options: Mapping[str, Any], known: Iterable[Option], where: str) -> dict[str, Any]:
    """The given options typed; an unknown one is refused naming the valid ones. Absent ones are left out."""
    by_name = {o.name: o for o in known}
    unknown = sorted(set(options) - set(by_name))
    if unknown:
        valid = ", ".join(sorted(by_name)) or "none"
        raise PolicySpecError(f"{where}: unknown option(s) {', '.join(unknown)}; valid options: {valid}")
    return {name: by_name[name].coerce(value, where) for name, value in options.items()}


# ----------------------------------------------------------------------------------------------------------- kinds
def load_object(target: str, where: str) -> Any:
    """``"package.module:attr.sub"`` → the object; a missing module or attribute is one line."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise PolicySpecError(f"{where}: {target!r} is not of the form package.module:factory")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise PolicySpecError(f"{where}: module {module_name!r} not found") from None
        raise PolicySpecError(f"{where}: importing {module_name!r} failed: {one_line(exc)}") from None
    except WolfeClickError:
        raise
    except Exception as exc:  # the third party's import-time error, told in one line
        raise PolicySpecError(f"{where}: importing {module_name!r} failed: {exc.__class__.__name__}: "
                              f"{one_line(exc)}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PolicySpecError(f"{where}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class PolicyKind:
    """One kind of policy. ``factory`` (an object or lazy ``"module:object"``) is called ``factory(**options)``;
    with ``body=True`` it is called ``factory(spec, **options)`` and parses its own body (``llm:REPO?…``).

    ``external`` kinds (installed agents, ``py:``) return any object with ``decide``; the registry wraps it.
    ``checkpoint`` kinds load a model through the shared model cache (they take the checkpoint options the CLI's
    ``--mode``/``--quant``… give, and the Ray engine serves their weights from one model server, which their
    ``serving`` describes).
    """

    name: str
    description: str
    factory: Any
    options: Any = ()
    """A tuple of ``Option`` (or a lazy ``"module:object"`` naming one)."""
    gpu: bool = False
    body: bool = False
    checkpoint: bool = False
    external: bool = False
    buildable: bool = True
    """False for ``human``: a person is seated by the app, not built from a spec."""
    server: bool = False
    """True for ``showdown:``: its battles are played whole on a Showdown server, never on the embedded simulator
    (no records, branches or rollouts; tournaments only)."""
    refusal: str = ""
    """Why a kind that is not buildable cannot be built from a spec (one line)."""
    form: str = ""
    """How its specs are written, for help (``llm:REPO[@REV][+ADAPTER[@REV]]``); the name when empty."""
    listed: Any = None
    """Concrete specs to offer in choosers: ``[(spec, label)]`` or a lazy ``"module:object"`` naming a function
    returning them. None: the name itself when the kind takes no body, else nothing."""
    bind: Mapping[str, Any] = field(default_factory=dict)
    """Arguments the factory always gets (a baseline's poke-env player)."""
    check: Any = None
    """For a kind with a body: ``check(spec, **checkpoint_options)`` (an object or lazy ``"module:object"``),
    which refuses in one line what the factory would refuse for the spec's body and options, without building
    anything (no model loaded, no server asked). None: the body is read only when the policy is built."""
    serving: Any = None
    """For a checkpoint kind: how other processes get its weights (an object or lazy ``"module:object"``) —
    ``base_of(spec)`` (specs on one base share a server), ``server`` (the model server's class) and
    ``client(server, tag)`` (the ``cache=`` a worker builds the policy with). None: it cannot be served remotely."""
    recognise: Any = None
    """``recognise(text)`` → this kind's spec for a model name someone logged (``…grpo-qwen3-4b-run2`` →
    ``preset:run2``) or None (an object or lazy ``"module:object"``); importers ask ``PolicyRegistry.spec_naming``."""
    source: str = "built-in"
    distribution: str | None = None
    """``name version`` of the installed distribution an entry-point kind comes from."""

    def spec_form(self) -> str:
        return self.form or (f"{self.name}:…" if self.body else self.name)

    def option_list(self) -> tuple[Option, ...]:
        options = self.options
        if isinstance(options, str):
            options = load_object(options, f"policy kind {self.name!r}")
        return tuple(options() if callable(options) else options)

    def choices(self) -> list[tuple[str, str]]:
        listed = self.listed
        if listed is None:
            return [] if self.body or not self.buildable else [(self.name, self.description)]
        if isinstance(listed, str):
            listed = load_object(listed, f"policy kind {self.name!r}")
        return list(listed() if callable(listed) else listed)

    def resolve_factory(self) -> Callable[..., Any]:
        factory: Callable[..., Any] = (load_object(self.factory, f"policy kind {self.name!r}")
                                       if isinstance(self.factory, str) else self.factory)
        return factory

    def resolve_serving(self) -> Any:
        """The kind's ``serving``, loaded; a one-line refusal for a kind whose weights no server can hold."""
        if self.serving is None:
            raise PolicySpecError(f"{self.name}: policies of this kind cannot be served to other processes")
        return load_object(self.serving, f"policy kind {self.name!r}") if isinstance(self.serving, str) \
            else self.serving

    def resolve_check(self) -> Callable[..., Any] | None:
        check: Callable[..., Any] | None = (load_object(self.check, f"policy kind {self.name!r}")
                                            if isinstance(self.check, str) else self.check)
        return check


def kind_from_factory(name: str, factory: Callable[..., Any], target: str, source: str) -> PolicyKind:
    """A kind for a plain factory: its keyword parameters are the options, its docstring's first line the
    description, its ``gpu`` attribute (default False) the GPU need."""
    import inspect  # only for third-party factories: the registry's readers (the app's cold start) never need it

    where = f"policy {name!r}"
    if not callable(factory):
        raise PolicySpecError(f"{where}: {target!r} is neither a factory nor a PolicyKind")
    try:
        signature = inspect.signature(factory, eval_str=True)
    except (TypeError, ValueError, NameError) as exc:
        raise PolicySpecError(f"{where}: cannot read the signature of {target!r}: {one_line(exc)}") from None
    options = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = REQUIRED if param.default is param.empty else param.default
        if param.annotation in (str, int, float, bool):
            kind_type = param.annotation
        elif default not in (REQUIRED, None) and type(default) in (str, int, float, bool):
            kind_type = type(default)
        else:
            kind_type = str
        options.append(Option(param.name, kind_type, default))
    doc = inspect.getdoc(factory) or ""
    description = doc.strip().splitlines()[0] if doc.strip() else f"{target} (no description)"
    return PolicyKind(name=name, description=description, factory=factory, options=tuple(options),
                      gpu=bool(getattr(factory, "gpu", False)), external=True, source=source, form=name)


# ----------------------------------------------------------------------------------------------------------- wrapping
class ExternalPolicy:
    """A third-party agent as an Arena policy: its own ``decide``, the spec it was named by, and where it came from.

    ``blocking`` (it thinks for long: network, a big model) and ``metadata()`` are read from the agent when it has
    them. The metadata the recording keeps names the kind, the factory, the distribution and the typed options.
    """

    def __init__(self, spec: str, agent: Any, about: Mapping[str, Any]) -> None:
        self.spec = spec
        self.agent = agent
        self.blocking = bool(getattr(agent, "blocking", False))
        self._about = dict(about)

    def metadata(self) -> dict[str, Any]:
        own = self.agent.metadata() if callable(getattr(self.agent, "metadata", None)) else {}
        return {**dict(own or {}), **self._about}

    def decide(self, observation: Any) -> Any:
        return self.agent.decide(observation)


def _distribution_of(module_name: str) -> str | None:
    top = module_name.split(".")[0]
    names = importlib_metadata.packages_distributions().get(top) or []
    for name in names:
        try:
            return f"{name} {importlib_metadata.version(name)}"
        except importlib_metadata.PackageNotFoundError:
            continue
    return None


# ----------------------------------------------------------------------------------------------------------- registry
class PolicyRegistry:
    """Kinds by name. ``build(spec)`` makes the policy a spec names; ``kinds()`` lists them (for help and the app).

    Installed agents (the ``wolfeclick.policies`` entry points) are found on first need, and loaded only when used
    or listed with their options; a built-in name wins over an entry point of the same name (listed as shadowed).
    """

    def __init__(self, kinds: Iterable[PolicyKind] = (), *, entry_points: bool = True) -> None:
        self._kinds: dict[str, PolicyKind] = {}
        self._pending: dict[str, Any] | None = None if entry_points else {}
        self.problems: list[str] = []
        """Entry points that could not become kinds (bad name, shadowed, failed to load): one line each."""
        for kind in kinds:
            self.register(kind)

    def register(self, kind: PolicyKind) -> PolicyKind:
        if not _KIND_NAME.match(kind.name):
            raise InputError(f"policy kind name {kind.name!r} must be lower-case letters, digits, - or _")
        if kind.name in self._kinds:
            raise InputError(f"policy kind {kind.name!r} is registered twice")
        self._kinds[kind.name] = kind
        return kind

    # -- installed agents
    def _entry_points(self) -> dict[str, Any]:
        if self._pending is None:
            self._pending = {}
            for point in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP):
                if not _KIND_NAME.match(point.name):
                    self.problems.append(f"entry point {point.name!r} ({point.value}): not a valid kind name")
                elif point.name in self._kinds:
                    self.problems.append(f"entry point {point.name!r} ({point.value}) is shadowed by the built-in")
                elif point.name not in self._pending:
                    self._pending[point.name] = point
        return self._pending

    def _load_entry_point(self, name: str) -> PolicyKind:
        point = self._entry_points()[name]
        dist = getattr(point, "dist", None)
        distribution = f"{dist.name} {dist.version}" if dist is not None else None
        source = f"entry point {point.value}" + (f" ({distribution})" if distribution else "")
        where = f"policy {name!r} (entry point {point.value})"
        try:
            obj = point.load()
        except ModuleNotFoundError as exc:
            raise PolicySpecError(f"{where}: module {exc.name!r} not found") from None
        except AttributeError as exc:
            raise PolicySpecError(f"{where}: attribute missing: {one_line(exc)}") from None
        except Exception as exc:
            raise PolicySpecError(f"{where}: loading failed: {exc.__class__.__name__}: {one_line(exc)}") from None
        if isinstance(obj, PolicyKind):
            kind = replace(obj, name=name, external=True, source=source, form=obj.form or name,
                           distribution=distribution)
        else:
            kind = replace(kind_from_factory(name, obj, point.value, source), distribution=distribution)
        self._kinds[name] = kind
        self._entry_points().pop(name)
        return kind

    # -- reading
    def names(self) -> list[str]:
        """Every kind's name, built-ins first, installed agents after (not loaded)."""
        return [*self._kinds, *(n for n in self._entry_points() if n not in self._kinds)]

    def get(self, name: str) -> PolicyKind:
        if name in self._kinds:
            return self._kinds[name]
        if name in self._entry_points():
            return self._load_entry_point(name)
        raise PolicySpecError(f"no policy kind {name!r}; kinds: {', '.join(self.names())}")

    def kinds(self) -> list[PolicyKind]:
        """Every kind, installed agents loaded (one that fails to load is left out and told in ``problems``)."""
        found = []
        for name in self.names():
            try:
                found.append(self.get(name))
            except PolicySpecError as exc:
                if str(exc) not in self.problems:  # listed again and again by the app: told once
                    self.problems.append(str(exc))
        return found

    def spec_help(self, *, installed: bool = True) -> str:
        """One line: how specs are written (built-ins, and installed agents by name unless ``installed=False``,
        which reads no distribution metadata: the CLI's help is built on every command)."""
        forms = []
        for name in self.names() if installed else list(self._kinds):
            kind = self._kinds.get(name)
            if kind is None or kind.buildable:
                forms.append(kind.spec_form() if kind is not None else name)
        return " | ".join(forms)

    def choices(self) -> list[tuple[str, str, PolicyKind]]:
        """Concrete specs to offer in a chooser: ``(spec, label, kind)`` for every listed spec of every kind.

        An installed agent not loaded yet is offered by name without importing it (the app lists choices at cold
        start; a third party's module may import a model stack): its kind here is a stand-in that says where it
        comes from, and the real one is loaded when the agent is chosen."""
        found = [(spec, label, kind) for kind in self._kinds.values() for spec, label in kind.choices()]
        for name, point in self._entry_points().items():
            dist = getattr(point, "dist", None)
            label = f"{dist.name} {dist.version}" if dist is not None else point.value
            found.append((name, label, PolicyKind(name, label, point.value, external=True,
                                                  source=f"entry point {point.value}")))
        return found

    def split(self, spec: str) -> tuple[PolicyKind, str, dict[str, str]]:
        """``spec`` → its kind, the spec stripped, and (name-matched kinds) the options written in it."""
        text = spec.strip() if isinstance(spec, str) else ""
        if not text:
            raise PolicySpecError(f"empty policy spec; expected {self.spec_help()}")
        head, _, query = text.partition("?")
        text = text if query else head.strip()
        name, colon, _ = head.strip().partition(":")
        if colon:
            kind = self._kinds.get(name)
            if kind is None and name in self._entry_points():
                kind = self.get(name)
            if kind is None or not kind.body:
                raise PolicySpecError(f"unknown policy spec {text!r}; expected {self.spec_help()}")
            return kind, text, {}
        if name not in self._kinds and name not in self._entry_points():
            raise PolicySpecError(f"unknown policy spec {text!r}; expected {self.spec_help()}")
        kind = self.get(name)
        if kind.body:
            raise PolicySpecError(f"policy spec {text!r} needs a body: {kind.spec_form()}")
        return kind, text, parse_options(query, f"policy spec {text!r}") if query else {}

    def spec_naming(self, text: str | None) -> str | None:
        """The spec a kind recognises in ``text`` (a model name from someone's log), or None when none does.
        Only kinds already registered are asked: reading a log never loads an installed agent."""
        for kind in list(self._kinds.values()):
            if kind.recognise is None or not text:
                continue
            recognise = load_object(kind.recognise, f"policy kind {kind.name!r}") \
                if isinstance(kind.recognise, str) else kind.recognise
            spec = recognise(text)
            if spec:
                return str(spec)
        return None

    def lookup(self, spec: str) -> PolicyKind:
        """The kind a spec names (nothing is built)."""
        return self.split(spec)[0]

    # -- checking and building
    def _split_buildable(self, spec: str, checkpoint_options: Mapping[str, Any]
                         ) -> tuple[PolicyKind, str, dict[str, str], dict[str, Any], Any]:
        """What ``check`` and ``build`` both refuse first: the spec's kind, misspelt checkpoint options, a kind
        that is not built from specs. Returns the kind, the spec, its written options, the checkpoint options
        given and the cache."""
        kind, text, written = self.split(spec)
        extra = {k: v for k, v in checkpoint_options.items() if v is not None}
        cache = extra.pop("cache", None)
        if extra:
            check_options(extra, self.checkpoint_options(), "checkpoint options")
        if not kind.buildable:
            raise PolicySpecError(kind.refusal or f"policy {kind.name!r} cannot be built from a spec")
        return kind, text, written, extra, cache

    @staticmethod
    def _named_options(kind: PolicyKind, text: str, written: Mapping[str, str]) -> dict[str, Any]:
        """A name-matched kind's written options, typed, every required one present."""
        options = check_options(written, kind.option_list(), f"policy spec {text!r}")
        missing = [o.name for o in kind.option_list() if o.default is REQUIRED and o.name not in options]
        if missing:
            raise PolicySpecError(f"policy spec {text!r} needs option(s) {', '.join(missing)}")
        return options

    def check(self, spec: str, **checkpoint_options: Any) -> PolicyKind:
        """The kind ``spec`` names, once everything ``build`` could refuse without building passes: its name,
        its options and their types, the checkpoint options, and (through ``PolicyKind.check``) its body. Nothing
        is built: no factory called, no model loaded, no server asked. The refusal is ``build``'s own line."""
        kind, text, written, extra, _ = self._split_buildable(spec, checkpoint_options)
        if not kind.body:
            self._named_options(kind, text, written)
            return kind
        check = kind.resolve_check()
        if check is not None:
            check(text, **(extra if kind.checkpoint else {}))
        return kind

    def build(self, spec: str, **checkpoint_options: Any) -> Policy:
        """The policy ``spec`` names. ``checkpoint_options`` (the CLI's ``--mode``, ``--quant``…; ``cache``) reach
        checkpoint kinds only, and must be checkpoint options: a misspelt one is refused here, for every spec."""
        kind, text, written, extra, cache = self._split_buildable(spec, checkpoint_options)
        factory = kind.resolve_factory()
        policy: Policy
        if kind.body:
            if kind.checkpoint:
                policy = factory(text, **extra, **({"cache": cache} if cache is not None else {}))
            else:
                policy = factory(text, **dict(kind.bind))
            return policy
        options = self._named_options(kind, text, written)
        if not kind.external:
            policy = factory(text, **dict(kind.bind), **options)
            return policy
        target = kind.factory if isinstance(kind.factory, str) else _qualname(kind.factory)
        about = {"kind": kind.name, "factory": target, "source": kind.source}
        if kind.distribution:
            about["distribution"] = kind.distribution
        return make_external(text, factory, _filled(options, kind), about)

    def checkpoint_options(self) -> tuple[Option, ...]:
        """The options checkpoint kinds take (the union over them: ``llm:`` and ``preset:`` share one list)."""
        found: dict[str, Option] = {}
        for kind in self._kinds.values():
            if kind.checkpoint:
                found.update((o.name, o) for o in kind.option_list())
        return tuple(found.values())


def describe_kinds(kinds: Iterable[PolicyKind], problems: Iterable[str] = ()) -> str:
    """The text ``wolfeclick policies`` prints: every kind, how its specs are written, GPU need, where it comes
    from, and each option with its type, default and help. Pure."""
    lines = []
    for kind in kinds:
        gpu = "needs a GPU" if kind.gpu else "CPU"
        usable = "" if kind.buildable else ", app only"
        lines.append(f"{kind.spec_form()}  [{gpu}{usable}; {kind.source}]")
        lines.append(f"    {kind.description}")
        options = kind.option_list()
        if options:
            lines.append("    options:")
            lines.extend(f"      {option.describe()}" for option in options)
        listed = [spec for spec, _ in kind.choices() if spec != kind.name]
        if listed:
            lines.append(f"    specs: {', '.join(listed)}")
    lines.extend(f"warning: {problem}" for problem in problems)
    return "\n".join(lines)


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', type(obj).__name__)}"


def make_external(spec: str, factory: Callable[..., Any], options: Mapping[str, Any],
                  about: Mapping[str, Any]) -> ExternalPolicy:
    """Call a third party's factory with its typed options and wrap what it returns; each failure is one line."""
    try:
        agent = factory(**options)  # every option, defaults filled in: what the recording says it played with
    except WolfeClickError:
        raise
    except Exception as exc:
        raise PolicySpecError(f"policy spec {spec!r}: the factory raised {exc.__class__.__name__}: "
                              f"{one_line(exc)}") from None
    if not callable(getattr(agent, "decide", None)):
        raise PolicySpecError(f"policy spec {spec!r}: the factory returned {type(agent).__name__}, not a policy "
                              "(it needs a decide(observation) method)")
    about = dict(about)
    module = str(about.get("factory", "")).partition(":")[0]
    if "distribution" not in about and module:
        found = _distribution_of(module)
        if found:
            about["distribution"] = found
    return ExternalPolicy(spec, agent, {**about, "options": dict(options)})


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MODULE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def is_policy_factory(obj: Any) -> bool:
    """What a ``py:`` spec may name: a ``PolicyKind``, a class whose instances ``decide``, or a function marked
    ``@policy_factory``. Builtins and anything else callable (``os.system``, ``subprocess.Popen``) are not."""
    if isinstance(obj, PolicyKind):
        return True
    if isinstance(obj, type):
        return callable(getattr(obj, "decide", None))
    return getattr(obj, POLICY_FACTORY_MARK, False) is True


def _py_factory(spec: str) -> tuple[Callable[..., Any], PolicyKind, dict[str, Any], str]:
    """A ``py:`` spec's factory (imported, not called), its kind, its typed options and the target it names.

    The target is ``package.module:name``: one name defined in a module, never an attribute path into another
    object (``pathlib:Path.touch``), and it must be a policy factory (``is_policy_factory``); both are refused in
    one line before anything is called."""
    head, _, query = spec.strip().partition("?")
    target = head.removeprefix("py:").strip()
    where = f"policy spec {spec.strip()[:80]!r}"
    module_name, sep, attr = target.partition(":")
    if sep and module_name and attr and not _IDENTIFIER.match(attr):
        raise PolicySpecError(f"{where}: py: names one factory of a module (package.module:factory), not the "
                              f"attribute path {attr[:40]!r}")
    if sep and module_name and not _MODULE_PATH.match(module_name):
        raise PolicySpecError(f"{where}: {module_name[:40]!r} is not a module path")
    factory = load_object(target, where)
    if not is_policy_factory(factory):
        raise PolicySpecError(f"{where}: {target[:60]!r} is not a policy factory (a class with decide(), or a "
                              "function marked @wolfeclick.policies.base.policy_factory); it was not called")
    if isinstance(factory, PolicyKind):
        kind = factory
        factory = kind.resolve_factory()
    else:
        kind = kind_from_factory("py", factory, target, f"py:{target}")
    options = check_options(parse_options(query, where) if query else {}, kind.option_list(), where)
    missing = [o.name for o in kind.option_list() if o.default is REQUIRED and o.name not in options]
    if missing:
        raise PolicySpecError(f"{where} needs option(s) {', '.join(missing)}")
    return factory, kind, options, target


def check_py(spec: str) -> None:
    """The ``py:`` kind's check: the module imports, the factory is there and takes the options given (it is not
    called: a factory may load a model)."""
    _py_factory(spec)


def build_py(spec: str) -> ExternalPolicy:
    """The ``py:package.module:factory?opt=value&…`` kind: any importable factory, options typed by its signature."""
    factory, kind, options, target = _py_factory(spec)
    return make_external(spec.strip(), factory, _filled(options, kind), {"kind": "py", "factory": target,
                                                                          "source": "py: spec"})


def _filled(options: Mapping[str, Any], kind: PolicyKind) -> dict[str, Any]:
    """The given options plus every other option's default, in the kind's order."""
    return {o.name: options.get(o.name, o.default) for o in kind.option_list()}


# ----------------------------------------------------------------------------------------------------------- built-ins
def _baseline(name: str, player: str, description: str, label: str) -> PolicyKind:
    """A poke-env baseline: its player class by name in ``poke_env.player`` (the description goes into recordings)."""
    return PolicyKind(name, description, "wolfeclick.policies.baselines:BaselinePolicy",
                      bind={"player": player, "description": description}, form=name, listed=[(name, label)])


def builtin_kinds() -> list[PolicyKind]:
    """The kinds the Arena ships. Factories and option lists are lazy strings: nothing here imports poke-env's
    players, torch or transformers."""
    return [
        _baseline("random", "RandomPlayer", "Picks uniformly among legal moves and switches.", "random baseline"),
        _baseline("maxdamage", "MaxBasePowerPlayer",
                  "Uses the move with the highest base power; switches only when it must.", "max-damage baseline"),
        _baseline("heuristic", "SimpleHeuristicsPlayer",
                  "poke-env's SimpleHeuristicsPlayer: matchups, boosts, hazards, switching.", "heuristic baseline"),
        PolicyKind("search", "Fair search: samples what its side cannot see from the format's set data and plays "
                   "the option that wins most rollouts in those worlds (random-battle formats; docs/search.md).",
                   "wolfeclick.analysis.search:make_search", options=(
                       Option("level", int, 2, "strength and cost: 1 (≤ 0.2 s a decision), 2, 3 (≤ 2 s)",
                              choices=(1, 2, 3)),
                       Option("worlds", int, None, "sampled worlds per decision (default: the level's)",
                              visitor_range=(1, 8)),
                       Option("rollouts", int, None, "most rollouts per option (default: the level's)",
                              visitor_range=(1, 64)),
                       Option("horizon", int, None, "turns a rollout plays before its HP is scored; 0: to the end "
                              "(default: the level's)", visitor_range=(0, 50))),
                   form="search[?level=1|2|3&worlds=N&rollouts=N&horizon=N]",
                   listed=[]),  # seconds of CPU a decision: served to visitors only if the operator lists it
        PolicyKind("human", "A person choosing among the legal actions with buttons (the app's Live tab).",
                   "wolfeclick.policies.human:HumanPolicy", buildable=False,
                   refusal="'human' is a person choosing with buttons in the app (Live: You, or Replays: take "
                           "over); there is no one to ask here"),
        PolicyKind("preset", "A published WolfeClick GRPO LoRA adapter on Qwen3-4B (run1, run2, run3).",
                   "wolfeclick.llm.policy:make_llm_policy", options="wolfeclick.llm.checkpoint_specs:CHECKPOINT_OPTIONS",
                   gpu=True, body=True, checkpoint=True, form="preset:NAME[?OPTIONS]",
                   listed="wolfeclick.llm.checkpoint_specs:preset_choices", check="wolfeclick.llm.checks:check_checkpoint_spec",
                   recognise="wolfeclick.llm.checkpoint_specs:preset_naming",
                   serving="wolfeclick.llm.serving:CHECKPOINT_SERVING"),
        PolicyKind("llm", "Any causal-LM checkpoint or LoRA adapter, from the Hub or a local folder.",
                   "wolfeclick.llm.policy:make_llm_policy", options="wolfeclick.llm.checkpoint_specs:CHECKPOINT_OPTIONS",
                   gpu=True, body=True, checkpoint=True, form="llm:REPO[@REV][+ADAPTER[@REV]][?OPTIONS] | llm:/path",
                   check="wolfeclick.llm.checks:check_checkpoint_spec",
                   serving="wolfeclick.llm.serving:CHECKPOINT_SERVING"),
        PolicyKind("py", "Any importable factory returning an object with decide(observation); options typed by "
                   "its signature.", build_py, body=True, form="py:package.module:factory[?opt=value&…]",
                   check=check_py),
        PolicyKind("showdown", "A bot connected to a Showdown server ($WOLFECLICK_SERVER) as USER: challenged there, "
                   "recorded like a ladder battle; tournaments only.", "wolfeclick.ladder.seat:make_showdown_seat",
                   body=True, server=True, form="showdown:USER", check="wolfeclick.ladder.seat:check_showdown_spec"),
    ]


_DEFAULT: list[PolicyRegistry] = []


def default_registry() -> PolicyRegistry:
    """The built-ins plus the installed agents of this environment, made once per process on first use (entry
    points are read from the installed distributions, which a running process does not change)."""
    if not _DEFAULT:
        _DEFAULT.append(PolicyRegistry(builtin_kinds()))
    return _DEFAULT[0]
