# Two-command set-up on a fresh machine with Python 3.11:
#   make run    installs kc-sim into .venv and runs a default tournament
#   make test   adds the test, rl, train (torch, sb3), openspiel and serve extras, installs headless Chromium
#               and its driver for the browser tests (apt-get), and runs the test suite
# Every install is pinned by constraints.txt (make lock rewrites it; see the README).
# numba's compile cache is the one kc-sim itself uses (~/.cache/kc-sim/numba, or
# NUMBA_CACHE_DIR when set), so make, kc-sim, the tests and notebooks share it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: run test test-elsewhere install browser notebook bench lock clean-cache

$(BIN)/kc-sim: pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(PIP) -e .
	touch $@

# everything the tests use: the test tools, PettingZoo, torch with sb3-contrib, OpenSpiel, kc-sim serve
$(BIN)/pytest: $(BIN)/kc-sim
	$(PIP) -e ".[test,rl,train,openspiel,serve]"
	touch $@

install: $(BIN)/kc-sim

# the run compiles its own loop (reported as start-up); `kc-sim warm` compiles every built-in
# set ahead of time, which the first run does not need to wait for
run: install
	$(BIN)/kc-sim tournament --agents greedy,merger

# Headless Chromium and ChromeDriver for the replay pages' browser tests (tests/ui/test_browser.py),
# installed with apt-get when missing. Where that fails, make test stops here, saying so: the browser
# tests never skip unnoticed. KC_SIM_NO_BROWSER=1 skips them on purpose.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
BROWSER_HELP := chromium and chromedriver are needed for the browser tests: apt-get install chromium chromium-driver, \
	or set KC_SIM_NO_BROWSER=1 to skip those tests on purpose
browser:
	@if [ "$$KC_SIM_NO_BROWSER" = 1 ]; then echo "KC_SIM_NO_BROWSER=1: the browser tests are skipped"; \
	elif command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	else echo "installing chromium and chromium-driver with apt-get"; export DEBIAN_FRONTEND=noninteractive; \
		{ $(SUDO) apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
		|| { $(SUDO) apt-get update -q >/dev/null 2>&1 && $(SUDO) apt-get install -y -q chromium chromium-driver >/dev/null; }; } \
		&& command -v chromium >/dev/null && command -v chromedriver >/dev/null \
		|| { echo "make test: $(BROWSER_HELP)" >&2; exit 1; }; fi

test: $(BIN)/pytest browser
	$(BIN)/deptry .
	$(BIN)/lint-imports
	$(BIN)/ruff check --select F kc_sim agents tests experiments
	$(BIN)/python -m pytest -n 2 --dist worksteal --durations=25 -q

# The same suite in another user's environment (CI runs both): numba's cache where
# NUMBA_CACHE_DIR says, HOME an empty folder, no terminal type, the C locale. A test that
# assumes the developer's environment fails here.
ELSEWHERE := $(CURDIR)/.elsewhere
test-elsewhere: $(BIN)/pytest browser
	rm -rf $(ELSEWHERE)/home && mkdir -p $(ELSEWHERE)/home
	HOME=$(ELSEWHERE)/home NUMBA_CACHE_DIR=$(ELSEWHERE)/numba TERM=dumb LC_ALL=C $(BIN)/python -m pytest -n 2 --dist worksteal --durations=25 -q

$(BIN)/jupyter-lab: $(BIN)/pytest
	$(PIP) -e ".[test,rl,train,openspiel,notebook]"
	touch $@

notebook: $(BIN)/jupyter-lab
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

bench: $(BIN)/pytest
	$(BIN)/kc-sim bench --cold --agents --tournament --env --judge

lock: $(BIN)/pytest
	$(PIP) pip-tools
	$(BIN)/pip-compile --all-extras --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links \
		--upgrade --quiet -o constraints.txt pyproject.toml

clean-cache:
	rm -rf "$${NUMBA_CACHE_DIR:-$$HOME/.cache/kc-sim/numba}"
