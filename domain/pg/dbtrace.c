/* A database unit's span (dbtrace.h). */
#include "dbtrace.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/trace.h"

static bool dbtrace_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Appends word[0..n) to out (cap) after a space, unless out already holds it as a word. */
static void dbtrace_add(char *out, size_t cap, const char *word, size_t n)
{
	size_t len = strlen(out);
	for (const char *p = out; (p = strstr(p, " ")) != NULL; p++)
		if (strncmp(p + 1, word, n) == 0 && (p[1 + n] == ' ' || p[1 + n] == '\0'))
			return;
	if (len + 1 + n + 1 > cap)
		return;
	out[len] = ' ';
	memcpy(out + len + 1, word, n);
	out[len + 1 + n] = '\0';
}

/* Whether w[0..n) is one of the words after which a table is named. */
static bool dbtrace_names_table(const char *w, size_t n)
{
	static const char *const words[] = {"FROM", "JOIN", "INTO", "UPDATE", "TABLE"};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (n == strlen(words[i]) && strncasecmp(w, words[i], n) == 0)
			return true;
	return false;
}

void dbtrace_summary(const char *sql, char *out, size_t cap)
{
	static const char *const mains[] = {"SELECT", "INSERT", "UPDATE", "DELETE", "MERGE"};
	char op[16] = "";
	int depth = 0;
	bool table_next = false; /* the last word was FROM, JOIN... */
	out[0] = '\0';
	char targets[256] = "";
	for (const char *p = sql; *p;) {
		if (*p == '-' && p[1] == '-') { /* a comment to the end of the line */
			p += strcspn(p, "\n");
		} else if (*p == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");
			p = end ? end + 2 : p + strlen(p);
		} else if (*p == '\'') { /* a literal: never read, never summarised */
			for (p++; *p && !(*p == '\'' && p[1] != '\''); p += *p == '\'' ? 2 : 1)
				;
			p += *p != '\0';
		} else if (*p == '(' || *p == ')') {
			depth += *p++ == '(' ? 1 : -1;
		} else if (dbtrace_word_char(*p) || *p == '"') {
			const char *w = p;
			bool qualified = false;
			while (dbtrace_word_char(*p) || *p == '"' || (*p == '.' && p[1] != '.')) {
				qualified |= *p == '.';
				p++;
			}
			size_t n = (size_t)(p - w);
			if (!op[0] && n < sizeof op) {
				for (size_t i = 0; i < n; i++)
					op[i] = (char)toupper((unsigned char)w[i]);
				op[n] = '\0';
			} else if (strcmp(op, "WITH") == 0 && depth == 0) {
				for (size_t i = 0; i < sizeof mains / sizeof mains[0]; i++)
					if (n == strlen(mains[i]) &&
					    strncasecmp(w, mains[i], n) == 0)
						snprintf(op, sizeof op, "%s", mains[i]);
			}
			/* An object: a qualified function called, or a qualified table (not a
			 * column: alias.column). */
			const char *next = p + strspn(p, " \t\n");
			if (qualified && !isdigit((unsigned char)*w) &&
			    (*next == '(' || table_next))
				dbtrace_add(targets, sizeof targets, w, n);
			table_next = dbtrace_names_table(w, n);
		} else {
			p++;
		}
	}
	snprintf(out, cap, "%s%s", op, targets);
}

/* Statement i's summary into out (128 bytes): memo's when its name was seen, else made (and
 * kept in memo while it has room). */
static void dbtrace_one(const char *sql, const char *name, struct dbtrace_memo *memo, char out[128])
{
	for (size_t i = 0; name && i < memo->n; i++)
		if (memo->name[i] == name) {
			memcpy(out, memo->summary[i], 128);
			return;
		}
	dbtrace_summary(sql, out, 128);
	if (name && memo->n < DBTRACE_MEMO) {
		memo->name[memo->n] = name;
		memcpy(memo->summary[memo->n++], out, 128);
	}
}

/* Whether statement i's text is an earlier one's (each caller's read sends the same). */
static bool dbtrace_seen(const char *const *sql, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (sql[j] == sql[i] || strcmp(sql[j], sql[i]) == 0)
			return true;
	return false;
}

/* The unit's summary into out[136]: one statement's own; for several, "BATCH", then when they
 * all do the same operation (a unit's identity and its reads are each a SELECT) that operation
 * and every object they name, in order, each once (the conventions let a batch be named in the
 * system's own terms: "BATCH" alone says nothing of what was read). */
static void dbtrace_unit_summary(const char *const *sql, const char *const *name, size_t n,
				 struct dbtrace_memo *memo, char out[136])
{
	char first[128], one[128];
	dbtrace_one(n ? sql[0] : "", n ? name[0] : NULL, memo, first);
	if (n < 2) {
		snprintf(out, 136, "%s", first);
		return;
	}
	size_t oplen = strcspn(first, " ");
	snprintf(out, 136, "BATCH %.*s", (int)oplen, first);
	for (size_t i = 0; i < n; i++) {
		if (dbtrace_seen(sql, i))
			continue; /* the same read's statement: the same summary */
		if (i > 0)
			dbtrace_one(sql[i], name[i], memo, one);
		const char *s = i > 0 ? one : first;
		if (strcspn(s, " ") != oplen || strncmp(s, first, oplen) != 0) {
			snprintf(out, 136, "BATCH");
			return;
		}
		for (const char *w = s + oplen; *w == ' '; w += strcspn(w + 1, " ") + 1)
			dbtrace_add(out, 136, w + 1, strcspn(w + 1, " "));
	}
}

/* Appends p[0..n) to buf (cap bytes, not terminated) at *len, cut to the room left: the span's
 * room would cut it anyway. */
static void dbtrace_put(char *buf, size_t cap, size_t *len, const char *p, size_t n)
{
	if (n > cap - *len)
		n = cap - *len;
	memcpy(buf + *len, p, n);
	*len += n;
}

struct trace_span *dbtrace_begin(const struct trace_span *parent, const char *const *sql,
				 const char *const *name, size_t n, size_t calls, PGconn *pg,
				 struct dbtrace_memo *memo)
{
	struct trace_span *s = trace_child(parent, "postgresql", TRACE_CLIENT, 0);
	if (!s)
		return NULL;
	char summary[136];
	dbtrace_unit_summary(sql, name, n, memo, summary);
	trace_rename(s, summary, NULL);
	trace_str(s, "db.system.name", "postgresql");
	trace_str(s, "db.query.summary", summary);
	trace_str(s, "db.namespace", PQdb(pg));
	const char *port = PQport(pg);
	trace_str(s, "server.address", PQhost(pg));
	if (port && *port)
		trace_int(s, "server.port", strtol(port, NULL, 10));
	if (n > 1)
		trace_int(s, "db.operation.batch.size", (int64_t)n);
	if (calls)
		trace_int(s, "bikaroo.db.calls", (int64_t)calls);
	/* The parameterised text: each statement's once, in order (the values are never in it:
	 * they travel as parameters). */
	char text[TRACE_TEXT_MAX];
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		if (dbtrace_seen(sql, i))
			continue;
		if (len)
			dbtrace_put(text, sizeof text, &len, "; ", 2);
		dbtrace_put(text, sizeof text, &len, sql[i], strlen(sql[i]));
	}
	trace_strn(s, "db.query.text", text, len);
	return s;
}

void dbtrace_end(struct trace_span *s, bool failed, const PGresult *bad, bool timed_out,
		 struct trace_ctx *ctx)
{
	*ctx = trace_ctx_of(s);
	if (!s)
		return;
	const char *state = bad ? PQresultErrorField(bad, PG_DIAG_SQLSTATE) : NULL;
	if (state) {
		trace_str(s, "db.response.status_code", state);
		trace_str(s, "error.type", state);
	} else if (failed) {
		trace_str(s, "error.type", timed_out ? "timeout" : "connection_lost");
	}
	if (state || failed) /* a message may quote a value: with personal data only */
		trace_fail(s, trace_personal_data() && bad ? PQresultErrorMessage(bad) : NULL);
	trace_end(s, 0);
}
