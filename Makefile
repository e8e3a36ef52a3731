# Two commands on a fresh machine:  `make run` (install + start the app)  and  `make test` (install + run the tests).
# Both are idempotent: installs happen once, and again only when requirements.txt or pyproject.toml change.
# requirements.txt is the one lock: `make run` installs the package with the app's extra (llm) constrained to it,
# `make test` installs all of it (the app, train, ray and dev extras). The simulator's Node packages are installed by
# `wolfeclick setup` from the lock inside the package (wolfeclick/sim/showdown/) into ~/.cache/wolfeclick.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: setup setup-app simulator run test test-fast test-busy lint browser clean

setup: $(VENV)/.installed simulator
setup-app: $(VENV)/.app-installed simulator

$(VENV)/.app-installed: requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) -c requirements.txt -e ".[llm]"
	touch $@

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) -r requirements.txt
	$(PIP) --no-deps -e .
	touch $@ $(VENV)/.app-installed

simulator:
	@$(PY) -m wolfeclick setup >/dev/null

# Headless Chromium for the browser test (Debian's package; needs root, as in CI and the dev machines).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

run: setup-app
	$(PY) app.py

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check wolfeclick tests scripts server devkit benchmarks app.py
	$(VENV)/bin/mypy

# Two pytest workers (pytest-xdist), each test file whole on one worker (module fixtures such as the app server and
# the Ray instance are started once per file). TEST_WORKERS=0 runs the suite in this process, one file after another.
# PYTHONDONTWRITEBYTECODE is emptied for the run (containers set it: this project's sandbox does):
# with it, every Python process the suite starts (CLI runs, apps, env and Ray workers) compiled the package anew, and
# each pytest worker rewrote every test file's asserts anew (about 4 CPU s of a worker's 14 s collection).
TEST_WORKERS ?= 2
test: setup browser lint
	PYTHONDONTWRITEBYTECODE= HF_HUB_OFFLINE=1 $(PY) -m pytest -q $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

# While editing: ruff, then the pure tier only (`-m fast`: the tests that start no simulator, app, browser, model stack,
# Ray, pip or other program; tests/conftest.py sets the tiers and fails a fast test that starts one anyway).
test-fast: $(VENV)/.installed
	$(VENV)/bin/ruff check wolfeclick tests scripts server devkit benchmarks app.py
	PYTHONDONTWRITEBYTECODE= HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m fast

# The suite with every core kept busy by other work (scripts/test_under_load.sh): it must pass as it does quiet.
test-busy: setup browser
	bash scripts/test_under_load.sh

clean:
	rm -rf $(VENV)
