#!/usr/bin/env bash
# State at scale (issue 28): the server's open, edit and restart at 1k, 100k and 1M notes, beside
# the jansson echo and Python's json.loads of the same line, in one run.
#   bench/scale/run.sh [SERVER...]   (default: the release build; give two to compare builds)
# SIZES=1000,100000 EDITS=2000 OUT=scale.json bench/scale/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/echo" "$root/bench/server/echo.c" -ljansson
servers=()
for s in "${@:-$root/.build/release/stateserver}"; do servers+=(--server "$s"); done
exec python3 "$here/scale.py" "${servers[@]}" --echo "$work/echo" \
  --sizes "${SIZES:-1000,100000,1000000}" --edits "${EDITS:-2000}" ${OUT:+--out "$OUT"}
