/* The database executor: how every statement of the server reaches PostgreSQL. Each loop
 * (common/loop.h) owns its connections of the configured database, asynchronous libpq in
 * pipeline mode, watched by the loop itself: a statement is handed over as part of a unit, sent
 * at the loop's next turn on a free connection, and its unit's done() runs on the same thread
 * when its results are in. A unit is statements sent back to back with one Sync: one
 * transaction, one round trip. Units queue first come first served, but writes may hold every
 * connection of a loop but one, and a write that waits for a connection holds nothing up: slow
 * writes (reports waiting on a bike's row) never hold up its reads. The server ends a unit at
 * its deadline (a statement_timeout of what is left, set in its transaction, pooler or not): it
 * rolls back and its connection stays. A unit whose cancellation does not come either has its
 * connection closed (it may have committed: its caller hears FLEET_UNAVAILABLE, never a retry
 * here).
 *
 * A session is a connection of one's own on the calling code's loop, for a conninfo of one's
 * own (the admin commands, migrations as the owner role): the same units, one after the other,
 * so that a transaction may span them; a simple session speaks the simple query protocol (a
 * unit of one statement, which may hold several commands: a migration file). */
#ifndef BIKAROO_EXEC_H
#define BIKAROO_EXEC_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/span.h"
#include "domain/types.h"

struct loop;

/* One statement of a unit; the submitter's until done(). */
struct exec_stmt {
	const char *name; /* its prepared statement's name (a static string); NULL: unnamed */
	const char *sql;
	int nparams;
	const char *const *params; /* text, NULL for SQL NULL */
	PGresult *res;             /* out, new: its result; NULL when it did not run */
	bool parse;                /* the executor's: prepared in this unit */
};

struct exec_unit {
	struct exec_stmt *stmts; /* borrowed until done() */
	size_t n;
	long long until_ms; /* CLOCK_MONOTONIC ms by which it must have answered (0: no bound) */
	bool write;         /* may wait on row locks: never takes a loop's last free connection */
	/* Called once, on the loop's thread, when the out fields are set: it must not wait. */
	void (*done)(struct exec_unit *u);
	/* out */
	enum fleet_status st; /* FLEET_OK: every statement ran and the transaction committed */
	bool timed_out;       /* FLEET_UNAVAILABLE because until_ms passed (or the server ended
				 it for its time: statement_timeout, lock_timeout; rolled back) */
	/* The server refused it (an error it reported: a statement's or the COMMIT's, the
	 * connection fine): nothing of it committed, so that it may be run again in parts. */
	bool rolled_back;
	PGresult *error; /* new or NULL: the error that ended it when no statement's res holds it
			    (the COMMIT's) */
	const char *why; /* or NULL: why no connection could take it (libpq's message; valid
			    during done()) */
	/* Its span (common/trace.h), a child of trace_parent (NULL: the span the submitting code
	 * runs in), from when it is sent to its end, serving trace_calls calls (0: its submitter
	 * alone); out: that span's context (invalid: not recorded), for the calls' links. */
	struct trace_span *trace_parent;
	size_t trace_calls;
	struct trace_ctx trace;
	/* the executor's */
	struct exec_unit *next;
	size_t at;   /* the result group being read: a Parse's or a statement's */
	size_t lead; /* result groups of the unit's statement_timeout still to read */
	bool sync;   /* every group read: the Sync's result is next */
	struct trace_span *span;
};

/* Queues u on the calling code's loop (task_loop()), for its default connections. */
void exec_submit(struct exec_unit *u);
/* Whether a unit submitted now by the calling code (of write or not) would be sent at the
 * loop's next turn: a connection of its loop is free for it and nothing queued before it. */
bool exec_room(bool write);

struct exec_session;
/* A connection of one's own to conninfo (NULL: the configured database), on the calling code's
 * loop (made when its first unit is sent). simple: the simple query protocol. Free with
 * exec_session_close. */
struct exec_session *exec_session_new(const char *conninfo, bool simple);
/* Queues u on s (a simple session's units hold one statement). */
void exec_session_submit(struct exec_session *s, struct exec_unit *u);
/* Its connection (NULL before its first unit), for libpq's helpers (PQescapeIdentifier...). */
PGconn *exec_session_conn(struct exec_session *s);
void exec_session_close(struct exec_session *s);

#endif
