#!/usr/bin/env bash
# The server benchmark (issues 5 and 11), side by side in one run: stateserver against the C jansson
# echo (bench/server/echo.c, the floor of a jansson-based design) and the Python jsonpatch
# peer (../shared/bench/peer_python.py, what a Python developer would write). Prints figures
# and ratios, then instructions per increment when valgrind is installed. Env: STATESERVER_BIN
# (default .build/release/stateserver, built if missing), STATESERVER_SHARED (default
# <repo>/../shared), BENCH_SCALE (default 1; 0.2 for a quick run).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
shared="${STATESERVER_SHARED:-$root/../shared}"
bin="${STATESERVER_BIN:-$root/.build/release/stateserver}"
if [ ! -x "$bin" ]; then
  (cd "$root" && swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product stateserver)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/echo" "$here/echo.c" -ljansson
peer="$shared/bench/peer_python.py"
[ -f "$peer" ] || { echo "missing $peer (set STATESERVER_SHARED)" >&2; exit 1; }
# The round trip is timed by the shared C driver, so the driver adds next to nothing.
[ -f "$shared/bench/latency.c" ] || { echo "missing $shared/bench/latency.c" >&2; exit 1; }
cc -O2 -o "$work/latency" "$shared/bench/latency.c"
status=0
python3 "$here/report.py" --server "$bin" --echo "$work/echo" --peer "$peer" \
  --latency "$work/latency" || status=$?
# Instructions and reference-counting calls per increment (callgrind) do not move with the
# machine's load; skipped without valgrind.
if command -v valgrind >/dev/null; then
  echo "instructions and reference-counting calls per pipelined increment (callgrind;" \
    "thread 1 is the main thread)"
  python3 "$here/instructions.py" --server "$bin" --echo "$work/echo" --lines "$(python3 -c \
    "print(max(1000, int(20000 * float('${BENCH_SCALE:-1}'))))")"
fi
exit $status
