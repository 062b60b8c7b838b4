/* PostgreSQL access for the domain: the settings, and one statement at a time through the
 * executor (exec.h) of the calling code's loop, waited for without holding a thread (a task
 * parks, other code turns its thread's private loop). Only domain/ includes this header. */
#ifndef BIKAROO_DB_H
#define BIKAROO_DB_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "domain/types.h"
#include "exec.h"

/* How the server reaches PostgreSQL. Strings borrowed (copied by db_configure). */
struct db_settings {
	const char *conninfo;        /* DATABASE_URL: the login role, possibly through a pooler */
	const char *listen_conninfo; /* a direct connection for LISTEN ("": conninfo) */
	bool transaction_pooler;     /* conninfo goes through a transaction-pooling PgBouncer:
					unnamed statements only (PQexecParams), since 1.18 cannot
					track named prepared statements across server connections */
	long statement_timeout_ms;   /* BIKAROO_CALL_TIMEOUT_MS: no statement (connecting
					included) is waited for longer, nor past the running call's
					deadline (common/task.h); on a direct connection the server
					aborts it too (statement_timeout). 0: no bound */
	long connections;            /* BIKAROO_DB_CONNECTIONS: each serving loop's; 0: 2 */
};

/* Stores the settings (copied). Call once before any statement. */
void db_configure(const struct db_settings *s);

/* How a statement failed: its status and, when the server said why, its SQLSTATE ("" else). */
struct db_error {
	enum fleet_status st;
	char sqlstate[6];
	char message[512]; /* db_session_exec: the server's message on one line, or "" */
	/* db_session_exec: the server's refusal itself (new: the caller PQclear()s it), for the
	 * fields its message does not say (a constraint's name, a column's), or NULL. */
	PGresult *refusal;
};

/* Runs one statement (prepared as `name` on each connection on first use; behind a transaction
 * pooler, unnamed each time) with text parameters and waits for it, as a write (exec.h): it may
 * wait on row locks, so it never takes its loop's last free connection, and the server ends it
 * at the call's deadline (statement_timeout), rolled back. Returns the result (caller
 * PQclear()s), or NULL with *err set: FLEET_UNAVAILABLE when it could not run, was ended by the
 * server for its time (SQLSTATE 57014 or 55P03: nothing committed) or ran without an answer in
 * time (it may have committed: never run twice), FLEET_INTERNAL for an error the server
 * reported (logged). Once the call's deadline passed, nothing is sent. */
PGresult *db_exec(const char *name, const char *sql, int nparams, const char *const *params,
		  struct db_error *err) __attribute__((warn_unused_result));
/* The same for a statement that waits on no row lock (an audit row, a catalog read): it may take
 * its loop's last free connection, beside the reads. */
PGresult *db_exec_brief(const char *name, const char *sql, int nparams, const char *const *params,
			struct db_error *err) __attribute__((warn_unused_result));

/* Submits u and waits for it (u->st, its statements' results: the caller clears them). */
void db_run(struct exec_unit *u);

/* One statement on a session of one's own (exec.h), waited for: as db_exec, but unnamed, and
 * the server's error message in err->message and its refusal in err->refusal when it refused it
 * (a simple session's statement may hold several commands; an empty one is fine). */
PGresult *db_session_exec(struct exec_session *s, const char *sql, int nparams,
			  const char *const *params, struct db_error *err)
	__attribute__((warn_unused_result));

/* Copies a column value (NULL: "") into a fixed field, truncating. */
void db_copy(char *dst, size_t cap, const char *src);
/* Whether a boolean column of row, col is true. */
bool db_true(const PGresult *res, int row, int col);

/* Looks up the columns names[0..n) of res by name into cols[0..n): FLEET_INTERNAL, logged with
 * what (the statement) and the first name missing, when res lacks one. */
enum fleet_status db_columns(const PGresult *res, const char *what, const char *const *names,
			     size_t n, int *cols) __attribute__((warn_unused_result));

/* A direct connection for LISTEN (listen_conninfo, else conninfo), waited for, or NULL
 * (logged): the change feed's, the one connection outside the executor (LISTEN does not survive
 * transaction pooling, and it only receives). */
PGconn *db_open_listen(void);

/* Checks that the login role is safe to serve with: not superuser, not BYPASSRLS, owns no
 * table of schema fleet. On refusal *why is set to a static message. */
enum fleet_status db_check_login_role(const char **why) __attribute__((warn_unused_result));
/* From now on every statement but the check gets FLEET_UNAVAILABLE until db_check_login_role()
 * has passed once: a server that starts before its database serves nothing as a role it has
 * not checked. */
void db_hold_until_checked(void);
/* Whether statements are held so (for readiness). */
bool db_held(void);

/* Whether statements are timing out now: one gave up waiting within the last 30 s and none
 * has answered since (for readiness, which then answers without a query of its own). */
bool db_stalled(void);

/* Closes the calling thread's private loop and its connections (a thread that checks now and
 * then, not a serving loop: the next statement opens new ones). */
void db_release(void);

/* At shutdown, once no loop serves: the calling thread's connections close, the settings go. */
void db_shutdown(void);

#endif
