/* One PostgreSQL connection per worker thread, prepared statements prepared lazily per connection.
 * No lock on the hot path: a mutex guards only the list of connections used at shutdown. */
#include "db.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/deadline.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "conn.h"
#include "exec.h"

#define DB_MAX_PREPARED 64

struct db_conn {
	PGconn *pg;
	const char *prepared[DB_MAX_PREPARED]; /* statement names (static strings) */
	int nprepared;
	struct db_conn *next;
};

static pthread_mutex_t db_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct db_conn *db_all;
static _Thread_local struct db_conn *db_mine;
static _Thread_local char db_sqlstate[6]; /* of this thread's last failed statement */

void db_configure(const struct db_settings *s)
{
	conn_configure(s->conninfo, s->listen_conninfo, s->transaction_pooler,
		       s->statement_timeout_ms, s->executor_connections);
}

/* When the statement about to run must have answered: the statement timeout, or the calling
 * thread's call deadline when that is sooner (CLOCK_MONOTONIC ms; 0: never). */
static long long db_until(void)
{
	long cap = conn_timeout_ms() > 0 ? conn_timeout_ms() : 24L * 3600 * 1000;
	long left = deadline_left_ms(cap);
	if (left == cap && conn_timeout_ms() <= 0)
		return 0;
	return conn_now_ms() + left;
}

long long db_deadline_ms(void)
{
	return db_until();
}

/* Waits for events on pg's socket until `until` (0: no limit); false when the time is up. */
static bool db_poll(PGconn *pg, short events, long long until)
{
	for (;;) {
		long long left = until ? until - conn_now_ms() : -1;
		if (until && left <= 0)
			return false;
		struct pollfd p = {.fd = PQsocket(pg), .events = events};
		int n = poll(&p, 1, until ? (int)(left > 60000 ? 60000 : left) : -1);
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return true; /* let libpq find the fault on its next read or write */
	}
}

bool db_stalled(void)
{
	return conn_stalled();
}

void db_copy(char *dst, size_t cap, const char *src)
{
	/* Several per row on the hot path: a copy, not a format (the profile showed printf). */
	size_t n = src ? strnlen(src, cap - 1) : 0;
	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

bool db_true(const PGresult *res, int row, int col)
{
	return strcmp(PQgetvalue(res, row, col), "t") == 0;
}

/* Sends what libpq holds for pg and waits for the statement's result, until `until` (0: no
 * limit). Returns the last result (caller PQclear()s; NULL when the connection broke), or NULL
 * with *timed_out when the time was up first. */
static PGresult *db_wait(PGconn *pg, long long until, bool *timed_out)
{
	*timed_out = false;
	int f;
	while ((f = PQflush(pg)) > 0) {
		if (!db_poll(pg, POLLOUT | POLLIN, until)) {
			*timed_out = true;
			return NULL;
		}
		if (!PQconsumeInput(pg))
			break;
	}
	PGresult *last = NULL;
	for (;;) {
		while (PQisBusy(pg)) {
			if (!db_poll(pg, POLLIN, until)) {
				*timed_out = true;
				PQclear(last);
				return NULL;
			}
			if (!PQconsumeInput(pg))
				break; /* broken: PQgetResult says so */
		}
		PGresult *r = PQgetResult(pg);
		if (!r)
			break;
		PQclear(last);
		last = r;
		if (PQstatus(pg) == CONNECTION_BAD)
			break;
	}
	return last;
}

PGconn *db_open(void)
{
	return conn_open(conn_info());
}

/* A worker's connection, established by `until` (0: no limit) rather than libpq's own
 * connect_timeout, non-blocking from then on (statements are sent and awaited by db_wait),
 * with the statement timeout set on the server's side when no pooler is in between (a
 * session setting there would outlive the transaction). NULL (logged) on failure. */
static PGconn *db_connect_worker(long long until)
{
	PGconn *pg = conn_start(conn_info());
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
	while (pg && PQstatus(pg) != CONNECTION_BAD && ps != PGRES_POLLING_OK &&
	       ps != PGRES_POLLING_FAILED) {
		if (!db_poll(pg, ps == PGRES_POLLING_READING ? POLLIN : POLLOUT, until)) {
			conn_failed("no answer within the call timeout (BIKAROO_CALL_TIMEOUT_MS)");
			PQfinish(pg);
			conn_count_error("timeout");
			conn_note_timeout();
			return NULL;
		}
		ps = PQconnectPoll(pg);
	}
	if (!pg || PQstatus(pg) != CONNECTION_OK) {
		conn_failed(pg ? PQerrorMessage(pg) : "no memory");
		PQfinish(pg);
		conn_count_error("connect");
		return NULL;
	}
	conn_ready(pg);
	if (!conn_pooled() && conn_timeout_ms() > 0) {
		char sql[64];
		snprintf(sql, sizeof sql, "SET statement_timeout = %ld", conn_timeout_ms());
		bool timed_out = false;
		PGresult *r = PQsendQuery(pg, sql) ? db_wait(pg, until, &timed_out) : NULL;
		bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		PQclear(r);
		if (!ok) {
			log_error("database connection failed: cannot set statement_timeout%s",
				  timed_out ? " within the call timeout" : "");
			conn_close(pg);
			conn_count_error(timed_out ? "timeout" : "connect");
			if (timed_out)
				conn_note_timeout();
			return NULL;
		}
	}
	return pg;
}

PGconn *db_open_listen(void)
{
	return conn_open(conn_listen_info());
}

static struct db_conn *db_thread_conn(enum fleet_status *st)
{
	if (db_mine && PQstatus(db_mine->pg) == CONNECTION_OK)
		return db_mine;
	if (!db_mine) {
		db_mine = mem_calloc(1, sizeof *db_mine);
		pthread_mutex_lock(&db_list_lock);
		db_mine->next = db_all;
		db_all = db_mine;
		pthread_mutex_unlock(&db_list_lock);
	}
	if (db_mine->pg) {
		conn_close(db_mine->pg);
		metrics_add(&metrics_db_connections, NULL, -1);
	}
	db_mine->nprepared = 0;
	db_mine->pg = db_connect_worker(db_until());
	if (db_mine->pg)
		metrics_add(&metrics_db_connections, NULL, 1);
	if (!db_mine->pg) {
		*st = FLEET_UNAVAILABLE;
		return NULL;
	}
	return db_mine;
}

static bool db_is_prepared(const struct db_conn *c, const char *name)
{
	for (int i = 0; i < c->nprepared; i++)
		if (c->prepared[i] == name || strcmp(c->prepared[i], name) == 0)
			return true;
	return false;
}

/* Prepares (once per connection) and runs the statement. *sent tells whether the statement may
 * have reached the server: until then a broken connection can be retried without running it
 * twice. */
static PGresult *db_try(struct db_conn *c, const char *name, const char *sql, int nparams,
			const char *const *params, enum fleet_status *st, bool *sent,
			bool *timed_out)
{
	*sent = false;
	*timed_out = false;
	long long until = db_until();
	/* A backend that ended while the connection sat idle (a restart, an administrator's
	 * terminate) has left its goodbye to read: find out now, before sending anything. The
	 * goodbye is a FATAL message, which libpq takes as a notice, then the end of the stream,
	 * which only the next read sees: hence two reads (each returns at once on a live one). */
	if (!PQconsumeInput(c->pg) || !PQconsumeInput(c->pg) || PQstatus(c->pg) != CONNECTION_OK) {
		*st = FLEET_UNAVAILABLE;
		return NULL;
	}
	/* Behind a transaction pooler: parse, bind and execute an unnamed statement in one of
	 * its transactions, so nothing named outlives it on a server connection that another
	 * client gets next. */
	if (!conn_pooled() && !db_is_prepared(c, name)) {
		PGresult *p = PQsendPrepare(c->pg, name, sql, nparams, NULL)
				      ? db_wait(c->pg, until, timed_out)
				      : NULL;
		if (*timed_out) {
			*st = FLEET_UNAVAILABLE;
			return NULL;
		}
		if (PQresultStatus(p) != PGRES_COMMAND_OK) {
			*st = conn_status(p, c->pg);
			log_error("prepare %s failed: %s", name, PQresultErrorMessage(p));
			PQclear(p);
			return NULL;
		}
		PQclear(p);
		if (c->nprepared < DB_MAX_PREPARED)
			c->prepared[c->nprepared++] = name;
	}
	*sent = true;
	int queued = conn_pooled()
			     ? PQsendQueryParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0)
			     : PQsendQueryPrepared(c->pg, name, nparams, params, NULL, NULL, 0);
	PGresult *res = queued ? db_wait(c->pg, until, timed_out) : NULL;
	if (*timed_out) {
		*st = FLEET_UNAVAILABLE;
		return NULL;
	}
	ExecStatusType rs = PQresultStatus(res);
	if (rs == PGRES_TUPLES_OK || rs == PGRES_COMMAND_OK) {
		*st = FLEET_OK;
		return res;
	}
	*st = conn_status(res, c->pg);
	return res; /* caller inspects SQLSTATE, or clears it */
}

#define DB_CHECK_STATEMENT "check_login_role"

/* db_hold_until_checked() was called and db_check_login_role() has not passed yet. */
static atomic_bool db_holding;

void db_hold_until_checked(void)
{
	atomic_store(&db_holding, true);
}

bool db_held(void)
{
	return atomic_load(&db_holding);
}

static PGresult *db_exec_counted(const char *name, const char *sql, int nparams,
				 const char *const *params, enum fleet_status *st);

PGresult *db_exec_prepared(const char *name, const char *sql, int nparams,
			   const char *const *params, enum fleet_status *st)
{
	if (task_in())
		return db_exec_counted(name, sql, nparams, params, st); /* the executor counts */
	metrics_add(&metrics_db_busy, NULL, 1);
	PGresult *res = db_exec_counted(name, sql, nparams, params, st);
	metrics_add(&metrics_db_busy, NULL, -1);
	return res;
}

/* A statement handed to the executor, and its caller's wait. */
struct db_job {
	struct exec_stmt s;
	struct task_wait wait;
};

static void db_job_done(struct exec_stmt *s)
{
	task_wake(&((struct db_job *)s)->wait);
}

/* db_exec_prepared() for a call run as a task: the executor runs the statement on one of its
 * connections, the task parks meanwhile (its worker goes on with other calls). */
static PGresult *db_exec_handed(const char *name, const char *sql, int nparams,
				const char *const *params, enum fleet_status *st)
{
	if (deadline_passed()) {
		*st = FLEET_UNAVAILABLE;
		return NULL;
	}
	struct db_job j = {.s = {.name = name,
				 .sql = sql,
				 .nparams = nparams,
				 .params = params,
				 .until_ms = db_until(),
				 .done = db_job_done}};
	task_wait_init(&j.wait);
	exec_submit(&j.s);
	task_wait(&j.wait);
	task_wait_destroy(&j.wait);
	*st = j.s.st;
	if (j.s.st == FLEET_OK)
		return j.s.res;
	PGresult *res = j.s.res;
	if (res) {
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		snprintf(db_sqlstate, sizeof db_sqlstate, "%s", state ? state : "");
		conn_count_error("statement");
		log_error("statement %s failed: %s", name, PQresultErrorMessage(res));
		PQclear(res);
	}
	return NULL;
}

/* db_exec_prepared() proper, counting its failures. */
static PGresult *db_exec_counted(const char *name, const char *sql, int nparams,
				 const char *const *params, enum fleet_status *st)
{
	db_sqlstate[0] = '\0';
	if (atomic_load(&db_holding) && strcmp(name, DB_CHECK_STATEMENT) != 0) {
		*st = FLEET_UNAVAILABLE;
		return NULL;
	}
	if (task_in())
		return db_exec_handed(name, sql, nparams, params, st);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (deadline_passed()) {
			/* The call is over: nothing more is sent for it. */
			*st = FLEET_UNAVAILABLE;
			return NULL;
		}
		struct db_conn *c = db_thread_conn(st);
		if (!c)
			return NULL;
		bool sent, timed_out;
		PGresult *res = db_try(c, name, sql, nparams, params, st, &sent, &timed_out);
		if (*st == FLEET_OK) {
			conn_note_answer();
			return res;
		}
		if (timed_out) {
			/* No answer in time: the path may be frozen (a partition, a stuck proxy)
			 * with the connection still open. The connection's state is unknown, so it
			 * is closed (the server ends the statement at its statement_timeout) and
			 * the next statement opens another. Sent, it may have committed: the caller
			 * hears "unavailable", never a retry here. */
			conn_close(c->pg);
			metrics_add(&metrics_db_connections, NULL, -1);
			c->pg = NULL;
			conn_note_timeout();
			conn_count_error("timeout");
			log_error("statement %s: no answer within the call timeout "
				  "(BIKAROO_CALL_TIMEOUT_MS); its connection is closed",
				  name);
			return NULL;
		}
		if (*st == FLEET_UNAVAILABLE && PQstatus(c->pg) != CONNECTION_OK) {
			/* The connection broke (a restarted server, a terminated backend). Before
			 * the statement was sent, reconnect once and retry. After, it may have
			 * committed with its answer lost: running it again could write twice, so
			 * the caller hears "unavailable" and a retry is the client's (idempotency
			 * keys make it safe). */
			PQclear(res);
			conn_close(c->pg);
			metrics_add(&metrics_db_connections, NULL, -1);
			c->pg = NULL;
			if (!sent)
				continue;
			conn_count_error("lost");
			log_error("statement %s: connection lost while it ran", name);
			return NULL;
		}
		const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
		snprintf(db_sqlstate, sizeof db_sqlstate, "%s", state ? state : "");
		conn_count_error("statement");
		if (res)
			log_error("statement %s failed: %s", name, PQresultErrorMessage(res));
		PQclear(res);
		return NULL;
	}
	return NULL;
}

const char *db_last_sqlstate(void)
{
	return db_sqlstate;
}

enum fleet_status db_check_login_role(const char **why)
{
	static const char sql[] =
		"SELECT r.rolsuper AS superuser, r.rolbypassrls AS bypassrls,"
		" (SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
		"   ON n.oid = c.relnamespace WHERE n.nspname = 'fleet'"
		"   AND c.relowner = r.oid) AS owned"
		" FROM pg_catalog.pg_roles r WHERE r.rolname = current_user";
	static const char *const names[] = {"superuser", "bypassrls", "owned"};
	int col[3];
	enum fleet_status st;
	PGresult *res = db_exec_prepared(DB_CHECK_STATEMENT, sql, 0, NULL, &st);
	if (!res) {
		*why = "cannot query the database";
		return st;
	}
	if (PQntuples(res) != 1 || db_columns(res, "check_login_role", names, 3, col) != FLEET_OK) {
		*why = "cannot read the login role";
		st = FLEET_INTERNAL;
	} else if (db_true(res, 0, col[0])) {
		*why = "the login role is a superuser: row-level security would not apply";
		st = FLEET_FORBIDDEN;
	} else if (db_true(res, 0, col[1])) {
		*why = "the login role has BYPASSRLS: row-level security would not apply";
		st = FLEET_FORBIDDEN;
	} else if (strcmp(PQgetvalue(res, 0, col[2]), "0") != 0) {
		*why = "the login role owns tables of schema fleet: use a separate owner role";
		st = FLEET_FORBIDDEN;
	} else {
		atomic_store(&db_holding, false);
	}
	PQclear(res);
	/* The thread that checks (start-up, or the wait for a database that was down) runs no
	 * other statement: its connection is not kept idle beside the workers'. */
	if (db_mine && db_mine->pg) {
		conn_close(db_mine->pg);
		db_mine->pg = NULL;
		metrics_add(&metrics_db_connections, NULL, -1);
	}
	return st;
}

void db_release(void)
{
	if (!db_mine || !db_mine->pg)
		return;
	conn_close(db_mine->pg);
	db_mine->pg = NULL;
	db_mine->nprepared = 0;
	metrics_add(&metrics_db_connections, NULL, -1);
}

void db_shutdown(void)
{
	exec_stop();
	pthread_mutex_lock(&db_list_lock);
	struct db_conn *c = db_all;
	db_all = NULL;
	pthread_mutex_unlock(&db_list_lock);
	while (c) {
		struct db_conn *next = c->next;
		if (c->pg)
			PQfinish(c->pg);
		free(c);
		c = next;
	}
	db_mine = NULL;
	conn_free();
}

enum fleet_status db_columns(const PGresult *res, const char *what, const char *const *names,
			     size_t n, int *cols)
{
	for (size_t i = 0; i < n; i++) {
		cols[i] = PQfnumber(res, names[i]);
		if (cols[i] < 0) {
			log_error("%s: the result has no column %s", what, names[i]);
			return FLEET_INTERNAL;
		}
	}
	return FLEET_OK;
}

void db_array_open(struct mem_buf *b)
{
	/* An inner array of a multidimensional one follows its sibling after a comma. */
	if (b->len && b->p[b->len - 1] == '}')
		mem_buf_put(b, ",", 1);
	mem_buf_put(b, "{", 1);
}

void db_array_add_n(struct mem_buf *b, const char *v, size_t n)
{
	if (b->p[b->len - 1] != '{')
		mem_buf_put(b, ",", 1);
	if (!v) {
		mem_buf_put(b, "NULL", 4);
		return;
	}
	mem_buf_put(b, "\"", 1);
	const char *s = v, *end = v + n;
	while (s < end) {
		size_t run = strcspn(s, "\"\\");
		if (run > (size_t)(end - s))
			run = (size_t)(end - s);
		mem_buf_put(b, s, run);
		s += run;
		if (s >= end)
			break;
		mem_buf_put(b, "\\", 1);
		mem_buf_put(b, s, 1);
		s++;
	}
	mem_buf_put(b, "\"", 1);
}

void db_array_add(struct mem_buf *b, const char *v)
{
	db_array_add_n(b, v, v ? strlen(v) : 0);
}

void db_array_close(struct mem_buf *b)
{
	mem_buf_put(b, "}", 1);
}
