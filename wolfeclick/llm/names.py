"""Names shared by the model code's layers: here so the compute modules (scoring, generation) and the loader that
sits above them need not import each other. Imports nothing."""

from __future__ import annotations

__all__ = ["BASE_ADAPTER"]

BASE_ADAPTER = "__base__"
"""peft's name for 'no adapter' in a mixed-adapter batch."""
