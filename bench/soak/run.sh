#!/usr/bin/env bash
# A soak of mixed load (effects, stores opened and closed, subscriptions, a slow reader) for
# SECONDS (default 180): memory must come back to within 4 MB of its baseline once quiet, and
# every request be answered. --heap adds malloc's own figures (gdb), to tell a leak from memory
# the allocator keeps.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${STATESERVER_BIN:-.build/release/stateserver}"
[ -x "$BIN" ] || { echo "build the release binary first (make release), or set STATESERVER_BIN" >&2; exit 1; }
python3 bench/soak/soak.py "$BIN" --seconds "${SECONDS_OF_SOAK:-180}" --heap
