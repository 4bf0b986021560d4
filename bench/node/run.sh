#!/usr/bin/env bash
# The Node client's latency (issue 14), side by side in one run: dispatch -> Mirror onChange
# through clients/typescript against raw child_process doing the same work (write the line,
# split stdout into lines, JSON.parse, apply the patch to a local copy, call a render). Prints
# p50 / p99 of both and their ratio; the target is the client's p99 within 2x of raw.
# Env: STATESERVER_BIN (default .build/release/stateserver, built if missing), BENCH_SCALE
# (default 1; 0.2 for a quick run), NODE_PROFILE=DIR (writes V8 CPU profiles there).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${STATESERVER_BIN:-$root/.build/release/stateserver}"
if [ ! -x "$bin" ]; then
  (cd "$root" && swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product stateserver)
fi
profile=()
[ -n "${NODE_PROFILE:-}" ] && profile=(--cpu-prof --cpu-prof-dir "$NODE_PROFILE")
STATESERVER_BIN="$bin" exec node "${profile[@]}" "$here/latency.mjs"
