#!/bin/sh
# StateKit: per-action cost of send + reduce + publish for a counter, and for editing one
# element of keyed collections of 1,000 and 100,000 elements; prints the 100k/1k ratio
# (target: at most 10x). Run from anywhere; builds the release benchmark first.
set -eu
cd "$(dirname "$0")/../.."
swift build ${SWIFT_RELEASE_FLAGS:--c release --disable-index-store --static-swift-stdlib} --product statekit-bench >&2
exec .build/release/statekit-bench
