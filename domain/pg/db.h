/* PostgreSQL access for the domain: one connection per worker thread, prepared statements,
 * reconnect on failure. Only domain/ includes this header. */
#ifndef BIKAROO_DB_H
#define BIKAROO_DB_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "common/mem.h"
#include "domain/types.h"

/* How the server reaches PostgreSQL. Strings borrowed (copied by db_configure). */
struct db_settings {
	const char *conninfo;        /* DATABASE_URL: the login role, possibly through a pooler */
	const char *listen_conninfo; /* a direct connection for LISTEN ("": conninfo) */
	bool transaction_pooler;     /* conninfo goes through a transaction-pooling PgBouncer:
					unnamed statements only (PQexecParams), since 1.18 cannot
					track named prepared statements across server connections */
	long statement_timeout_ms;   /* BIKAROO_CALL_TIMEOUT_MS: no statement (connecting
					included) is waited for longer, nor past the calling thread's
					call deadline (common/deadline.h); on a direct connection the
					server aborts it too (statement_timeout). 0: no bound */
	long executor_connections;   /* BIKAROO_DB_CONNECTIONS: the connections of the executor
					(exec.h) that runs the calls' statements; 0: 2 */
};

/* Stores the settings (copied). Call once before any worker uses the database. */
void db_configure(const struct db_settings *s);

/* Copies a column value (NULL: "") into a fixed field, truncating. */
void db_copy(char *dst, size_t cap, const char *src);
/* Whether a boolean column of row, col is true. */
bool db_true(const PGresult *res, int row, int col);

/* Looks up the columns names[0..n) of res by name into cols[0..n), once per result (rows are
 * then read at cols[i]): C never reads a column by position. FLEET_INTERNAL, logged with what
 * (the statement) and the first missing name, when res lacks one. */
enum fleet_status db_columns(const PGresult *res, const char *what, const char *const *names,
			     size_t n, int *cols) __attribute__((warn_unused_result));

/* A new connection of the configured database (notices go to the debug log), or NULL (logged).
 * For connections of their own; statements use db_exec_prepared(). */
PGconn *db_open(void);
/* The same on the direct connection for LISTEN (listen_conninfo, else conninfo): LISTEN does
 * not survive transaction pooling. */
PGconn *db_open_listen(void);

/* Opens a connection and checks that the login role is safe to serve with: not superuser,
 * not BYPASSRLS, owns no table of schema fleet. On refusal *why is set to a static message. */
enum fleet_status db_check_login_role(const char **why) __attribute__((warn_unused_result));
/* From now on every statement but the check gets FLEET_UNAVAILABLE until db_check_login_role()
 * has passed once: a server that starts before its database serves nothing as a role it has
 * not checked. */
void db_hold_until_checked(void);
/* Whether statements are held so (for readiness). */
bool db_held(void);

/* Runs prepared statement `name` (prepared on first use on this thread's connection from sql;
 * behind a transaction pooler, sql as an unnamed statement each time) with text parameters. Returns
 * the result (caller PQclear()s) or NULL with *st set. A connection found broken before the
 * statement was sent is reopened and the statement run once more, transparently; one that breaks
 * while it runs gives FLEET_UNAVAILABLE (it may have committed: never run twice). So does a
 * statement that does not answer within the statement timeout or the thread's call deadline:
 * its connection is closed and replaced at the next statement (it may have committed too).
 * Once the deadline passed, nothing more is sent: FLEET_UNAVAILABLE at once. */
PGresult *db_exec_prepared(const char *name, const char *sql, int nparams,
			   const char *const *params, enum fleet_status *st)
	__attribute__((warn_unused_result));

/* SQLSTATE of the calling thread's last statement that db_exec_prepared() reported as failed
 * ("" when none), e.g. to map 23505 or retry 40P01. Borrowed, valid until the next call. */
const char *db_last_sqlstate(void);

/* Whether statements are timing out now: one gave up waiting within the last 30 s and none
 * has answered since (for readiness, which then answers without a query of its own). */
bool db_stalled(void);

/* Closes the calling thread's connection, if it holds one (a thread that checks now and then,
 * not a worker: the next statement opens a new one). */
void db_release(void);

/* Closes every connection opened by any thread, and stops the executor (exec.h). Call at
 * shutdown only. */
void db_shutdown(void);

/* Appends to b a PostgreSQL array literal element by element: db_array_add() each value (NULL:
 * an SQL NULL; quoted, '"' and '\' escaped) between db_array_open() and db_array_close(); an
 * open inside an open array starts its next inner array (a two-dimensional literal). */
void db_array_open(struct mem_buf *b);
void db_array_add(struct mem_buf *b, const char *v);
void db_array_add_n(struct mem_buf *b, const char *v, size_t n);
void db_array_close(struct mem_buf *b);

/* When a statement the calling thread hands over now must have answered (CLOCK_MONOTONIC ms;
 * 0: never): the statement timeout, or the thread's call deadline when that is sooner. */
long long db_deadline_ms(void);

#endif
