#define _GNU_SOURCE
#include "CPosix.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#if __has_include(<malloc.h>)
#include <malloc.h>  // first: it defines __GLIBC__ when the C library is glibc
#endif

ssize_t cposix_write_nowait(int fd, const void *bytes, size_t count) {
  struct iovec vector = {.iov_base = (void *)bytes, .iov_len = count};
  // Offset -1: the file's current position, as write(2) uses (a pipe has none).
  return pwritev2(fd, &vector, 1, -1, RWF_NOWAIT);
}

void cposix_trim_free_memory(void) {
#if defined(__GLIBC__)
  (void)malloc_trim(0);
#endif
}

void *cposix_grow_mapping(void *old, size_t old_size, size_t new_size) {
#if defined(__linux__)
  void *moved = mremap(old, old_size, new_size, MREMAP_MAYMOVE);
  return moved == MAP_FAILED ? NULL : moved;
#else
  (void)old;
  (void)old_size;
  (void)new_size;
  return NULL;
#endif
}

void cposix_widen_pipe(int fd, int bytes) {
#if defined(F_SETPIPE_SZ)
  if (fcntl(fd, F_GETPIPE_SZ) >= bytes) return;
  (void)fcntl(fd, F_SETPIPE_SZ, bytes);
#else
  (void)fd;
  (void)bytes;
#endif
}

void cposix_use_one_allocator_arena(void) {
#if defined(__GLIBC__)
  (void)mallopt(M_ARENA_MAX, 1);
#endif
}

int cposix_contains(const void *bytes, size_t count, const void *needle, size_t needle_count) {
  return memmem(bytes, count, needle, needle_count) != NULL;
}
