# Two-command set-up on a fresh machine with Python 3.11:
#   make run    installs into .venv and runs a default tournament
#   make test   installs into .venv (with the test extra) and runs the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache

.PHONY: run test install bench clean-cache

$(BIN)/kc-sim: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,rl]"
	touch $@

install: $(BIN)/kc-sim

run: install
	$(BIN)/kc-sim tournament --agents greedy,merger

test: install
	$(BIN)/python -m pytest -n 2 -q

bench: install
	$(BIN)/kc-sim bench --cold --agents

clean-cache:
	rm -rf $(NUMBA_CACHE_DIR)
