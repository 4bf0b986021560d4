#!/usr/bin/env bash
# The devtools benchmark (issue 13), side by side in one run: the core's pipelined throughput
# with devtools attached (its page open: a WebSocket reader) against a core alone, after both
# took 10,000 actions/s for 10 s. Target: at least 0.8x. Env: STATESERVER_BIN (default
# .build/release/stateserver, built if missing), BENCH_SCALE (default 1; 0.2 for a quick run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${STATESERVER_BIN:-$root/.build/release/stateserver}"
if [ ! -x "$bin" ]; then
  (cd "$root" && swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product stateserver)
fi
export PYTHONPATH="$root/clients/python${PYTHONPATH:+:$PYTHONPATH}"
exec python3 "$here/bench.py" "$bin"
