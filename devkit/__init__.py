"""What the tests and the scripts share, and nothing the product needs (not installed with the package).

``samples`` (recordings to test and measure with), ``appserver`` (a real ``app.py`` on a free 127.0.0.1 port),
``browser`` (headless Chromium over the DevTools protocol), ``server_logs`` (logs in a Showdown server's shape),
``llm_fixtures`` (a tiny model, tokenizer and adapter built here), and what writes test data: ``make_interop_fixtures``
(tests/data/interop/: ``python -m devkit.make_interop_fixtures``), ``v1_streams`` and ``v1_reference`` (the
``wolfeclick-v1`` golden data: their docstrings say how). Tests import it from the checkout (pytest's
``pythonpath``); a script or benchmark run as ``python -m scripts.NAME`` or ``python -m benchmarks.NAME`` from the
checkout imports ``devkit.*`` with no ``sys.path`` edit.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The checkout."""
