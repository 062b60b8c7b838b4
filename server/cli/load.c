/* An operator's CSV load checked against its kind's columns (load.h). */
#include "load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "common/mem.h"

#define LOAD_REGION                                                                                \
	"the code of a region that exists (bikaroo-mcp admin region, or load regions first)"

static const struct load_column load_regions[] = {
	{"code", true, LOAD_TEXT, "a region code: two capital letters, a hyphen, three (FR-PAR)"},
	{"name", true, LOAD_TEXT, "the region's name"},
	{NULL, false, LOAD_TEXT, NULL},
};

static const struct load_column load_stations[] = {
	{"station_id", true, LOAD_TEXT,
	 "a station id: three capital letters, a hyphen, three digits (PAR-001)"},
	{"region", true, LOAD_TEXT, LOAD_REGION},
	{"name", true, LOAD_TEXT, "the station's name"},
	{NULL, false, LOAD_TEXT, NULL},
};

static const struct load_column load_bikes[] = {
	{"bike_id", true, LOAD_TEXT, "a bike id: VL- and 4 to 6 digits (VL-2048)"},
	{"region", true, LOAD_TEXT, LOAD_REGION},
	{"station_id", false, LOAD_TEXT,
	 "the id of a station that exists (load stations first), or nothing"},
	{"status", true, LOAD_TEXT,
	 "a status code that exists (available, in_repair...: the resource "
	 "bikaroo://fleet/status-codes lists them)"},
	{"battery_pct", false, LOAD_INT, "a whole number from 0 to 100, or nothing"},
	{"last_seen_at", true, LOAD_TIME,
	 "a date and time with its offset, RFC 3339 (2026-11-30T08:00:00Z or "
	 "2026-11-30T09:00:00+01:00)"},
	{NULL, false, LOAD_TEXT, NULL},
};

const struct load_column *load_columns(const char *kind)
{
	if (strcmp(kind, "regions") == 0)
		return load_regions;
	if (strcmp(kind, "stations") == 0)
		return load_stations;
	if (strcmp(kind, "bikes") == 0)
		return load_bikes;
	return NULL;
}

const struct load_column *load_column(const char *kind, const char *name)
{
	const struct load_column *c = load_columns(kind);
	for (; c && c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const struct load_column *load_column_of_type(const char *kind, enum load_type type)
{
	const struct load_column *c = load_columns(kind);
	for (; c && c->name; c++)
		if (c->type == type)
			return c;
	return NULL;
}

void load_show(const char *value, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	json_t *utf8 = json_string(value);
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		bool escape = *p < 0x20 || *p == 0x7f || (*p >= 0x80 && !utf8);
		if (o + (escape ? 4 : 1) + 4 > cap) {
			o += (size_t)snprintf(out + o, cap - o, "...");
			break;
		}
		if (!escape) {
			out[o++] = (char)*p;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[*p >> 4];
		out[o++] = hex[*p & 15];
	}
	out[o < cap ? o : cap - 1] = '\0';
	json_decref(utf8);
}

/* Whether s is n digits exactly. */
static bool load_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Whether v reads as a whole number: an optional sign, then digits. */
static bool load_int(const char *v)
{
	v += *v == '+' || *v == '-';
	return *v && load_digits(v, strlen(v));
}

/* Whether v is an RFC 3339 date-time, its offset written (Z, or +hh:mm / -hh:mm): a time
 * without one would be read in the database session's zone, not as written. */
static bool load_time(const char *v)
{
	size_t n = strlen(v);
	if (n < 20 || !load_digits(v, 4) || v[4] != '-' || !load_digits(v + 5, 2) || v[7] != '-' ||
	    !load_digits(v + 8, 2) || !strchr("Tt ", v[10]) || !load_digits(v + 11, 2) ||
	    v[13] != ':' || !load_digits(v + 14, 2) || v[16] != ':' || !load_digits(v + 17, 2))
		return false;
	const char *p = v + 19;
	if (*p == '.') {
		size_t f = strspn(p + 1, "0123456789");
		if (f == 0)
			return false;
		p += 1 + f;
	}
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		return true;
	return (*p == '+' || *p == '-') && strlen(p) == 6 && load_digits(p + 1, 2) && p[3] == ':' &&
	       load_digits(p + 4, 2);
}

/* Fills err (line, column, what: printf-style); -1. */
__attribute__((format(printf, 4, 5))) static int
load_fail(struct load_error *err, unsigned long line, const char *column, const char *fmt, ...)
{
	err->line = line;
	snprintf(err->column, sizeof err->column, "%s", column ? column : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->what, sizeof err->what, fmt, ap);
	va_end(ap);
	return -1;
}

/* The header's columns: each a column of kind, none twice, every required one there; cols[i]
 * the column of field i. 0, or -1 (err). */
static int load_header(const char *kind, const struct csv_record *head,
		       const struct load_column **cols, struct load_error *err)
{
	const struct load_column *all = load_columns(kind);
	char names[256] = "", shown[80];
	for (const struct load_column *c = all; c->name; c++)
		snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
			 c == all ? "" : ",", c->name);
	for (size_t i = 0; i < head->nfields; i++) {
		cols[i] = load_column(kind, head->fields[i]);
		load_show(head->fields[i], shown, sizeof shown);
		if (!cols[i])
			return load_fail(err, head->line, "",
					 "the header names \"%s\", not a column of %s: its columns "
					 "are %s (in any order)",
					 shown, kind, names);
		for (size_t j = 0; j < i; j++)
			if (cols[j] == cols[i])
				return load_fail(err, head->line, cols[i]->name,
						 "the header names %s twice", cols[i]->name);
	}
	for (const struct load_column *c = all; c->name; c++) {
		bool named = false;
		for (size_t i = 0; i < head->nfields; i++)
			named |= cols[i] == c;
		if (c->required && !named)
			return load_fail(err, head->line, c->name,
					 "the header lacks column %s, which %s need: its columns "
					 "are %s (in any order)",
					 c->name, kind, names);
	}
	return 0;
}

/* Field value v of column c, on line: its JSON string (new reference), or NULL (err). */
static json_t *load_field(const struct load_column *c, const char *v, unsigned long line,
			  struct load_error *err)
{
	char shown[120];
	json_t *s = json_string(v);
	load_show(v, shown, sizeof shown);
	if (!s) {
		load_fail(err, line, c->name, "\"%s\" is not UTF-8 text", shown);
	} else if (!*v && c->required) {
		load_fail(err, line, c->name, "empty, where it must be %s", c->expected);
	} else if (*v && ((c->type == LOAD_INT && !load_int(v)) ||
			  (c->type == LOAD_TIME && !load_time(v)))) {
		load_fail(err, line, c->name, "\"%s\" is not %s", shown, c->expected);
	} else {
		return s;
	}
	json_decref(s);
	return NULL;
}

/* The JSON row of rec (new reference), its key not in keys (which gets it, with its line);
 * NULL (err). */
static json_t *load_record(const char *kind, const struct csv_record *rec,
			   const struct csv_record *head, const struct load_column **cols,
			   json_t *keys, struct load_error *err)
{
	if (rec->nfields != head->nfields) {
		load_fail(err, rec->line, "", "%zu fields, the header names %zu", rec->nfields,
			  head->nfields);
		return NULL;
	}
	json_t *row = json_object();
	for (size_t i = 0; i < rec->nfields; i++) {
		json_t *v = load_field(cols[i], rec->fields[i], rec->line, err);
		if (!v) {
			json_decref(row);
			return NULL;
		}
		json_object_set_new(row, cols[i]->name, v);
	}
	const char *key_name = load_columns(kind)[0].name;
	const char *key = json_string_value(json_object_get(row, key_name));
	json_t *seen = json_object_get(keys, key);
	if (seen) {
		load_fail(err, rec->line, key_name,
			  "%s %s is on line %" JSON_INTEGER_FORMAT
			  " already: a file gives each once",
			  key_name, key, json_integer_value(seen));
		json_decref(row);
		return NULL;
	}
	json_object_set_new(keys, key, json_integer((json_int_t)rec->line));
	return row;
}

int load_rows(const char *kind, const char *text, size_t n, json_t **rows, unsigned long **lines,
	      struct load_error *err)
{
	memset(err, 0, sizeof *err);
	*rows = NULL;
	*lines = NULL;
	if (!load_columns(kind))
		return load_fail(err, 0, "", "%s is not regions, stations or bikes", kind);
	const char *nul = memchr(text, '\0', n);
	if (nul) {
		unsigned long line = 1;
		for (const char *p = text; p < nul; p++)
			line += *p == '\n';
		return load_fail(err, line, "", "a NUL byte: this is not a text file");
	}
	const char *p = text, *end = text + n;
	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3; /* the byte-order mark some spreadsheets write */
	unsigned long line = 0;
	struct csv_record head = {0}, rec = {0};
	const struct load_column *cols[CSV_MAX_FIELDS];
	json_t *out = json_array(), *keys = json_object();
	size_t cap = 64, count = 0;
	unsigned long *at = mem_alloc(cap * sizeof *at);
	int rc = -1;
	enum csv_status cs = csv_next(&p, end, &head, &line);
	if (cs == CSV_END) {
		load_fail(err, 0, "", "no header line: the file is empty");
		goto out;
	}
	if (cs != CSV_OK) {
		load_fail(err, line, "",
			  "the header is not CSV (a quote out of place, or over %d "
			  "fields)",
			  CSV_MAX_FIELDS);
		goto out;
	}
	if (load_header(kind, &head, cols, err) != 0)
		goto out;
	while ((cs = csv_next(&p, end, &rec, &line)) == CSV_OK) {
		json_t *row = load_record(kind, &rec, &head, cols, keys, err);
		csv_record_free(&rec);
		if (!row)
			goto out;
		if (count == cap)
			at = mem_realloc(at, (cap *= 2) * sizeof *at);
		at[count++] = rec.line;
		json_array_append_new(out, row);
	}
	if (cs == CSV_INVALID) {
		load_fail(err, line, "",
			  "not CSV: a quote out of place (a field with a comma, a quote or a line "
			  "break is written between double quotes, a quote in it doubled), or over "
			  "%d fields",
			  CSV_MAX_FIELDS);
		goto out;
	}
	*rows = out;
	*lines = at;
	out = NULL;
	at = NULL;
	rc = 0;
out:
	csv_record_free(&head);
	json_decref(keys);
	json_decref(out);
	free(at);
	return rc;
}
