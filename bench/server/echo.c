/*
 * echo: the jansson floor for the server benchmark. Reads NDJSON on stdin in 1 MiB blocks,
 * parses each line with json_loadb (the flags the server uses), writes it back compact with
 * json_dumpb through one buffer, flushed when the input block is used up. One line out per
 * line in: the least any jansson-based server must do; stateserver does more per request
 * (a patch and a response).
 *
 * Build: cc -O2 -o echo echo.c -ljansson
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BLOCK = 1 << 20, OUT = 1 << 20 };

static char out[OUT];
static size_t used;

static void flush_out(void) {
  size_t done = 0;
  while (done < used) {
    ssize_t n = write(1, out + done, used - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      exit(1);
    }
    done += (size_t)n;
  }
  used = 0;
}

/* Dumps straight into the buffer; only when it did not fit is the buffer flushed and the
   value dumped again. */
static void emit(const json_t *value) {
  const size_t flags = JSON_COMPACT | JSON_ENCODE_ANY;
  size_t n = json_dumpb(value, out + used, OUT - used, flags);
  if (n + 1 > OUT - used) {
    flush_out();
    n = json_dumpb(value, out, OUT, flags);
    if (n + 1 > OUT) exit(1);
  }
  used += n;
  out[used++] = '\n';
}

int main(void) {
  size_t capacity = 2 * BLOCK, length = 0;
  char *in = malloc(capacity);
  if (!in) return 1;
  for (;;) {
    if (capacity - length < BLOCK) {
      capacity *= 2;
      in = realloc(in, capacity);
      if (!in) return 1;
    }
    ssize_t n = read(0, in + length, BLOCK);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    length += (size_t)n;
    size_t start = 0;
    char *newline;
    while ((newline = memchr(in + start, '\n', length - start))) {
      size_t end = (size_t)(newline - in);
      json_error_t error;
      json_t *value = json_loadb(in + start, end - start,
                                 JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &error);
      if (value) {
        emit(value);
        json_decref(value);
      }
      start = end + 1;
    }
    memmove(in, in + start, length - start);
    length -= start;
    flush_out();
  }
  flush_out();
  free(in);
  return 0;
}
