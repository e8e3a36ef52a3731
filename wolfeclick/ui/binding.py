"""``bind``: a handler with its context arguments fixed, as Gradio needs it (signature and type hints intact).

Handlers are module-level functions whose first parameters are the app context (and a tab's components);
``functools.partial`` would hide their type hints from ``gr.api`` and their kind (coroutine, generator) from
some inspectors, so ``bind`` builds a wrapper of the same kind with the remaining signature.
"""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, AsyncIterator, Callable, Iterator

__all__ = ["bind"]


def bind(fn: Callable[..., Any], *bound: Any) -> Callable[..., Any]:
    """``fn`` with its first ``len(bound)`` arguments fixed."""
    signature = inspect.signature(fn)
    rest = list(signature.parameters.values())[len(bound):]
    hints = typing.get_type_hints(fn)

    async def agen(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async for item in fn(*bound, *args, **kwargs):
            yield item

    async def coro(*args: Any, **kwargs: Any) -> Any:
        return await fn(*bound, *args, **kwargs)

    def gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
        yield from fn(*bound, *args, **kwargs)

    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*bound, *args, **kwargs)

    # Gradio tells a streaming event from a plain one by the function's kind: the wrapper is of fn's kind
    wrapper: Callable[..., Any] = (agen if inspect.isasyncgenfunction(fn) else coro if inspect.iscoroutinefunction(fn)
                                   else gen if inspect.isgeneratorfunction(fn) else call)
    functools.update_wrapper(wrapper, fn, updated=())
    vars(wrapper).pop("__wrapped__")  # Gradio must see the bound signature, not fn's
    wrapper.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
    names = {p.name for p in rest} | {"return"}
    wrapper.__annotations__ = {k: v for k, v in hints.items() if k in names}
    return wrapper
