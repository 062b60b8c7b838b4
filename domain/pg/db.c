/* One statement at a time through the executor (db.h). */
#include "db.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/task.h"
#include "conn.h"

void db_configure(const struct db_settings *s)
{
	conn_configure(s->conninfo, s->listen_conninfo, s->transaction_pooler,
		       s->statement_timeout_ms, s->connections);
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

PGconn *db_open_listen(void)
{
	return conn_open(conn_listen_info());
}

/* A unit's end: its waiter goes on. */
struct db_job {
	struct exec_unit u;
	struct task_wait wait;
};

static void db_job_done(struct exec_unit *u)
{
	task_wake(&((struct db_job *)u)->wait);
}

/* Submits u (to s, or to its loop's connections) and waits for it. */
static void db_wait_for(struct exec_session *s, struct exec_unit *u)
{
	struct db_job j = {.u = *u};
	j.u.done = db_job_done;
	task_wait_init(&j.wait);
	if (s)
		exec_session_submit(s, &j.u);
	else
		exec_submit(&j.u);
	task_wait(&j.wait);
	*u = j.u;
}

void db_run(struct exec_unit *u)
{
	db_wait_for(NULL, u);
}

/* How u's one statement s failed (bad: its refusal, else found in s and u), into err (logged as
 * name unless name is NULL: a session's caller says it its own way); its results cleared. */
static void db_failed(const char *name, const PGresult *bad, struct exec_stmt *s,
		      struct exec_unit *u, struct db_error *err)
{
	if (!bad)
		bad = u->error ? u->error : s->res;
	if (bad && PQresultStatus(bad) == PGRES_FATAL_ERROR) {
		const char *state = PQresultErrorField(bad, PG_DIAG_SQLSTATE);
		snprintf(err->sqlstate, sizeof err->sqlstate, "%s", state ? state : "");
		snprintf(err->message, sizeof err->message, "%s", PQresultErrorMessage(bad));
		for (char *p = err->message; *p; p++)
			if (*p == '\n' || *p == '\t')
				*p = ' ';
		size_t n = strlen(err->message);
		while (n && err->message[n - 1] == ' ')
			err->message[--n] = '\0';
		conn_count_error(u->timed_out ? "timeout" : "statement");
		if (name)
			log_msg(u->timed_out ? LOG_WARN : LOG_ERROR, NULL, "statement %s %s: %s",
				name, u->timed_out ? "ended at its deadline" : "failed",
				err->message);
	} else if (u->timed_out && name) {
		log_error(
			"statement %s: no answer within the call timeout (BIKAROO_CALL_TIMEOUT_MS)",
			name);
	} else if (u->why) {
		snprintf(err->message, sizeof err->message, "%s", u->why);
	}
	PQclear(s->res);
	s->res = NULL;
	PQclear(u->error);
	u->error = NULL;
}

PGresult *db_session_exec(struct exec_session *es, const char *sql, int nparams,
			  const char *const *params, struct db_error *err)
{
	*err = (struct db_error){.st = FLEET_UNAVAILABLE};
	struct exec_stmt s = {.sql = sql, .nparams = nparams, .params = params};
	struct exec_unit u = {.stmts = &s, .n = 1, .until_ms = conn_deadline_ms()};
	db_wait_for(es, &u);
	err->st = u.st;
	if (u.st == FLEET_OK)
		return s.res;
	/* The refusal: the statement's error, or the unit's (a simple session keeps it there). */
	PGresult **refusal = s.res && PQresultStatus(s.res) == PGRES_FATAL_ERROR       ? &s.res
			     : u.error && PQresultStatus(u.error) == PGRES_FATAL_ERROR ? &u.error
										       : NULL;
	if (refusal) {
		err->refusal = *refusal; /* the caller's */
		*refusal = NULL;
	}
	db_failed(NULL, err->refusal, &s, &u, err);
	return NULL;
}

#define DB_CHECK_STATEMENT "check_login_role"

void db_hold_until_checked(void)
{
	conn_hold(true);
}

bool db_held(void)
{
	return conn_held();
}

/* db_exec and db_exec_brief: one statement, a write or not (exec.h). */
static PGresult *db_exec_one(const char *name, const char *sql, int nparams,
			     const char *const *params, bool write, struct db_error *err)
{
	*err = (struct db_error){.st = FLEET_UNAVAILABLE};
	if ((conn_held() && strcmp(name, DB_CHECK_STATEMENT) != 0) || task_deadline_passed())
		return NULL; /* the call is over, or the database not checked: nothing is sent */
	struct exec_stmt s = {.name = name, .sql = sql, .nparams = nparams, .params = params};
	struct exec_unit u = {.stmts = &s, .n = 1, .until_ms = conn_deadline_ms(), .write = write};
	db_run(&u);
	err->st = u.st;
	if (u.st == FLEET_OK) {
		PQclear(u.error);
		return s.res;
	}
	db_failed(name, NULL, &s, &u, err);
	return NULL;
}

PGresult *db_exec(const char *name, const char *sql, int nparams, const char *const *params,
		  struct db_error *err)
{
	return db_exec_one(name, sql, nparams, params, true, err);
}

PGresult *db_exec_brief(const char *name, const char *sql, int nparams, const char *const *params,
			struct db_error *err)
{
	return db_exec_one(name, sql, nparams, params, false, err);
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
	struct db_error err;
	PGresult *res = db_exec_brief(DB_CHECK_STATEMENT, sql, 0, NULL, &err);
	enum fleet_status st = err.st;
	if (!res) {
		*why = "cannot query the database";
	} else if (PQntuples(res) != 1 ||
		   db_columns(res, "check_login_role", names, 3, col) != FLEET_OK) {
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
		conn_hold(false);
	}
	PQclear(res);
	/* The thread that checks (start-up, or the wait for a database that was down) runs no
	 * other statement: its connection is not kept idle beside the serving loops'. */
	db_release();
	return st;
}

void db_release(void)
{
	if (!loop_serving())
		loop_private_free();
}

void db_shutdown(void)
{
	db_release();
	conn_free();
}
