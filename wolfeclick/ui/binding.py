"""``bind``: a handler with its context arguments fixed, as Gradio needs it (signature and type hints intact).

Handlers are module-level functions whose first parameters are the app context (and a tab's components);
``functools.partial`` would hide their type hints from ``gr.api`` and their kind (coroutine, generator) from
some inspectors, so ``bind`` builds a wrapper of the same kind with the remaining signature.
"""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Callable

__all__ = ["bind"]


def bind(fn: Callable[..., Any], *bound: Any) -> Callable[..., Any]:
    """``fn`` with its first ``len(bound)`` arguments fixed."""
    signature = inspect.signature(fn)
    rest = list(signature.parameters.values())[len(bound):]
    hints = typing.get_type_hints(fn)

    if inspect.isasyncgenfunction(fn):
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            async for item in fn(*bound, *args, **kwargs):
                yield item
    elif inspect.iscoroutinefunction(fn):
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await fn(*bound, *args, **kwargs)
    elif inspect.isgeneratorfunction(fn):
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            yield from fn(*bound, *args, **kwargs)
    else:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*bound, *args, **kwargs)

    functools.update_wrapper(wrapper, fn, updated=())
    del wrapper.__wrapped__  # Gradio must see the bound signature, not fn's
    wrapper.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
    names = {p.name for p in rest} | {"return"}
    wrapper.__annotations__ = {k: v for k, v in hints.items() if k in names}
    return wrapper
