#!/usr/bin/env bash
# A soak of mixed load (effects, stores opened and closed, subscriptions, a slow reader) for
# SECONDS (default 180): memory must come back to its baseline and every request be answered.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${STATESERVER_BIN:-.build/release/stateserver}"
[ -x "$BIN" ] || { echo "build the release binary first (make release), or set STATESERVER_BIN" >&2; exit 1; }
python3 bench/soak/soak.py "$BIN" --seconds "${SECONDS_OF_SOAK:-180}"
