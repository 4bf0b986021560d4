#!/usr/bin/env bash
# The history benchmark (issue 9), side by side in one run: pipelined throughput and big-state
# edits with history off (--history 0), on (the default 1000) and recording (--record), and the
# resident memory each leaves. Env: STATESERVER_BIN (default .build/release/stateserver, built
# if missing), BENCH_SCALE (default 1; 0.2 for a quick run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${STATESERVER_BIN:-$root/.build/release/stateserver}"
if [ ! -x "$bin" ]; then
  (cd "$root" && swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product stateserver)
fi
exec python3 "$here/report.py" --server "$bin"
