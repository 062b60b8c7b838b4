/* An operator's CSV load (bikaroo-mcp admin load KIND FILE): the file's records checked against
 * the columns KIND is stored with, as the JSON rows fleet.admin_load takes. A file is taken as
 * written or refused whole, with the line, the column and what is expected: a field that is not
 * UTF-8 text, a NUL byte, a header naming an unknown column, twice the same one or lacking a
 * required one, an empty required field, a number or a time that does not read as one, a
 * record whose key an earlier one has. What only the database knows (a region that exists, the
 * status codes, the ranges) it judges; admin.c says that in the same words (load_column). */
#ifndef BIKAROO_LOAD_H
#define BIKAROO_LOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A file of at most 64 MiB. */
#define LOAD_MAX_BYTES (64L << 20)

enum load_type { LOAD_TEXT, LOAD_INT, LOAD_TIME };

/* One column of a kind: its header name, whether a record must give it, how it reads, and what
 * a value must be (the operator's words). */
struct load_column {
	const char *name;
	bool required;
	enum load_type type;
	const char *expected;
};

/* The columns of kind (regions, stations, bikes), up to a row whose name is NULL; the first is
 * the key. NULL for another kind. Static. */
const struct load_column *load_columns(const char *kind);
/* The column of kind named name (NULL for none), or with type, the first of that type. */
const struct load_column *load_column(const char *kind, const char *name);
const struct load_column *load_column_of_type(const char *kind, enum load_type type);

/* Why a file was refused: the line (1-based; 0 for the whole file), the column ("" when none)
 * and what is wrong, in words. */
struct load_error {
	unsigned long line;
	char column[64];
	char what[512];
};

/* The records of text[0..n) (the whole file) for kind: *rows (new reference) a JSON array of
 * objects named by the header, *lines (new array of json_array_size(*rows) elements: caller
 * frees) the line each record starts on. 0, or -1 with err filled and nothing to free. */
int load_rows(const char *kind, const char *text, size_t n, json_t **rows, unsigned long **lines,
	      struct load_error *err) __attribute__((warn_unused_result));

/* A field's value as a message may show it (out of cap bytes, always terminated): control bytes
 * and, when the value is not UTF-8, every byte past ASCII as \xHH; cut short with "...". */
void load_show(const char *value, char *out, size_t cap);

#endif
