// The POSIX/glibc calls StateServer needs that Swift's Glibc module does not import.
#ifndef CPOSIX_H
#define CPOSIX_H

#include <stddef.h>
#include <sys/types.h>

// Writes up to `count` bytes of `bytes` to `fd` at its current position, as many as it takes
// without waiting: returns how many (fewer than `count` when a pipe filled), or -1 with errno:
// EAGAIN when nothing fits now, EOPNOTSUPP when the kernel cannot write to this file without
// waiting (Linux before pipes honoured RWF_NOWAIT), or the error of an ordinary write.
//
// In C because `pwritev2` and `RWF_NOWAIT` are GNU extensions the Swift Glibc module does not
// import. Not `O_NONBLOCK`: that flag belongs to the open file description, which stdout shares
// with whoever started the server (a shell, a parent's own copy), and turning it on would make
// their writes fail with EAGAIN. RWF_NOWAIT asks for this one call only.
ssize_t cposix_write_nowait(int fd, const void *bytes, size_t count);

// Gives the allocator's free memory back to the system (glibc's `malloc_trim(0)`; a C library
// without it trims nothing). <malloc.h> is not in Swift's Glibc module, and the release binary
// is static, where a run-time look-up (`dlsym`) would find nothing.
void cposix_trim_free_memory(void);

// Makes every thread allocate from one pool (glibc's `mallopt(M_ARENA_MAX, 1)`; other C
// libraries are left as they are). glibc gives a second thread a pool of its own, which
// cannot reuse what the first thread's pool freed: a large decode on two threads (JSON's
// `ParallelArrayDecoding`) frees the parsed tree in the first pool while the second thread's
// elements took new memory in its own, and the open's peak rose by their size. Call it before
// any other thread starts.
void cposix_use_one_allocator_arena(void);

// Grows the anonymous mapping of `old_size` bytes at `old` to `new_size` bytes, moving it if it
// must (`mremap` with MREMAP_MAYMOVE, a Linux extension): the pages move, nothing is copied.
// Returns the mapping's address, or NULL when the system refuses or has no `mremap` (the caller
// then maps anew and copies).
void *cposix_grow_mapping(void *old, size_t old_size, size_t new_size);

// Asks that the pipe `fd` reads from hold at least `bytes` (`F_SETPIPE_SZ`, a Linux extension;
// an unprivileged process may ask up to /proc/sys/fs/pipe-max-size, 1 MiB by default). Nothing
// happens when `fd` is not a pipe, already holds that much, or the system refuses.
void cposix_widen_pipe(int fd, int bytes);

// Whether the `count` bytes at `bytes` hold the `needle_count` bytes at `needle` (`memmem`, a
// GNU extension that Swift's Glibc module does not declare).
int cposix_contains(const void *bytes, size_t count, const void *needle, size_t needle_count);

#endif
