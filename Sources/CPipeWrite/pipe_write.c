#define _GNU_SOURCE
#include "CPipeWrite.h"

#include <sys/uio.h>

ssize_t cpipe_write_nowait(int fd, const void *bytes, size_t count) {
  struct iovec vector = {.iov_base = (void *)bytes, .iov_len = count};
  // Offset -1: the file's current position, as write(2) uses (a pipe has none).
  return pwritev2(fd, &vector, 1, -1, RWF_NOWAIT);
}
