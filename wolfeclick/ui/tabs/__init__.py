"""One module per tab, each with ``build(ctx)`` and module-level handlers that return ``{component: update}``."""
