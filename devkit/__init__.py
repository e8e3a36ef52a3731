"""What the tests and the scripts share, and nothing the product needs (not installed with the package).

``samples`` (recordings to test and measure with), ``appserver`` (a real ``app.py`` on a free 127.0.0.1 port),
``browser`` (headless Chromium over the DevTools protocol), ``server_logs`` (logs in a Showdown server's shape) and
``llm_fixtures`` (a tiny model, tokenizer and adapter built here). Tests import it from the checkout (pytest's
``pythonpath``); a script puts the checkout first on ``sys.path`` once and imports ``devkit.*``.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The checkout."""
