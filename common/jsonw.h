/* Compact JSON text of a jansson value, byte for byte what json_dumps(v, JSON_COMPACT |
 * JSON_ENCODE_ANY) writes (tests/unit/test_jsonw.c compares them), in a fraction of its time:
 * jansson decodes every string's UTF-8 again while writing it and calls its output callback for
 * each run of characters; here a string is copied in runs up to the next byte that needs an
 * escape (its UTF-8 was checked when the string was made). Every response goes through it: on
 * tools/list, json_dumps was a quarter of the server's CPU (bench/README.md "Performance"). */
#ifndef BIKAROO_JSONW_H
#define BIKAROO_JSONW_H

#include <jansson.h>

#include "mem.h"

/* New NUL-terminated text (caller frees), or NULL for a NULL value. Keys in insertion order. */
char *jsonw_dump(const json_t *v);
/* The same text appended to b: of v, or of the string s[0..n) (valid UTF-8, as jansson's are). */
void jsonw_value(struct mem_buf *b, const json_t *v);
void jsonw_string(struct mem_buf *b, const char *s, size_t n);

#endif
