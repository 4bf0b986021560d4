/*
 * jansson_roundtrip: the C yardstick for bench/json/run.sh.
 *
 * Reads an NDJSON file into memory, then for every line: json_loadb (with the flags the Swift
 * JSON layer uses: DECODE_ANY | ALLOW_NUL | REJECT_DUPLICATES), json_dumpb (compact) into a
 * 1 MiB output buffer plus '\n', json_decref. The buffer is written to stdout when full. Only
 * that loop is timed; it prints "lines seconds lines_per_second" on stderr, as
 * `json-tool roundtrip` does, so run.sh can compare the two.
 *
 * With --parse-only, each line is parsed and freed, nothing is dumped (as
 * `json-tool roundtrip --parse-only`), to split parse cost from dump cost.
 *
 * Build: cc -O2 -o jansson_roundtrip jansson_roundtrip.c -ljansson
 * Run:   ./jansson_roundtrip LINES.ndjson [--parse-only] > /dev/null
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OUT_CAP (1u << 20)

static char out_buf[OUT_CAP];
static size_t out_len;

static void write_all(const char *p, size_t n) {
    while (n) {
        ssize_t w = write(STDOUT_FILENO, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            perror("write");
            exit(1);
        }
        p += w;
        n -= (size_t)w;
    }
}

static void emit(const json_t *v) {
    size_t n = json_dumpb(v, out_buf + out_len, OUT_CAP - out_len, JSON_COMPACT | JSON_ENCODE_ANY);
    if (n + 1 > OUT_CAP - out_len) { /* did not fit: flush and dump again */
        write_all(out_buf, out_len);
        out_len = 0;
        n = json_dumpb(v, out_buf, OUT_CAP, JSON_COMPACT | JSON_ENCODE_ANY);
        if (n == 0 || n + 1 > OUT_CAP) {
            fputs("jansson_roundtrip: a line does not fit in 1 MiB\n", stderr);
            exit(1);
        }
    }
    out_len += n;
    out_buf[out_len++] = '\n';
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int parse_only = argc == 3 && strcmp(argv[2], "--parse-only") == 0;
    if (argc != 2 && !parse_only) {
        fputs("usage: jansson_roundtrip LINES.ndjson [--parse-only]\n", stderr);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)size);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
        perror("read");
        return 1;
    }
    fclose(f);

    size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES;
    long lines = 0, errors = 0;
    double start = now();
    for (char *p = data, *end = data + size; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        json_error_t err;
        json_t *v = json_loadb(p, len, flags, &err);
        if (v) {
            if (!parse_only) emit(v);
            json_decref(v);
        } else {
            errors++;
        }
        lines++;
        p += len + 1;
    }
    write_all(out_buf, out_len);
    double seconds = now() - start;
    fprintf(stderr, "%ld %.6f %.0f errors=%ld\n", lines, seconds, lines / seconds, errors);
    free(data);
    return errors ? 1 : 0;
}
