# The two commands of the README: `make run` (the main job, offline) and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test setup system lint typecheck

# The venv is (re)built when it is missing or pyproject.toml changed.
$(BIN)/memdir: pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,alfworld]'
	@touch $@

system:
	@bash scripts/setup-system.sh

setup: system $(BIN)/memdir

# The conversational study, offline, on LoCoMo conv-50 (every variant the offline policies can
# play; the rest are recorded as skipped). Resumes runs/main if it exists.
run: setup
	$(BIN)/memdir eval --benchmark locomo --conversation conv-50 --variants all \
		--model offline --judge offline --out runs/main

test: setup
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: setup
	$(BIN)/mypy
