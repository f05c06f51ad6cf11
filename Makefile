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

run: setup
	$(BIN)/memdir demo

test: setup
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: setup
	$(BIN)/mypy
