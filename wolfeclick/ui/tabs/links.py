"""The page's own address, for the share links a handler writes."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["page_url"]


def page_url(request: Any) -> str:
    """The page's URL without its query: from the Referer the browser sends, else the server's base URL."""
    candidates = []
    if request is not None:
        headers = getattr(request, "headers", None)
        if headers is not None:
            candidates.append(headers.get("referer"))
        inner = getattr(request, "request", None)
        if inner is not None and getattr(inner, "base_url", None) is not None:
            candidates.append(str(inner.base_url))
    for value in candidates:
        if value and value.startswith(("http://", "https://")):
            parts = urlsplit(value)
            return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))
    return ""
