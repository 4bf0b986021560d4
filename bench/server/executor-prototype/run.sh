#!/usr/bin/env bash
# Issue 27's executor prototype: one NDJSON echo-like server in four designs, each timed one
# request at a time by ../shared/bench/latency.c against the C jansson echo, alternated in one
# run (../alternate.py --round-trip). Designs (first argument of `proto`):
#   a  reader thread + RunLoop.main.run()       (protorl: Foundation's run loop drains the main queue)
#   b  reader thread + dispatchMain()           (a libdispatch worker runs the main actor)
#   c  a global actor whose SerialExecutor the main thread's poll(2) loop drives (stdin + a pipe)
#   d  the main thread polls stdin and libdispatch's private main-queue handle (the old server)
# A second argument `effect` answers each request from a task whose continuation another thread
# resumes (a store's effect sending its result back). Env: ROUNDS (9), REQUESTS (4000).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shared="${STATESERVER_SHARED:-$here/../../../../shared}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$here" && swift build -c release --static-swift-stdlib --scratch-path "$work/build" >/dev/null)
bin="$work/build/release"
cc -O2 -o "$work/echo" "$here/../echo.c" -ljansson
cc -O2 -o "$work/latency" "$shared/bench/latency.c"
for effect in "" effect; do
  python3 "$here/../alternate.py" --round-trip "$work/latency" --rounds "${ROUNDS:-9}" \
    --requests "${REQUESTS:-4000}" echo="$work/echo" "d-private=$bin/proto d $effect" \
    "a-runloop=$bin/protorl a $effect" "b-dispatchMain=$bin/proto b $effect" \
    "c-loopactor=$bin/proto c $effect"
done
