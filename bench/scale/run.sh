#!/usr/bin/env bash
# State at scale (issue 28): the server's open, edit, rewind and restart at 1k, 100k and 1M notes, beside
# the jansson echo and Python's json.loads of the same line, in one run. Targets, at the largest
# size against the smallest, on the server's CPU time per pipelined edit: one edit at most 1.5x
# (in memory, with history, persisted), history at most 1.2x none; the first answer after a
# restart with the largest store persisted within 1 s; and a rewind of the largest, whose patch
# carries every note, adding less than the JSON's size to the peak, within 1.5x json.loads.
# Env: bench/scale/run.sh [SERVER...]   (default: $STATESERVER_BIN, else the release build; give
# two to compare builds). SIZES=1000,100000 EDITS=10000 OUT=scale.json bench/scale/run.sh;
# BENCH_SCALE below 1 (a quick run) leaves out 1,000,000 unless SIZES says otherwise.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/echo" "$root/bench/server/echo.c" -ljansson
servers=()
for s in "${@:-${STATESERVER_BIN:-$root/.build/release/stateserver}}"; do servers+=(--server "$s"); done
sizes="1000,100000,1000000"
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1 else 1)" "${BENCH_SCALE:-1}"; then
  sizes="1000,100000"
fi
exec python3 "$here/scale.py" "${servers[@]}" --echo "$work/echo" \
  --sizes "${SIZES:-$sizes}" --edits "${EDITS:-10000}" ${OUT:+--out "$OUT"}
