#!/usr/bin/env bash
# JSON layer benchmark: parse + serialize throughput of `JSON(parsing:)` + `write(to:)` on
# typical JSON-RPC lines, against a C program doing json_loadb + json_dumpb on the same lines,
# side by side in one run. Target: Swift >= 0.8x C. Also shows, for information, the Swift
# parser alone and the Swift parser with jansson's dump as the writer (why we write in Swift).
#
# Env: JSON_BENCH_LINES (default 1000000), JSON_BENCH_ROUNDS (default 3; best of each).
set -euo pipefail
cd "$(dirname "$0")/../.."

lines=${JSON_BENCH_LINES:-1000000}
rounds=${JSON_BENCH_ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 bench/json/make_lines.py "$lines" >"$work/lines.ndjson"
cc -O2 -o "$work/jansson_roundtrip" bench/json/jansson_roundtrip.c -ljansson
swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product json-tool >"$work/build.log" 2>&1 || {
  cat "$work/build.log" >&2
  exit 1
}
tool=.build/release/json-tool

# Correctness first: the lines are compact with shortest doubles (Python's json), so our
# round trip must give them back byte for byte.
"$tool" roundtrip "$work/lines.ndjson" >"$work/swift.out" 2>/dev/null
cmp -s "$work/swift.out" "$work/lines.ndjson" || {
  echo "json-tool roundtrip output differs from its input" >&2
  exit 1
}
rm -f "$work/swift.out"

# Each program prints "lines seconds lines_per_second errors=N" on stderr; keep the rate.
rate() { "$@" 2>&1 >/dev/null | awk '{ print $3 }'; }

best_c=0 best_cparse=0 best_swift=0 best_parse=0 best_jdump=0
for ((round = 1; round <= rounds; round++)); do
  c=$(rate "$work/jansson_roundtrip" "$work/lines.ndjson")
  cp=$(rate "$work/jansson_roundtrip" "$work/lines.ndjson" --parse-only)
  s=$(rate "$tool" roundtrip "$work/lines.ndjson")
  p=$(rate "$tool" roundtrip "$work/lines.ndjson" --parse-only)
  j=$(rate "$tool" roundtrip "$work/lines.ndjson" --writer jansson)
  ((c > best_c)) && best_c=$c
  ((cp > best_cparse)) && best_cparse=$cp
  ((s > best_swift)) && best_swift=$s
  ((p > best_parse)) && best_parse=$p
  ((j > best_jdump)) && best_jdump=$j
done

bytes=$(wc -c <"$work/lines.ndjson")
echo "JSON layer: parse + serialize of $lines JSON-RPC lines ($((bytes / lines)) bytes avg), best of $rounds"
printf '  %-44s %9d lines/s\n' "C: json_loadb + json_dumpb" "$best_c"
printf '  %-44s %9d lines/s\n' "C: json_loadb only" "$best_cparse"
printf '  %-44s %9d lines/s\n' "Swift: JSON(parsing:) + write(to:)" "$best_swift"
printf '  %-44s %9d lines/s\n' "Swift: JSON(parsing:) only" "$best_parse"
printf '  %-44s %9d lines/s\n' "Swift: JSON(parsing:) + jansson tree + dumpb" "$best_jdump"
ratio=$(awk -v s="$best_swift" -v c="$best_c" 'BEGIN { printf "%.2f", s / c }')
echo "  ratio Swift / C: ${ratio}x (target >= 0.80x)"
awk -v s="$best_parse" -v c="$best_cparse" \
  'BEGIN { printf "  parse only, Swift / C: %.2fx (the difference is the copy into JSON)\n", s / c }'
below=0
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8) }' || below=1

# The Codable bridge against Foundation's coders (information; same run, same machine).
echo "Codable bridge vs Foundation (200000 iterations, operations/s):"
"$tool" codable 200000 | awk -F'\t' '{ printf "  %-52s %9d\n", $1, $2 }'

if ((below)); then
  echo "JSON layer below target: Swift / C = ${ratio}x < 0.80x" >&2
  exit 1
fi
