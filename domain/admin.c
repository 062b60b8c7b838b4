/* An operator's changes through the fleet.admin_* SQL functions (admin.h). */
#include "admin.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"

struct admin_session {
	struct exec_session *pg; /* a connection of its own, through the executor */
	char why[1024];
	struct admin_failure failure;
};

const char *admin_why(const struct admin_session *s)
{
	return s->why;
}

const struct admin_failure *admin_failure(const struct admin_session *s)
{
	return &s->failure;
}

/* The fields of failed result r that name what was refused (admin_failure). */
static void admin_set_failure(struct admin_session *s, const PGresult *r)
{
	static const char row_detail[] = "admin_load row ";
	struct admin_failure *f = &s->failure;
	const char *detail = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL);
	db_copy(f->sqlstate, sizeof f->sqlstate, PQresultErrorField(r, PG_DIAG_SQLSTATE));
	db_copy(f->table, sizeof f->table, PQresultErrorField(r, PG_DIAG_TABLE_NAME));
	db_copy(f->column, sizeof f->column, PQresultErrorField(r, PG_DIAG_COLUMN_NAME));
	db_copy(f->constraint, sizeof f->constraint,
		PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME));
	f->row = detail && strncmp(detail, row_detail, sizeof row_detail - 1) == 0
			 ? strtol(detail + sizeof row_detail - 1, NULL, 10)
			 : 0;
}

/* The message of a failed call, on one line, with a hint for a refusal by privilege. */
static void admin_set_why(struct admin_session *s, const char *msg, const char *sqlstate)
{
	char tidy[sizeof s->why / 2];
	memset(&s->failure, 0, sizeof s->failure);
	log_escape(msg ? msg : "unknown error", tidy, sizeof tidy);
	const char *hint = "";
	if (sqlstate && strcmp(sqlstate, "42501") == 0) /* insufficient_privilege */
		hint = " (this needs the owner role: BIKAROO_MIGRATE_URL, or for create-roles a "
		       "superuser: BIKAROO_SUPER_URL)";
	snprintf(s->why, sizeof s->why, "%s%s", tidy, hint);
}

static PGresult *admin_exec(struct admin_session *s, const char *sql, int n,
			    const char *const *params, enum fleet_status *st);

enum fleet_status admin_open(const char *conninfo, struct admin_session **out)
{
	struct admin_session *s = mem_calloc(1, sizeof *s);
	s->pg = exec_session_new(conninfo, true);
	*out = s;
	enum fleet_status st;
	PQclear(admin_exec(s, "SELECT 1", 0, NULL, &st)); /* connects, or says why not */
	return st == FLEET_OK ? FLEET_OK : FLEET_UNAVAILABLE;
}

void admin_close(struct admin_session *s)
{
	if (!s)
		return;
	exec_session_close(s->pg);
	free(s);
}

/* One parameterised statement, through the executor; its result (caller clears) or NULL with
 * s->why set. */
static PGresult *admin_exec(struct admin_session *s, const char *sql, int n,
			    const char *const *params, enum fleet_status *st)
{
	struct db_error err;
	PGresult *r = db_session_exec(s->pg, sql, n, params, &err);
	if (r) {
		*st = FLEET_OK;
		return r;
	}
	const char *state = *err.sqlstate ? err.sqlstate : NULL;
	admin_set_why(s,
		      *err.message ? err.message
				   : "cannot reach the database (its connection failed or timed "
				     "out: see the log above)",
		      state);
	if (err.refusal)
		admin_set_failure(s, err.refusal);
	PQclear(err.refusal);
	*st = !state || err.st == FLEET_UNAVAILABLE                          ? FLEET_UNAVAILABLE
	      : strcmp(state, "42501") == 0                                  ? FLEET_FORBIDDEN
	      : strncmp(state, "23", 2) == 0 || strncmp(state, "22", 2) == 0 ? FLEET_INVALID
									     : FLEET_INTERNAL;
	return NULL;
}

/* A statement whose one row and column is a statement to run (built by format() with %I and %L
 * on the server: no text of ours is spliced); runs it when there is one. */
static enum fleet_status admin_exec_built(struct admin_session *s, const char *sql, int n,
					  const char *const *params)
{
	enum fleet_status st;
	PGresult *r = admin_exec(s, sql, n, params, &st);
	if (!r)
		return st;
	for (int i = 0; i < PQntuples(r) && st == FLEET_OK; i++) {
		const char *built = PQgetvalue(r, i, 0);
		PGresult *done = admin_exec(s, built, 0, NULL, &st);
		PQclear(done);
	}
	PQclear(r);
	return st;
}

enum fleet_status admin_create_roles(struct admin_session *s, const char *dbname,
				     const char *owner_password, const char *app_password)
{
	static const char *const steps[] = {
		"SELECT 'CREATE ROLE fleet_owner' WHERE NOT EXISTS "
		"(SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'fleet_owner')",
		"SELECT 'CREATE ROLE fleet_app' WHERE NOT EXISTS "
		"(SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'fleet_app')",
		"SELECT pg_catalog.format('ALTER ROLE fleet_owner LOGIN NOSUPERUSER NOBYPASSRLS "
		"NOCREATEROLE%s', CASE WHEN $1::text <> '' THEN pg_catalog.format(' PASSWORD %L', "
		"$1::text) "
		"ELSE '' END)",
		"SELECT pg_catalog.format('ALTER ROLE fleet_app LOGIN NOSUPERUSER NOBYPASSRLS "
		"NOCREATEDB NOCREATEROLE%s', CASE WHEN $1::text <> '' THEN pg_catalog.format(' "
		"PASSWORD "
		"%L', $1::text) ELSE '' END)",
		"SELECT pg_catalog.format('CREATE DATABASE %I OWNER fleet_owner', $1::text) WHERE "
		"NOT EXISTS (SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1::text)",
	};
	/* The passwords leave here hashed (SCRAM-SHA-256, PostgreSQL's default since 14): the
	 * statement text, which a server may log, never holds one in clear. */
	PGconn *pg = exec_session_conn(s->pg);
	char *owner_hash =
		*owner_password && pg
			? PQencryptPasswordConn(pg, owner_password, "fleet_owner", "scram-sha-256")
			: NULL;
	char *app_hash = *app_password && pg ? PQencryptPasswordConn(pg, app_password, "fleet_app",
								     "scram-sha-256")
					     : NULL;
	enum fleet_status st = FLEET_OK;
	if ((*owner_password && !owner_hash) || (*app_password && !app_hash)) {
		admin_set_why(s, pg ? PQerrorMessage(pg) : "no connection", NULL);
		st = FLEET_INTERNAL;
		goto out;
	}
	/* Each step's one parameter (none for the first two). */
	const char *const params[] = {NULL, NULL, owner_hash ? owner_hash : "",
				      app_hash ? app_hash : "", dbname};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0] && st == FLEET_OK; i++)
		st = admin_exec_built(s, steps[i], params[i] ? 1 : 0,
				      params[i] ? &params[i] : NULL);
out:
	PQfreemem(owner_hash);
	PQfreemem(app_hash);
	return st;
}

enum fleet_status admin_lock_public(struct admin_session *s)
{
	enum fleet_status st;
	PGresult *r = admin_exec(s, "REVOKE CREATE ON SCHEMA public FROM PUBLIC", 0, NULL, &st);
	PQclear(r);
	return st;
}

/* Calls one fleet.admin_* function: sql with its n params; its first value (new string, or NULL
 * when not wanted). */
static enum fleet_status admin_call(struct admin_session *s, const char *sql, int n,
				    const char *const *params, char **value)
{
	enum fleet_status st;
	PGresult *r = admin_exec(s, sql, n, params, &st);
	if (!r)
		return st;
	if (value)
		*value = mem_strdup(PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
	return FLEET_OK;
}

enum fleet_status admin_load(struct admin_session *s, const char *kind, const char *rows_json,
			     long *count)
{
	const char *params[] = {kind, rows_json};
	char *v = NULL;
	enum fleet_status st =
		admin_call(s, "SELECT fleet.admin_load($1, $2::jsonb)", 2, params, &v);
	*count = v ? strtol(v, NULL, 10) : 0;
	free(v);
	return st;
}

enum fleet_status admin_region(struct admin_session *s, const char *code, const char *name)
{
	const char *params[] = {code, name};
	return admin_call(s, "SELECT fleet.admin_region($1, $2)", 2, params, NULL);
}

enum fleet_status admin_principal(struct admin_session *s, const char *subject,
				  const char *display_name, const char *role, bool is_human,
				  const char *regions)
{
	const char *params[] = {subject, display_name, role, is_human ? "true" : "false", regions};
	return admin_call(s,
			  "SELECT fleet.admin_principal($1, $2, $3, $4::boolean, "
			  "pg_catalog.string_to_array($5, ','))",
			  5, params, NULL);
}

enum fleet_status admin_client(struct admin_session *s, const char *client_id, const char *name,
			       bool may_read, bool may_report, bool requires_confirmation)
{
	const char *params[] = {client_id, name, may_read ? "true" : "false",
				may_report ? "true" : "false",
				requires_confirmation ? "true" : "false"};
	return admin_call(
		s, "SELECT fleet.admin_client($1, $2, $3::boolean, $4::boolean, $5::boolean)", 5,
		params, NULL);
}

enum fleet_status admin_deactivate(struct admin_session *s, const char *kind, const char *id,
				   bool *found)
{
	const char *params[] = {kind, id};
	char *v = NULL;
	enum fleet_status st =
		admin_call(s, "SELECT fleet.admin_deactivate($1, $2)", 2, params, &v);
	*found = v && strcmp(v, "t") == 0;
	free(v);
	return st;
}
