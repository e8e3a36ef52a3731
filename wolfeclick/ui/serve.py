"""Starting the app as its own process (``python app.py``, ``wolfeclick app``), importing only what serves the page.

Gradio imports its MCP integration whenever the ``mcp`` package is installed, and ``mcp`` comes with the training
extra (openenv-core): in one venv with both, that doubled the app's cold start. The app serves no MCP endpoint, so
its process keeps ``mcp`` out (``GRADIO_MCP_SERVER=true`` lets it in). The training, Ray and model stacks are
imported only when a tab first uses them.
"""

from __future__ import annotations

import os
import sys

__all__ = ["serve", "keep_unused_stacks_out"]


def keep_unused_stacks_out() -> None:
    """Make ``import mcp`` fail fast in this process (Gradio then skips its MCP integration), before Gradio loads."""
    if "gradio" in sys.modules or os.environ.get("GRADIO_MCP_SERVER", "").strip().lower() == "true":
        return
    sys.modules.setdefault("mcp", None)  # type: ignore[arg-type]  # None in sys.modules: "import mcp" raises ImportError


def serve() -> None:
    """Serve the app on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT (127.0.0.1:7860) until interrupted."""
    keep_unused_stacks_out()
    from wolfeclick.ui.app import launch

    launch()
