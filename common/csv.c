/* CSV records (csv.h). */
#include "csv.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

void csv_record_free(struct csv_record *rec)
{
	for (size_t i = 0; i < rec->nfields; i++)
		free(rec->fields[i]);
	rec->nfields = 0;
}

/* One field at *p: its text (new string) and *p past it, at a comma, a line end or end. */
static enum csv_status csv_field(const char **p, const char *end, char **out,
				 unsigned long *line_no)
{
	const char *s = *p;
	size_t cap = 64, n = 0;
	char *buf = mem_alloc(cap);
	bool quoted = s < end && *s == '"';
	if (quoted)
		s++;
	for (;; s++) {
		if (s == end) {
			if (quoted)
				goto invalid; /* an unclosed quote */
			break;
		}
		char c = *s;
		if (quoted && c == '"') {
			if (s + 1 < end && s[1] == '"') {
				s++; /* "" is one quote */
			} else {
				s++;
				if (s < end && *s != ',' && *s != '\n' && *s != '\r')
					goto invalid; /* text after the closing quote */
				break;
			}
		} else if (!quoted && (c == ',' || c == '\n' || c == '\r')) {
			break;
		} else if (!quoted && c == '"') {
			goto invalid;
		} else if (quoted && c == '\n') {
			(*line_no)++;
		}
		if (n + 2 > cap)
			buf = mem_realloc(buf, cap *= 2);
		buf[n++] = c;
	}
	buf[n] = '\0';
	*out = buf;
	*p = s;
	return CSV_OK;
invalid:
	free(buf);
	return CSV_INVALID;
}

enum csv_status csv_next(const char **p, const char *end, struct csv_record *rec,
			 unsigned long *line_no)
{
	rec->nfields = 0;
	/* Blank lines between records are skipped. */
	while (*p < end && (**p == '\n' || **p == '\r')) {
		if (**p == '\n')
			(*line_no)++;
		(*p)++;
	}
	if (*p >= end)
		return CSV_END;
	rec->line = ++(*line_no);
	for (;;) {
		if (rec->nfields == CSV_MAX_FIELDS)
			goto invalid;
		if (csv_field(p, end, &rec->fields[rec->nfields], line_no) != CSV_OK)
			goto invalid;
		rec->nfields++;
		if (*p < end && **p == ',') {
			(*p)++;
			continue;
		}
		if (*p < end && **p == '\r')
			(*p)++;
		if (*p < end && **p == '\n')
			(*p)++;
		return CSV_OK;
	}
invalid:
	csv_record_free(rec);
	return CSV_INVALID;
}

bool csv_list_has(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; n && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len + (end != NULL);
	}
	return false;
}
