#!/usr/bin/env bash
# The reference app's durable persistence: notes edits persisted against in memory, the final
# flush, and a dispatch round trip on a persistent store against an ephemeral one.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${STATESERVER_BIN:-.build/release/stateserver}"
[ -x "$BIN" ] || { echo "build the release binary first (make release), or set STATESERVER_BIN" >&2; exit 1; }
python3 bench/features/persistence.py "$BIN" "${NOTES:-100000}" "${EDITS:-10000}" "${ROUNDS:-5}"
