# Two commands on a fresh machine:  `make run` (install + start the app)  and  `make test` (install + run the tests).
# Both are idempotent: installs happen once, and again only when requirements.txt / package-lock.json change.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup run test lint browser bench clean

setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

node_modules/.installed: package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Headless Chromium for the browser test (Debian's package; needs root, as in CI and the dev machines).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

run: setup
	$(PY) app.py

lint: setup
	$(VENV)/bin/ruff check wolfeclick tests scripts app.py

# Two pytest workers (pytest-xdist), each test file whole on one worker (module fixtures such as the app server and
# the Ray instance are started once per file). TEST_WORKERS=0 runs the suite in this process, one file after another.
TEST_WORKERS ?= 2
test: setup browser lint
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

clean:
	rm -rf $(VENV) node_modules
