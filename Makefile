# FALSIFY: every target sets itself up on a fresh machine (Python 3.11, pip, npm, apt).
# make demo  - create .venv, install pinned requirements, prepare the offline model, run the demo
# make test  - the same set-up plus the viewer's assets and Chromium, then the whole test suite
# make test-fast - the unit tests (tests/unit), for the inner loop
# make bench - the same set-up, then the MQuAKE-hard revision and recall-QA and deep-graph benchmarks, the
#              mutation gate over the pure rules and 300+ crash trials
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.stamp-install
UI_STAMP := ui/node_modules/.stamp-install
MODEL_STAMP := $(VENV)/.stamp-model

.PHONY: demo test test-fast bench setup ui browser clean lint format bytecode

setup: $(STAMP) $(MODEL_STAMP)

# The pinned set is installed by uv (pinned below, from the same registry): it downloads and unpacks in
# parallel and compiles the bytecode on every core, about 30 s in place of pip's 2 min on two cores. The
# bytecode must exist before the tests, whose child processes never write it. Where uv cannot run or
# cannot reach the registry (an index configured for pip only, say), pip installs the same set, then
# compileall (which exits 1 when a package ships a file this Python cannot compile; pip ignores those too).
# uv copies out of its cache (~/.cache/uv) rather than linking, so the venv never shares files with it.
# Then the editable install in setuptools' "compat" mode: a plain path entry (.pth) a type checker can
# follow (the default mode's import hook is invisible to mypy: docs/python-api.md, "Type checking")
UV := uv==0.13.9
PIP := $(PY) -m pip install --disable-pip-version-check -q
$(STAMP): requirements.txt requirements.lock pyproject.toml Makefile
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@{ $(PIP) $(UV) && $(PY) -m uv pip install --python $(PY) -q --link-mode copy --compile-bytecode \
		-r requirements.txt -c requirements.lock; } || { \
	  echo "uv could not install the requirements; pip installs them instead (a few minutes)"; \
	  $(PIP) --no-compile -r requirements.txt -c requirements.lock && \
	  { $(PY) -m compileall -qq -j 0 $(VENV)/lib >/dev/null || true; }; }
	$(PIP) --no-deps --no-build-isolation -e . --config-settings editable_mode=compat
	@touch $(STAMP)

# the model checked and linked (memory_core.store.embedder.main); run as a function, not with -m, since
# importing memory_core imports that module first (runpy would warn that it runs a module twice)
$(MODEL_STAMP): $(STAMP)
	$(PY) -c 'import sys; from memory_core.store.embedder import main; sys.exit(main())'
	@touch $(MODEL_STAMP)

# ui/ is the npm project of the viewer's browser libraries; the allow-listed UMD builds are then
# copied into memory_core/web/static/vendor/ (git-ignored package data, so `pip install .` serves them)
ui: $(UI_STAMP)
	@$(PYTHON) memory_core/web/vendor.py

$(UI_STAMP): ui/package.json ui/package-lock.json
	cd ui && npm ci --no-audit --no-fund --loglevel=error
	@touch $(UI_STAMP)

browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the viewer's browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

demo: setup ui
	$(PY) main.py --demo

# The same store-contract, revision, undo, check/repair, crash-trial (a sample) and MQuAKE quick tests
# again on PostgreSQL + pgvector, plus the backend's own tests (journal, crash sample, several
# processes on one database): tests/conftest.py
# starts a PostgreSQL 16 + pgvector from the pgserver wheel (initdb as the system user
# falsify-pg, created with useradd when missing) on a free loopback port and stops it after.
PG_TESTS := tests/integration/test_cognee_contract.py tests/integration/test_revision.py tests/system/test_undo.py tests/system/test_bench_quick.py \
            tests/system/test_check_repair.py tests/system/test_fault_injection.py \
            tests/integration/test_postgres_store.py tests/integration/test_postgres_journal.py \
            tests/system/test_postgres_multiprocess.py tests/integration/test_validity_api.py tests/system/test_validity_cli.py \
            tests/system/test_epochs.py tests/system/test_offline_candidates.py tests/integration/test_cancellation.py \
            tests/integration/test_settled_in_time.py tests/integration/test_lifecycle_attach_postgres.py

# Two pytest-xdist workers, each test file on one worker (module fixtures build their roots once);
# the CLI processes are forked from tests/support/forkserver.py (cognee's third-party imports paid once
# per worker). Files are handed out longest first (tests/conftest.py HEAVY_FIRST; xdist keeps that
# order with --no-loadscope-reorder). conftest prints every file's seconds at the end.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The project's own modules compiled once before the tests: the editable install leaves them as
# sources, and the suite's CLI, server and driver processes (over 200 forked in one run) run with
# PYTHONDONTWRITEBYTECODE=1 (tests/support/harness.py clean_env; this machine's environment sets
# it too), so each compiled memory_core again (0.15-0.3 s of CPU a process, measured). __pycache__
# is ignored by git.
bytecode: setup
	$(PY) -m compileall -q -j 0 memory_core bench tests examples main.py > /dev/null

test: setup lint ui browser docs bytecode
	$(PYTEST)
	FALSIFY_TEST_BACKEND=postgres $(PYTEST) $(PG_TESTS)

# the reference site (docs/, mkdocs.yml) into site/; --strict: a broken link or anchor, or a page
# missing from nav, fails the build
.PHONY: docs
docs: setup
	$(PY) -m mkdocs build --strict --quiet -d site

# the linter (ruff: pyflakes, syntax errors, line length; configured in pyproject.toml), the formatter's
# check (the tree as `make format` writes it), the
# dead-code check (vulture; tests/support/dead_code_allow.py lists what only a library calls) and the
# type check of the package's modules listed in tests/typed/checked.txt (mypy, incremental: 5 s of CPU
# cold, 16 s wall on the two cores under load 10; under 1 s once its cache holds them)
TYPE_CHECKED = $(shell sed -e 's/\#.*//' tests/typed/checked.txt)
lint: setup
	$(PY) -m ruff check --quiet .
	$(PY) -m ruff format --check --quiet .
	$(PY) -m vulture
	$(PY) -m mypy --config-file tests/typed/mypy.ini --incremental --cache-dir .mypy_cache/lint $(TYPE_CHECKED)

# rewrite the tree as the linter wants it (the formatter, then the linter's safe fixes)
format: setup
	$(PY) -m ruff format --quiet .
	$(PY) -m ruff check --quiet --fix .

# the inner loop: the pure and in-process tests (everything not marked slow), embedded backend
test-fast: setup
	$(PYTEST) tests/unit

bench: setup
	$(PY) -m bench.revision_speed
	$(PY) -m bench.mquake --full --out bench/results/full.json
	$(PY) -m bench.mquake --scenario all_edits --batch
	$(PY) -m bench.recall_qa --out bench/results/recall_qa.json
	$(PY) -m bench.judge
	$(PY) -m bench.mcp
	$(PY) -m bench.startup
	$(PY) -m bench.loop_stall
	$(PY) -m bench.soak --revisions 3000
	$(PY) -m bench.deep --out bench/results/deep.json
	$(PY) -m bench.mutants --out bench/results/mutants.json
	FALSIFY_FAULT_TRIALS=300 $(PY) -m pytest -q tests/system/test_fault_injection.py

clean:
	rm -rf $(VENV) ui/node_modules site .falsify .falsify-demo
