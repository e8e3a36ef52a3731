"""Benchmarks with one harness (``benchmarks.harness``): each module here measures one thing, writes one JSON result
a run under ``benchmarks/results/`` and renders its section of docs/benchmarks.md (``python -m benchmarks``).

Run from the checkout: ``.venv/bin/python -m benchmarks.NAME --help``. Not installed with the package (like
``devkit/``); the tests import it from the checkout (pytest's ``pythonpath``)."""
