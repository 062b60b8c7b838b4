/* A database unit's span (exec.h), as OpenTelemetry's database conventions (stable; their
 * PostgreSQL page) name it: kind CLIENT, named by its db.query.summary, with db.system.name
 * "postgresql", db.namespace (the database), server.address and server.port, the parameterised
 * db.query.text (never a parameter's value), db.operation.batch.size for a unit of several
 * statements, and on failure db.response.status_code and error.type (the SQLSTATE). Its
 * bikaroo.db.calls says how many calls shared it (a batch of reads). */
#ifndef BIKAROO_DBTRACE_H
#define BIKAROO_DBTRACE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/span.h"

/* The summaries of the named statements a pool sent, each made once: a prepared statement's
 * name stands for one text. The pool's (exec.c), touched on its loop's thread only. */
#define DBTRACE_MEMO 32
struct dbtrace_memo {
	const char *name[DBTRACE_MEMO]; /* static strings */
	char summary[DBTRACE_MEMO][128];
	size_t n;
};

/* A unit of the statements sql[0..n) (their texts, borrowed; name[i]: the prepared statement's
 * name, a static string, or NULL) is sent on pg for calls calls (0: its submitter alone): its
 * span, a child of parent, or NULL (parent NULL: not recorded). */
struct trace_span *dbtrace_begin(const struct trace_span *parent, const char *const *sql,
				 const char *const *name, size_t n, size_t calls, PGconn *pg,
				 struct dbtrace_memo *memo);
/* It ended: failed (nothing committed, or not known), bad (the result that says why, NULL:
 * none), timed_out. s ends; its context into *ctx (for the calls' links). */
void dbtrace_end(struct trace_span *s, bool failed, const PGresult *bad, bool timed_out,
		 struct trace_ctx *ctx);

/* The conventions' summary of one statement into out (cap bytes, terminated): its operation
 * (the first keyword; a WITH query's main one), then the schema-qualified objects it names, in
 * order and once each, e.g. "SELECT fleet.act_as fleet.bike_status_for". */
void dbtrace_summary(const char *sql, char *out, size_t cap);

#endif
