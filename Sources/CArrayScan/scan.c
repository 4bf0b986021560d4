#include "CArrayScan.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

struct scan {
  const unsigned char *bytes;
  size_t count;
  size_t open;
  size_t step;
  carrayscan_mark *marks;
  size_t capacity;
  size_t mark_count;
  // The offset at or past which a depth-1 comma records a mark.
  size_t next_mark;
  ptrdiff_t commas;
  ptrdiff_t depth;
  ptrdiff_t close;
};

static inline int is_whitespace(unsigned char byte) {
  return byte == ' ' || byte == '\n' || byte == '\r' || byte == '\t';
}

static inline size_t saturating_add(size_t a, size_t b) {
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

// Records the element after the depth-1 comma at `at` (already counted).
static void mark(struct scan *s, size_t at) {
  size_t start = at + 1;
  while (start < s->count && is_whitespace(s->bytes[start])) start += 1;
  if (s->mark_count < s->capacity) {
    s->marks[s->mark_count].offset = (ptrdiff_t)start;
    s->marks[s->mark_count].index = s->commas;
    s->mark_count += 1;
  }
  s->next_mark = saturating_add(at, s->step);
}

// The byte-at-a-time scan from `at`, inside a string or not, its first byte escaped or not.
static void scan_bytes(struct scan *s, size_t at, int in_string, int escaped) {
  const unsigned char *bytes = s->bytes;
  size_t count = s->count;
  for (; at < count; at += 1) {
    unsigned char byte = bytes[at];
    if (in_string) {
      if (escaped) {
        escaped = 0;
      } else if (byte == '"') {
        in_string = 0;
      } else if (byte == '\\') {
        escaped = 1;
      }
      continue;
    }
    switch (byte) {
      case '"':
        in_string = 1;
        break;
      case '[':
      case '{':
        s->depth += 1;
        break;
      case ']':
      case '}':
        s->depth -= 1;
        if (s->depth == 0) {
          s->close = byte == ']' ? (ptrdiff_t)at : -1;
          return;
        }
        break;
      case ',':
        if (s->depth == 1) {
          s->commas += 1;
          if (at >= s->next_mark) mark(s, at);
        }
        break;
      default:
        break;
    }
  }
  s->close = -1;
}

#if defined(__x86_64__)

static const uint64_t ODD_BITS = 0xAAAAAAAAAAAAAAAAull;

// Visits one block's brackets and commas outside strings (bit i is the byte at `base + i`).
// Returns 1 when the array closed in it (`close` says where, or -1 for a `}`).
static inline __attribute__((always_inline)) int visit(
    struct scan *s, size_t base, uint64_t opens, uint64_t closes, uint64_t commas) {
  uint64_t brackets = opens | closes;
  ptrdiff_t depth = s->depth;
  if (base + 63 < s->next_mark) {
    // No mark can fall in this block: the depth changes only at brackets, so the commas
    // between two brackets are counted at once when they are at depth 1.
    ptrdiff_t counted = 0;
    while (brackets) {
      uint64_t bit = brackets & (0 - brackets);
      uint64_t below = bit - 1;
      uint64_t at_depth_one = 0 - (uint64_t)(depth == 1);
      counted += __builtin_popcountll(commas & below & at_depth_one);
      commas &= ~below;
      if (opens & bit) {
        depth += 1;
      } else if (--depth == 0) {
        size_t at = base + (size_t)__builtin_ctzll(bit);
        s->commas += counted;
        s->depth = 0;
        s->close = s->bytes[at] == ']' ? (ptrdiff_t)at : -1;
        return 1;
      }
      brackets ^= bit;
    }
    if (depth == 1) counted += __builtin_popcountll(commas);
    s->commas += counted;
    s->depth = depth;
    return 0;
  }
  // A mark may fall here: each bracket and comma in order.
  uint64_t all = brackets | commas;
  while (all) {
    int i = __builtin_ctzll(all);
    uint64_t bit = 1ull << i;
    all &= all - 1;
    size_t at = base + (size_t)i;
    if (commas & bit) {
      if (depth == 1) {
        s->commas += 1;
        if (at >= s->next_mark) mark(s, at);
      }
    } else if (opens & bit) {
      depth += 1;
    } else if (--depth == 0) {
      s->depth = 0;
      s->close = s->bytes[at] == ']' ? (ptrdiff_t)at : -1;
      return 1;
    }
  }
  s->depth = depth;
  return 0;
}

// A block's bytes of each kind, bit i for its byte i.
struct masks {
  uint64_t quote;
  uint64_t backslash;
  uint64_t open;
  uint64_t close;
  uint64_t comma;
};

static inline uint64_t prefix_xor_shifts(uint64_t bits) {
  bits ^= bits << 1;
  bits ^= bits << 2;
  bits ^= bits << 4;
  bits ^= bits << 8;
  bits ^= bits << 16;
  bits ^= bits << 32;
  return bits;
}

// `[` and `{` differ from each other only in 0x20, as do `]` and `}`: one OR and one
// comparison finds each pair.
static inline __attribute__((always_inline)) struct masks classify_sse2(
    const unsigned char *block) {
  struct masks m = {0, 0, 0, 0, 0};
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i comma = _mm_set1_epi8(',');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i case_bit = _mm_set1_epi8(0x20);
  for (int part = 0; part < 4; part += 1) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)(block + 16 * part));
    __m128i folded = _mm_or_si128(bytes, case_bit);
    int shift = 16 * part;
    m.quote |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, quote)) << shift;
    m.backslash |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, backslash))
                   << shift;
    m.comma |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, comma)) << shift;
    m.open |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)) << shift;
    m.close |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)) << shift;
  }
  return m;
}

#define SCAN_BLOCKS scan_sse2
#define SCAN_TARGET
#define SCAN_CLASSIFY classify_sse2
#define SCAN_PREFIX_XOR prefix_xor_shifts
#include "blocks.h"
#undef SCAN_BLOCKS
#undef SCAN_TARGET
#undef SCAN_CLASSIFY
#undef SCAN_PREFIX_XOR

#define AVX2_TARGET __attribute__((target("avx2,pclmul,popcnt,bmi")))

AVX2_TARGET static inline struct masks classify_avx2(const unsigned char *block) {
  struct masks m;
  const __m256i quote = _mm256_set1_epi8('"');
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i comma = _mm256_set1_epi8(',');
  const __m256i open = _mm256_set1_epi8('{');
  const __m256i close = _mm256_set1_epi8('}');
  const __m256i case_bit = _mm256_set1_epi8(0x20);
  __m256i low = _mm256_loadu_si256((const __m256i *)block);
  __m256i high = _mm256_loadu_si256((const __m256i *)(block + 32));
  __m256i low_folded = _mm256_or_si256(low, case_bit);
  __m256i high_folded = _mm256_or_si256(high, case_bit);
  m.quote = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(low, quote)) |
            (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(high, quote)) << 32;
  m.backslash =
      (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(low, backslash)) |
      (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(high, backslash)) << 32;
  m.comma = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(low, comma)) |
            (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(high, comma)) << 32;
  m.open = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(low_folded, open)) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(high_folded, open)) << 32;
  m.close =
      (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(low_folded, close)) |
      (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(high_folded, close)) << 32;
  return m;
}

// A carry-less multiply by all ones XORs each bit with every bit below it.
AVX2_TARGET static inline uint64_t prefix_xor_clmul(uint64_t bits) {
  __m128i product = _mm_clmulepi64_si128(
      _mm_set_epi64x(0, (long long)bits), _mm_set1_epi8((char)0xFF), 0);
  return (uint64_t)_mm_cvtsi128_si64(product);
}

#define SCAN_BLOCKS scan_avx2
#define SCAN_TARGET AVX2_TARGET
#define SCAN_CLASSIFY classify_avx2
#define SCAN_PREFIX_XOR prefix_xor_clmul
#include "blocks.h"
#undef SCAN_BLOCKS
#undef SCAN_TARGET
#undef SCAN_CLASSIFY
#undef SCAN_PREFIX_XOR

static int has_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
         __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi");
}

int carrayscan_best_level(void) { return has_avx2() ? CARRAYSCAN_AVX2 : CARRAYSCAN_SSE2; }

#else

int carrayscan_best_level(void) { return CARRAYSCAN_BYTES; }

#endif

ptrdiff_t carrayscan_scan(
    const unsigned char *bytes, size_t count, size_t open, size_t step, carrayscan_mark *marks,
    size_t capacity, size_t *mark_count, ptrdiff_t *commas, int level) {
  if (step == 0) step = 1;
  struct scan s = {
      .bytes = bytes,
      .count = count,
      .open = open,
      .step = step,
      .marks = marks,
      .capacity = capacity,
      .mark_count = 0,
      .next_mark = saturating_add(open, step),
      .commas = 0,
      .depth = 1,
      .close = -1,
  };
  int best = carrayscan_best_level();
  if (level == CARRAYSCAN_BEST || level > best) level = best;
  if (open < count) {
    switch (level) {
#if defined(__x86_64__)
      case CARRAYSCAN_AVX2:
        scan_avx2(&s);
        break;
      case CARRAYSCAN_SSE2:
        scan_sse2(&s);
        break;
#endif
      default:
        scan_bytes(&s, open + 1, 0, 0);
        break;
    }
  }
  *mark_count = s.mark_count;
  *commas = s.commas;
  return s.close;
}
