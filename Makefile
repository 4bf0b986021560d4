# stateserver: `make run` sets everything up and starts the server; `make test` sets
# everything up and runs every test of every language. See README.md.
SHELL := /bin/bash
# No "Entering directory" lines: `make run` inside another make must still print protocol only.
MAKEFLAGS += --no-print-directory
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT_FLAGS := --disable-index-store
# A static runtime starts in half the time and with a third less memory (issue 5's start-up and
# idle-memory targets need it). `-static-executable` links libc, libstdc++, jansson and SQLite in
# too (issue 11): no dynamic loader, no 41,000 start-up relocations, no shared library mapped
# whole around the few pages used; idle memory 11.4 -> 8.2 MB, start-up about half (measured
# with bench/server/drive.py startup, alternated). The price: the executable is not
# position-independent (no address randomisation of its own code), and glibc's user and group
# look-ups (home directory without $HOME) load the system's NSS modules at run time. The
# linker's warnings about that ("requires at runtime the shared libraries...") and about
# "mktemp is dangerous" come from glibc and the toolchain's static archives, not from our code.
#
# `-disable-concrete-type-metadata-mangled-name-accessors`: the compiler reaches a concrete
# generic type (`KeyedEncodingContainer<CodingKeys>`, `IdentifiedArray<Note>`, `Store<F>`) through
# its metadata accessor, which passes the conformances it knows, instead of through its mangled
# name, whose first use makes the runtime look each requirement up by scanning every protocol
# conformance in the binary: start-up took half the time, and an increment costs no more
# (docs/architecture.md, "Release flags").
#
# `-enforce-exclusivity=unchecked` drops the run-time exclusivity checks (the compile-time ones
# stay) from the release binary only: each access to a class's stored `var` cost a
# `swift_beginAccess` with a thread-local access set, a tenth of the main thread's work per
# pipelined increment (docs/architecture.md, "Release flags"). Debug builds, and with them the
# whole Swift test suite, keep the checks, so an overlapping access is still caught where it is
# made.
RELEASE_FLAGS := -c release $(SWIFT_FLAGS) --static-swift-stdlib -Xswiftc -static-executable \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
	-Xswiftc -enforce-exclusivity=unchecked
BIN := .build/release/stateserver
# Cross-module optimization of JSON and StateKit in release builds (Package.swift says why it is
# behind a variable); exported so that every build started from here agrees on it.
export STATESERVER_CROSS_MODULE := 1
PYTHON ?= python3
# `make install` copies the binary (and the shell client) to $(PREFIX)/bin.
PREFIX ?= $(HOME)/.local
export STATESERVER_TESTDATA ?= $(abspath ../shared/testdata)

.PHONY: setup build release run install test swift-test py-test node-test example-test bench \
	fuzz schemas bindings screenshots format lint clean

setup:
	@scripts/setup.sh

build: setup
	swift build $(SWIFT_FLAGS)

# Products by name: StateKitTesting imports Testing, which a plain release build cannot find.
release: setup
	swift build $(RELEASE_FLAGS) --product stateserver
	swift build $(RELEASE_FLAGS) --product json-tool

# stdout is the server's alone (a pipe into `make run` reads protocol lines only): the set-up's
# and the build's output, and make's own echo of them, go to stderr. The build reads no stdin,
# which belongs to the server.
run:
	@$(MAKE) --no-print-directory release </dev/null >&2
	@exec $(BIN) $(ARGS)

install: release
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 755 $(BIN) "$(DESTDIR)$(PREFIX)/bin/stateserver"
	install -m 755 clients/shell/stateserver-msg "$(DESTDIR)$(PREFIX)/bin/stateserver-msg"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; \
	  *) echo "install: $(PREFIX)/bin is not on PATH; add it (export PATH=\"$(PREFIX)/bin:\$$PATH\")" >&2;; esac

# No --disable-index-store for tests: on Swift 6.3.1 Linux test discovery reads the index store.
test: setup lint
	swift build --build-tests
	swift test --skip-build
	$(MAKE) --no-print-directory example-test
	$(MAKE) --no-print-directory release
	$(MAKE) --no-print-directory py-test node-test

# Examples/Timers depends on this package by path, as a user's application would: building it,
# running its tests and asking its five-line executable for its name keep the library's public
# surface from breaking unnoticed; its executable must block signals from its first instruction
# (the CStartupSignals product; tests/test_startup_signals_linked.py checks the symbol too).
EXAMPLE := Examples/Timers
example-test:
	cd $(EXAMPLE) && swift build --build-tests && swift test --skip-build
	@out=$$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize"}' \
	  | $(EXAMPLE)/.build/debug/timers --ephemeral); \
	  case "$$out" in *'"server":{"name":"timers","version":"1.0.0"}'*) echo "example: timers serves";; \
	  *) echo "example: unexpected answer: $$out" >&2; exit 1;; esac
	@$(EXAMPLE)/.build/debug/timers --version | grep -qx 'timers 1.0.0'
	@$(EXAMPLE)/.build/debug/timers --nope 2>/dev/null; test $$? -eq 2
	@readelf -SW $(EXAMPLE)/.build/debug/timers | grep -q '\.preinit_array' \
	  || { echo "example: timers links no CStartupSignals (.preinit_array)" >&2; exit 1; }

# pytest's exit code 5 (no test collected) fails here, as it must. The client comes from
# this checkout through PYTHONPATH, never from an install that may point at another clone.
py-test:
	PYTHONPATH=$(abspath clients/python) STATESERVER_BIN=$(abspath $(BIN)) JSON_TOOL_BIN=$(abspath .build/release/json-tool) \
	  $(PYTHON) -m pytest -q tests

node-test:
	@if [ -d clients/typescript/test ]; then STATESERVER_BIN=$(abspath $(BIN)) node --test clients/typescript/test/; fi

# The benchmarks build with the same flags, so they measure the binary `make run` starts.
# Every benchmark runs even when one misses its target; the exit status reports the misses.
# bench/benchmarks_md.py runs each bench/*/run.sh, keeps its output in $(BENCH_OUT) and writes
# docs/benchmarks.md from this run (bench/README.md). `make bench BENCH=server` runs one (its page
# goes to $(BENCH_OUT)/benchmarks.md), and BENCH_SCALE=0.2 makes a quick run.
BENCH_OUT ?= .build/bench
BENCH ?=
bench: release
	@SWIFT_RELEASE_FLAGS="$(RELEASE_FLAGS)" $(PYTHON) bench/benchmarks_md.py run \
	  --results "$(abspath $(BENCH_OUT))" $(BENCH)

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

# The reference app's typed bindings, committed in the clients; tests/test_bindings.py fails
# when they drift.
bindings: release
	$(BIN) codegen --lang typescript --out clients/typescript/src
	$(BIN) codegen --lang python --out clients/python/stateserver

# docs/devtools.png, the devtools page in headless Chromium after a short session.
screenshots: release
	$(PYTHON) scripts/screenshots.py $(BIN)

SWIFT_SOURCES := Package.swift Sources Tests $(EXAMPLE)/Package.swift $(EXAMPLE)/Sources \
	$(EXAMPLE)/Tests

format:
	swift format --in-place --recursive $(SWIFT_SOURCES)

# The server links FoundationEssentials, never all of Foundation: Foundation and its ICU data
# cost 3.7 MB of idle memory and a millisecond of every start (issue 11). json-tool may.
lint:
	swift format lint --strict --recursive $(SWIFT_SOURCES)
	@if grep -rnE --include='*.swift' '^(@[A-Za-z_]+ +)*import +(Foundation|FoundationInternationalization)( |$$)' \
	  Sources/JSON Sources/StateKit Sources/Features Sources/StateServer Sources/stateserver; then \
	  echo "lint: the server imports FoundationEssentials, not Foundation (Makefile, lint)" >&2; \
	  exit 1; fi

clean:
	rm -rf .build
