# stateserver: `make run` sets everything up and starts the server; `make test` sets
# everything up and runs every test of every language. See README.md.
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT_FLAGS := --disable-index-store
# A static runtime starts in half the time and with a third less memory (issue 5's start-up and
# idle-memory targets need it). The linker's "mktemp is dangerous" warning comes from the
# toolchain's own static Foundation archive, not from our code.
RELEASE_FLAGS := -c release $(SWIFT_FLAGS) --static-swift-stdlib
BIN := .build/release/stateserver
PYTHON ?= python3
export STATESERVER_TESTDATA ?= $(abspath ../shared/testdata)

.PHONY: setup build release run test swift-test py-test node-test bench fuzz schemas format lint clean

setup:
	@scripts/setup.sh

build: setup
	swift build $(SWIFT_FLAGS)

# Products by name: StateKitTesting imports Testing, which a plain release build cannot find.
release: setup
	swift build $(RELEASE_FLAGS) --product stateserver
	swift build $(RELEASE_FLAGS) --product json-tool

run: release
	$(BIN) $(ARGS)

# No --disable-index-store for tests: on Swift 6.3.1 Linux test discovery reads the index store.
test: setup lint
	swift build --build-tests
	swift test --skip-build
	$(MAKE) --no-print-directory release
	$(MAKE) --no-print-directory py-test node-test

# pytest's exit code 5 (no test collected) fails here, as it must. The client comes from
# this checkout through PYTHONPATH, never from an install that may point at another clone.
py-test:
	PYTHONPATH=$(abspath clients/python) STATESERVER_BIN=$(abspath $(BIN)) JSON_TOOL_BIN=$(abspath .build/release/json-tool) \
	  $(PYTHON) -m pytest -q tests

node-test:
	@if [ -d clients/typescript/test ]; then STATESERVER_BIN=$(abspath $(BIN)) node --test clients/typescript/test/; fi

# The benchmarks build with the same flags, so they measure the binary `make run` starts.
# Every benchmark runs even when one misses its target; the exit status reports the misses.
bench: release
	@export SWIFT_RELEASE_FLAGS="$(RELEASE_FLAGS)"; missed=""; \
	for b in bench/*/run.sh; do echo "== $$b"; "$$b" || missed="$$missed $$b"; done; \
	if [ -n "$$missed" ]; then echo "below target or failed:$$missed"; exit 1; fi

# A long seeded fuzz of the release binary (scripts/fuzz.py): every line followed by a probe, every
# reply checked against the JSON-RPC oracle. `make fuzz N=10000000 SEED=7`; a short run is in the
# tests (tests/test_robustness_fuzz_script.py).
N ?= 100000
SEED ?= 1
fuzz: release
	$(PYTHON) scripts/fuzz.py --bin $(BIN) --lines $(N) --seed $(SEED)

# schema/features/*.schema.json, exported from the Swift types through the release binary;
# tests/test_feature_schemas.py fails when they drift.
schemas: release
	$(PYTHON) scripts/export-schemas.py $(BIN)

format:
	swift format --in-place --recursive Package.swift Sources Tests

lint:
	swift format lint --strict --recursive Package.swift Sources Tests

clean:
	rm -rf .build
