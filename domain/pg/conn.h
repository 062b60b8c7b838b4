/* The configured database and what every connection of the server shares: the conninfo and its
 * defaults, the pooler mode, the statement timeout, how a failed result maps to a status, the
 * error counters and the "statements time out" signal. Used by the executor (exec.c), db.c and
 * the change feed's connection; only domain/ includes this header. */
#ifndef BIKAROO_CONN_H
#define BIKAROO_CONN_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "domain/types.h"

/* Stores the settings (strings copied; listen_conninfo NULL or "": conninfo). */
void conn_configure(const char *conninfo, const char *listen_conninfo, bool pooled, long timeout_ms,
		    long per_loop);
/* Frees what conn_configure() copied (shutdown). */
void conn_free(void);

/* What the configuration says (borrowed strings, valid until the next conn_configure). */
const char *conn_info(void);
const char *conn_listen_info(void);
bool conn_pooled(void);     /* a transaction pooler: unnamed statements only */
long conn_timeout_ms(void); /* BIKAROO_CALL_TIMEOUT_MS; 0: no bound */
long conn_per_loop(void);   /* BIKAROO_DB_CONNECTIONS: a serving loop's connections */

/* When a statement handed over now must have answered (CLOCK_MONOTONIC ms; 0: never): the
 * statement timeout, or the running call's deadline (common/task.h) when that is sooner. */
long long conn_deadline_ms(void);

/* Statements held until the login role is checked (db.h, db_hold_until_checked): held or not;
 * whether they are. */
void conn_hold(bool held);
bool conn_held(void);

/* A connection attempt to conninfo with the server's defaults (TCP keepalives, a user timeout),
 * to be completed with PQconnectPoll; NULL when libpq had no memory. */
PGconn *conn_start(const char *conninfo);
/* The same, waited for (a connection of its own: LISTEN, a check); NULL (logged) on failure. */
PGconn *conn_open(const char *conninfo);
/* A connection just made: notices to the debug log, non-blocking. */
void conn_ready(PGconn *pg);
/* Whether pg, idle, is still there: the server may have ended it while idle (an administrator's
 * pg_terminate_backend, a restart) before its loop read its socket. What arrived is read first,
 * so that no unit is sent into a connection already gone: a unit sent may have committed and is
 * never run again, so it would fail its call. */
bool conn_idle_alive(PGconn *pg);
/* Closes a connection whose state is unknown without waiting on it (NULL: nothing). */
void conn_close(PGconn *pg);
/* A connection attempt failed: logged once a minute at most, with why (host and role, never the
 * password). */
void conn_failed(const char *why);

/* The statements a connection prepared (parsed once, by name, in the round trip of their
 * first execution): names are static strings; past the room, a name is parsed each time. */
#define CONN_MAX_PREPARED 64
struct conn_prepared {
	const char *name[CONN_MAX_PREPARED];
	int n;
};
bool conn_prepared_has(const struct conn_prepared *p, const char *name);
void conn_prepared_add(struct conn_prepared *p, const char *name);
/* name's Parse failed: the next unit of that name prepares it again. */
void conn_prepared_forget(struct conn_prepared *p, const char *name);

/* The status of a failed result of pg: FLEET_UNAVAILABLE for a lost connection, an
 * administrator's shutdown, a server that cannot take connections, a statement cancelled (its
 * statement_timeout) or a lock not had in time (lock_timeout), else FLEET_INTERNAL. */
enum fleet_status conn_status(const PGresult *res, PGconn *pg);
/* Whether the server ended res's statement for its time: statement_timeout (or a cancel,
 * SQLSTATE 57014) or lock_timeout (55P03). Its transaction rolled back, the connection is fine. */
bool conn_cancelled(const PGresult *res);
/* Counts a database error of that kind (connect, lost, timeout, statement). */
void conn_count_error(const char *kind);
/* A statement timed out / answered; whether statements time out now (one gave up within the
 * last 30 s and none has answered since). */
void conn_note_timeout(void);
void conn_note_answer(void);
bool conn_stalled(void);

#endif
