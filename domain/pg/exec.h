/* The database executor: one thread that owns a few connections of the configured database
 * (asynchronous libpq, pipeline mode) and keeps them busy with the statements handed to it, so
 * that no caller owns a connection or blocks one: a caller hands a statement over and waits
 * for its done() (common/task.h). Statements come from a queue (exec_submit, first come first
 * served) and, when the queue is empty and a connection is free, from the source (the read
 * batches of domain/reads.c), which then forms its statement from what waits for it. A
 * statement that does not answer by its deadline has its connection closed (a statement sent
 * may have committed: its caller hears FLEET_UNAVAILABLE, never a retry here); the other
 * connections go on. The process-wide singleton of the domain's database access, with db.c. */
#ifndef BIKAROO_EXEC_H
#define BIKAROO_EXEC_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "domain/types.h"

/* One statement. The submitter owns it (e.g. on its stack) until done() has been called. */
struct exec_stmt {
	/* The submitter's, borrowed until done(). */
	const char *name; /* its prepared statement's name (a static string) */
	const char *sql;
	int nparams;
	const char *const *params;
	long long until_ms; /* CLOCK_MONOTONIC ms by which it must have answered (0: no bound) */
	/* Called once, on the executor's thread, when res and st are set: it must not block. */
	void (*done)(struct exec_stmt *s);
	/* Set by the executor before done(). */
	PGresult *res;        /* new: the result, or the error result that says why (done() takes
				 it; may be NULL when there is none, e.g. the connection broke) */
	enum fleet_status st; /* FLEET_OK: res is a result with rows or a command's */
	bool timed_out;       /* st is FLEET_UNAVAILABLE because until_ms passed */
	/* The executor's. */
	struct exec_stmt *next;
	int phase;
	bool queued; /* came from the queue (not the source) */
};

/* Where statements come from when the queue is empty and a connection is free. */
struct exec_source {
	/* On the executor's thread: a statement to send now (its done() is called once it ended),
	 * or NULL; then *wake_ms (CLOCK_MONOTONIC ms, left as it is when not needed) says when to
	 * ask again even if nothing else happens (a batch that lingers). */
	struct exec_stmt *(*take)(void *arg, long long now_ms, long long *wake_ms);
	/* Whether it has something waiting (a cheap look, any thread). */
	bool (*pending)(void *arg);
	/* On the executor's thread, whatever the connections: ends what waits past its deadline
	 * (nothing was sent) and lowers *next_ms (CLOCK_MONOTONIC ms; 0: unset) to the earliest
	 * deadline left. */
	void (*expire)(void *arg, long long now_ms, long long *next_ms);
	void *arg;
};

/* The one source (set once, before it has anything to give); exec_kick() when it has. */
void exec_source_set(const struct exec_source *src);
void exec_kick(void);

/* Queues s. Thread-safe. The executor starts at the first statement, with the connections
 * db_configure() was given (conn.h). */
void exec_submit(struct exec_stmt *s);

/* Stops the thread (db_shutdown): statements not answered yet get FLEET_UNAVAILABLE, its
 * connections close; a later statement starts it anew. */
void exec_stop(void);

#endif
