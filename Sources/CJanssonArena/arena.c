// See include/CJanssonArena.h for what the arena is for and its contract.
#include "CJanssonArena.h"

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

// A block of the arena: a header, then the bytes handed out. Blocks beyond the first are
// chained behind it for the length of one window.
struct block {
  struct block *next;
  size_t size;  // bytes after the header
  size_t padding[2];  // keeps the bytes after the header 16-byte aligned
};

// 16 KB holds a few kilobytes of JSON text (a small request takes about 1 KB of jansson
// allocations); a larger text chains blocks of twice the size each, freed at the window's end.
enum { first_block_size = 16 << 10, alignment = 16 };

struct arena {
  // The free bytes of the block allocations come from: the fast path reads only these. Both
  // are NULL outside a window, so that the fast path fails there without testing `active`.
  char *cursor;
  char *limit;
  bool active;
  struct block *first;  // kept between windows
  struct block *current;  // `first` or the newest overflow block
  size_t overflow_blocks;
  size_t last_overflow_blocks;
};

// Initial-exec: reached at a fixed offset from the thread pointer, not through
// __tls_get_addr, whose call made the fast path save registers and set up a frame (about 8 of
// its 22 instructions, 29 times per small request). The price is a few dozen bytes of static
// TLS, which a library loaded by dlopen would take from glibc's reserve for it.
static __thread struct arena arena __attribute__((tls_model("initial-exec")));

// Frees the first block when a thread that used an arena exits (an attached client's reader).
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

// Runs on the exiting thread, so it may clear that thread's arena: a later destructor that
// parses then starts a new first block (which glibc's next destructor round frees) instead of
// using this one after it is freed.
static void thread_exited(void *value) {
  if (arena.first == value) arena = (struct arena){0};
  free(value);
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, thread_exited); }

static inline char *block_bytes(struct block *block) { return (char *)(block + 1); }

static struct block *new_block(size_t size) {
  struct block *block = malloc(sizeof(struct block) + size);
  if (!block) return NULL;
  block->next = NULL;
  block->size = size;
  return block;
}

static void use_block(struct arena *a, struct block *block) {
  a->current = block;
  a->cursor = block_bytes(block);
  a->limit = a->cursor + block->size;
}

// The slow path, kept out of line so the fast one stays a few instructions: outside a window
// (plain malloc), no first block yet (this thread's first window), or the current block is full.
__attribute__((noinline)) static void *arena_grow(struct arena *a, size_t size, size_t rounded) {
  if (!a->active) return malloc(size);
  if (rounded < size || rounded == 0) return NULL;  // rounding overflowed, or 0 bytes asked
  if (!a->first) {
    struct block *first = new_block(first_block_size);
    if (!first) return NULL;
    (void)pthread_once(&exit_key_once, make_exit_key);
    (void)pthread_setspecific(exit_key, first);
    a->first = first;
    use_block(a, first);
    if (rounded <= first->size) {
      a->cursor += rounded;
      return block_bytes(first);
    }
  }
  size_t block_size = a->current->size * 2;
  if (block_size < rounded) block_size = rounded;
  struct block *block = new_block(block_size);
  if (!block) return NULL;
  // Overflow blocks are pushed right behind the first; `current` is the newest.
  block->next = a->first->next;
  a->first->next = block;
  a->overflow_blocks += 1;
  use_block(a, block);
  a->cursor += rounded;
  return block_bytes(block);
}

// jansson never asks for 0 bytes (jsonp_malloc returns NULL for them first), so a request
// rounds up to at least 16 bytes and fails the fast path when cursor and limit are NULL. A size
// whose rounding overflows rounds to 0, which `rounded - 1` turns into the largest size: it
// takes the slow path too, which refuses it.
static void *arena_malloc(size_t size) {
  struct arena *a = &arena;
  size_t rounded = (size + (alignment - 1)) & ~(size_t)(alignment - 1);
  char *pointer = a->cursor;
  if (rounded - 1 < (size_t)(a->limit - pointer)) {
    a->cursor = pointer + rounded;
    return pointer;
  }
  return arena_grow(a, size, rounded);
}

static bool block_holds(struct block *block, const void *pointer) {
  uintptr_t start = (uintptr_t)block_bytes(block);
  uintptr_t address = (uintptr_t)pointer;
  return address >= start && address < start + block->size;
}

bool json_arena_owns(const void *pointer) {
  for (struct block *block = arena.first; block; block = block->next) {
    if (block_holds(block, pointer)) return true;
  }
  return false;
}

// Inside a window jansson only frees what it allocated in that window, so the check is a
// safeguard: a pointer that is not the arena's (from malloc, outside any window) is freed.
static void arena_free(void *pointer) {
  struct arena *a = &arena;
  if (a->active && json_arena_owns(pointer)) return;
  free(pointer);
}

__attribute__((constructor)) static void install(void) {
  json_set_alloc_funcs(arena_malloc, arena_free);
}

bool json_arena_begin(void) {
  struct arena *a = &arena;
  if (a->active) return false;
  a->active = true;
  if (a->first) use_block(a, a->first);
  return true;
}

void json_arena_end(void) {
  struct arena *a = &arena;
  a->active = false;
  a->cursor = NULL;
  a->limit = NULL;
  a->last_overflow_blocks = a->overflow_blocks;
  if (!a->first) return;
  struct block *block = a->first->next;
  while (block) {
    struct block *next = block->next;
    free(block);
    block = next;
  }
  a->first->next = NULL;
  a->current = a->first;
  a->overflow_blocks = 0;
}

size_t json_arena_retained_bytes(void) { return arena.first ? arena.first->size : 0; }

size_t json_arena_last_overflow_blocks(void) { return arena.last_overflow_blocks; }
