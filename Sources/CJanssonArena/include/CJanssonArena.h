// A per-thread bump arena for jansson's allocations while one text is parsed and copied out.
//
// jansson allocates every token, key, value and hash table of a parse with malloc and frees them
// one by one when the tree is released: about 30 allocations and 30 frees for a small JSON-RPC
// request, a quarter of the parse-ahead thread's instructions (callgrind). Between
// `json_arena_begin` and `json_arena_end` jansson's allocations on the calling thread come from
// that thread's arena instead, its frees of them are no-ops, and `json_arena_end` drops the lot
// at once, so the parsed tree is never released value by value (no `json_decref`).
//
// jansson's allocator hooks are process-wide (`json_set_alloc_funcs`, installed before `main`
// by a constructor); outside a begin/end window, and on every other thread, they are plain
// malloc and free. Nothing allocated inside a window may be used after its end: the caller
// copies what it needs out of the tree first.
#ifndef CJANSSONARENA_H
#define CJANSSONARENA_H

#include <stdbool.h>
#include <stddef.h>

// Starts routing this thread's jansson allocations to its arena. Returns false, and changes
// nothing, when a window is already open on this thread (windows do not nest); then the caller
// must not call `json_arena_end` for this begin.
bool json_arena_begin(void);

// Ends the window: everything jansson allocated on this thread since `json_arena_begin` is
// gone. The first block is kept for the next window; larger ones a big text needed are freed.
void json_arena_end(void);

// Bytes this thread's arena holds between windows (its first block, or 0 before the first
// window), and how many blocks beyond the first the last window needed: for tests.
size_t json_arena_retained_bytes(void);
size_t json_arena_last_overflow_blocks(void);

// Whether `pointer` lies in one of this thread's arena blocks: for tests.
bool json_arena_owns(const void *pointer);

#endif
