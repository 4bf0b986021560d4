#!/usr/bin/env bash
# JSON Patch benchmark (issue 3): diff of two 100,000-element keyed arrays that differ in one
# element, and apply of the result, Swift against Python's jsonpatch on the same pair, in one
# run; prints both times and the ratios. Target: diff >= 100x faster than jsonpatch.make_patch.
#
# Env: JSON_TOOL_BIN (a release json-tool; built here when unset), PATCH_BENCH_ELEMENTS,
# PATCH_BENCH_ROUNDS, PATCH_BENCH_TARGET (see bench.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/opt/swift/usr/bin:$PATH

tool=${JSON_TOOL_BIN:-}
if [ -z "$tool" ]; then
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product json-tool >"$log" 2>&1 || {
    cat "$log" >&2
    exit 1
  }
  tool=.build/release/json-tool
fi
exec "${PYTHON:-python3}" bench/patch/bench.py "$tool"
