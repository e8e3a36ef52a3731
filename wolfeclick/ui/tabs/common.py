"""What every tab's handlers share: the error split and the page's message line."""

from __future__ import annotations

from html import escape

from wolfeclick.ui.context import AppContext
from wolfeclick.ui.presentation import error_line

__all__ = ["failure", "message_html"]


def failure(ctx: AppContext, exc: BaseException, where: str) -> str:
    """The one line the page shows for ``exc``; a bug's traceback goes to the server log."""
    text, bug = error_line(exc)
    if bug:
        ctx.log.error("bug in %s", where, exc_info=exc)
    return text


def message_html(text: str) -> str:
    """A one-line message for the page, as escaped HTML (upload errors can quote the uploaded file's content)."""
    return f'<div class="wc-message">{escape(text)}</div>' if text else ""
