# nicbench: one command sets up and runs the main job, one sets up and runs all tests.
#
#   make run     venv + native build, then the main job (a trace, then every study: nicbench reproduce --all)
#   make test    venv + native build + peer tools, then ruff, cargo test, pytest (2 workers), the studies' gates
#                and the wheel's smoke test (test-wheel)
#   make wheel   the installable wheel, build/wheels/nicbench-*.whl (README: Install)
#   make bench   benchmark figures (see BENCHMARKS.md; also bench-harness, bench-flows, bench-startup;
#                drivers in benches/)
#
# Nothing global is needed beyond python3 (3.10+), cargo and a C compiler:
# everything else goes into ./.venv, pinned by requirements/dev.lock.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.deps-installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test lint test-rust test-python test-gates test-wheel wheel develop peers bench bench-harness bench-flows bench-startup reproduce lock clean

run: develop
	mkdir -p build
	nicbench gen --flows 10000 --size 1500 --rate 100Gbps --duration 100ms -o build/trace.pcap
	nicbench pcap info build/trace.pcap
	nicbench rss build/trace.pcap --queues 8
	nicbench reproduce --all

test: lint develop peers test-rust test-python test-gates test-wheel

# The Python lint (ruff, pinned in requirements/dev.lock; rules in pyproject.toml). First: it needs
# no build and fails in seconds. The layout is ruff's formatter's (`ruff format` rewrites it).
lint: $(STAMP)
	$(BIN)/ruff check python benches scripts studies
	$(BIN)/ruff format --check python benches scripts studies

# The layout check runs where rustfmt is installed (rustup's default profile has it); a fresh
# machine without it still runs the tests.
test-rust:
	if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; else echo "rustfmt not installed: layout not checked"; fi
	cargo test

# Two pytest workers (pytest-xdist), one test file at a time each: a file's module fixtures (an OVS
# daemon, the robustness table, a Dask cluster) are built once, on one worker. Files go out in
# collection order (xdist would otherwise send files with few tests last, the longest single tests
# among them, leaving one worker idle at the end). Two, not `-n auto`: the tests start processes
# of their own, and this is the size of the project's machines.
test-python: develop
	$(BIN)/pytest -q -n 2 --dist loadfile --no-loadscope-reorder python/tests

# The quick studies as a gate: every reference value and claim passes or is a declared known miss
# (studies/<study>/known_misses.toml); pam21 takes minutes and runs with `make reproduce`.
# The README's "Current figures" of these studies are checked against the same run.
test-gates: develop
	mkdir -p build
	nicbench reproduce ovs-offload argus100g offpath pam21 --strict --json --results build/gate-results \
		--reports build/gate-reports > build/gate-reproduce.json
	$(BIN)/python scripts/check_readme_figures.py build/gate-reproduce.json ovs-offload argus100g offpath pam21

# The wheel users install (profiles and studies inside: pyproject.toml, nicbench.data_files). Built
# with the interpreter `make develop`'s maturin names: PYO3_PYTHON is part of cargo's fingerprint,
# and another spelling of the same interpreter (python3) would rebuild pyo3 and the module (~3 min)
# in both directions; so the wheel reuses develop's release build and adds seconds.
WHEELS := build/wheels

wheel: develop
	rm -rf $(WHEELS)
	$(BIN)/maturin build --release --quiet -i $(abspath $(BIN))/python -o $(WHEELS)

# The wheel installed into a fresh venv outside the checkout, its commands run from there
# (scripts/test-wheel.sh): it must carry everything it reads. Dependencies come from pip (cache).
test-wheel: wheel
	bash scripts/test-wheel.sh $(WHEELS)/nicbench-*.whl

$(STAMP): requirements/dev.lock
	$(PYTHON) -m venv $(VENV)
	@echo "make: installing the pinned Python tools into $(VENV) (requirements/dev.lock)"
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements/dev.lock
	touch $(STAMP)

# Builds the native module in release mode and installs the package (editable) into the venv.
develop: $(STAMP)
	@echo "make develop: building the native module (Rust, release) into $(VENV); the first build takes several minutes"
	$(BIN)/maturin develop --release --quiet

# Real peer tools the tests compare against (tcpdump, dpdk-dev, ...). Best effort outside CI
# (tests skip with a message naming a missing tool); under CI=true it fails naming any peer
# package it could not install, as the tests that need it would.
peers:
	bash scripts/install-peers.sh

bench: develop
	$(BIN)/python benches/foundation.py

bench-harness: develop
	$(BIN)/python benches/harness.py

# How long `nicbench --help` and friends take to start (minimum and median of 10 runs).
bench-startup: develop
	$(BIN)/python benches/startup.py

# The flow meter vs Argus, nfpcapd and NFStream (installed into the venv on demand) on the same pcaps.
bench-flows: develop peers
	$(BIN)/python benches/flows.py

reproduce: develop
	mkdir -p build
	nicbench reproduce --all --json > build/reproduce-all.json
	$(BIN)/python scripts/check_readme_figures.py build/reproduce-all.json pam21 ovs-offload argus100g offpath

lock:
	rm -rf build/lockvenv
	$(PYTHON) -m venv build/lockvenv
	build/lockvenv/bin/pip install --quiet -r requirements/dev.in
	{ echo "# Pinned, resolved Python environment for development, tests and the CLI."; \
	  echo "# Generated from requirements/dev.in by 'make lock' (pip freeze of a fresh venv)."; \
	  build/lockvenv/bin/pip freeze; } > requirements/dev.lock

clean:
	rm -rf $(VENV) build target
