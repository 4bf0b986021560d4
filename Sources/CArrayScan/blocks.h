// The block scan, written once and compiled once per instruction set: scan.c defines
// SCAN_BLOCKS (the function's name), SCAN_TARGET (its target attribute), SCAN_CLASSIFY (a
// block's byte masks) and SCAN_PREFIX_XOR, then includes this file. A macro template rather
// than one function taking the classifier: the classifier must be inlined into a function
// compiled for its instruction set, which a call through a pointer does not promise.
//
// Per 64-byte block (simdjson's first stage): the escaped bytes from the backslash runs, the
// bytes inside strings from a prefix XOR of the unescaped quotes, then only the brackets and
// commas outside strings are visited.

SCAN_TARGET static void SCAN_BLOCKS(struct scan *s) {
  const unsigned char *bytes = s->bytes;
  size_t count = s->count;
  size_t at = s->open + 1;
  // All ones when the previous block ended inside a string.
  uint64_t in_string = 0;
  // 1 when the previous block ended in an odd run of backslashes: this block's first byte is
  // escaped.
  uint64_t next_is_escaped = 0;
  unsigned char tail[64];
  while (at < count) {
    const unsigned char *block = bytes + at;
    if (count - at < 64) {
      // The last block, padded with spaces: they are neither structure nor string.
      memset(tail, ' ', sizeof tail);
      memcpy(tail, block, count - at);
      block = tail;
    }
    struct masks m = SCAN_CLASSIFY(block);

    // The escaped bytes: the byte after each odd run of backslashes (simdjson's
    // next_escape_and_terminal_code). A subtraction turns each run on an even offset into ones
    // with the byte after it, which the odd bits then sort by the run's length.
    uint64_t potential = m.backslash & ~next_is_escaped;
    uint64_t codes = (((potential << 1) | ODD_BITS) - potential) ^ ODD_BITS;
    uint64_t escaped = codes ^ (m.backslash | next_is_escaped);
    uint64_t escapes = codes & m.backslash;

    // Inside a string: from an opening quote up to, not including, its closing quote.
    uint64_t inside = SCAN_PREFIX_XOR(m.quote & ~escaped) ^ in_string;

    // The runs above count every backslash as in a string; the byte scan reads one outside a
    // string as nothing (and the quote after it as a string's start). Only text that is not
    // JSON has one: the bytes scan it from this block on, from the state this block starts
    // with, which every earlier block computed as the bytes would have.
    if (m.backslash & ~inside) {
      scan_bytes(s, at, in_string != 0, next_is_escaped != 0);
      return;
    }
    next_is_escaped = escapes >> 63;
    in_string = (uint64_t)((int64_t)inside >> 63);

    uint64_t outside = ~inside;
    if (visit(s, at, m.open & outside, m.close & outside, m.comma & outside)) return;
    at += 64;
  }
  s->close = -1;
}
