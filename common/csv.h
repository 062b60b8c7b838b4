/* CSV (RFC 4180): comma-separated fields, double quotes around a field that holds a comma, a
 * quote (doubled) or a line break; CRLF or LF line ends. For the operator's loads (bikaroo-mcp
 * admin load): a header line naming the columns, then one record per line. */
#ifndef BIKAROO_CSV_H
#define BIKAROO_CSV_H

#include <stdbool.h>
#include <stddef.h>

enum csv_status { CSV_OK = 0, CSV_END, CSV_INVALID };

/* At most this many fields in one record. */
#define CSV_MAX_FIELDS 32

struct csv_record {
	unsigned long line; /* the line it starts on (a quoted field may span several) */
	size_t nfields;
	char *fields[CSV_MAX_FIELDS]; /* new strings: csv_record_free() */
};

/* Reads the record at *p (up to end) into rec and moves *p past it; CSV_END when only blank
 * lines are left; CSV_INVALID (rec empty, *line_no naming the line) for an unclosed quote, a
 * quote inside an unquoted field, text after a closing quote, or too many fields. *line_no
 * counts the lines read (the caller sets it to 0 first). */
enum csv_status csv_next(const char **p, const char *end, struct csv_record *rec,
			 unsigned long *line_no) __attribute__((warn_unused_result));
void csv_record_free(struct csv_record *rec);

/* Whether list, plain comma-separated words (no quotes, no spaces: "a,b,c"), has word. */
bool csv_list_has(const char *list, const char *word);

#endif
