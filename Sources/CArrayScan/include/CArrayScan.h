// The bracket scan of a large JSON array (JSON's `JSONArrayScan`), 64 bytes at a time.
//
// In C because it needs the processor's vector instructions, chosen when it runs: Swift's SIMD
// types give no byte mask of a comparison and no carry-less multiply, and a Swift build cannot
// pick AVX2 at run time on the machines that have it while still running on those without.
// The scan runs on one thread before the two-thread parse of the elements, so every byte it
// reads one at a time is paid in full on the open's critical path.
#ifndef CARRAYSCAN_H
#define CARRAYSCAN_H

#include <stddef.h>

// An element start recorded after a depth-1 comma: where it starts (past its white space) and
// how many depth-1 commas came before it, that one included (its index).
typedef struct {
  ptrdiff_t offset;
  ptrdiff_t index;
} carrayscan_mark;

// How a scan reads the bytes: each level gives the same answer (the tests compare them).
enum {
  // The best the processor has.
  CARRAYSCAN_BEST = 0,
  // One byte at a time: the reference, and what a processor other than x86-64 runs.
  CARRAYSCAN_BYTES = 1,
  // 64-byte blocks classified with SSE2 (every x86-64 processor).
  CARRAYSCAN_SSE2 = 2,
  // 64-byte blocks classified with AVX2, strings found with a carry-less multiply.
  CARRAYSCAN_AVX2 = 3,
};

// The highest level this processor runs (CARRAYSCAN_BYTES when it has no vector path).
int carrayscan_best_level(void);

// Scans the array whose `[` is at `open` in `bytes` (of `count` bytes), from `open + 1` at
// depth 1, skipping strings (a backslash in a string escapes the byte after it).
//
// Returns the offset of the bracket that brings the depth back to 0 when it is `]`, or -1 when
// it is `}` or when the brackets do not close before `count`. Sets `*commas` to the number of
// depth-1 commas before it, and records in `marks` (at most `capacity`; `*mark_count` says how
// many) the element after the first depth-1 comma at or past `open + step`, then after the
// first one at or past that comma's offset + `step`, and so on. `(count - open) / step + 1`
// marks are always enough. `level` is one of the CARRAYSCAN_ levels; one the processor lacks
// runs as the best it has.
ptrdiff_t carrayscan_scan(
    const unsigned char *bytes, size_t count, size_t open, size_t step, carrayscan_mark *marks,
    size_t capacity, size_t *mark_count, ptrdiff_t *commas, int level);

#endif
