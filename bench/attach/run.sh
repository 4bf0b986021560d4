#!/usr/bin/env bash
# The attach benchmark (issue 12), side by side in one run: stdio throughput of pipelined
# counter increments with no attached client, and with one attached client that reads nothing.
# Target: with the stalled client at least 0.9x without. Env: STATESERVER_BIN (default
# .build/release/stateserver, built if missing), BENCH_SCALE (default 1; 0.2 for a quick run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${STATESERVER_BIN:-$root/.build/release/stateserver}"
if [ ! -x "$bin" ]; then
  (cd "$root" && swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product stateserver)
fi
exec python3 "$here/stalled.py" "$bin"
