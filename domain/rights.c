/* The caller's rights, read from the *_as functions' first columns (see rights.h). */
#include "rights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "common/log.h"
#include "domain/pg/db.h"

bool rights_may_use(const struct fleet_actor *actor, const struct rights *r, unsigned scope,
		    const char *roles, bool people_only)
{
	bool client = (scope != FLEET_SCOPE_READ || r->client_read) &&
		      (scope != FLEET_SCOPE_REPORT || r->client_report);
	return (actor->scopes & scope) && r->known && client &&
	       (!roles || csv_list_has(roles, r->role)) &&
	       (!people_only || (r->human && !actor->machine));
}

bool rights_in_perimeter(const char *regions, const char *region)
{
	size_t n = strlen(region);
	if (n == 0 || strpbrk(region, ",{}\"\\ "))
		return false; /* not a region code: never a match, whatever the array holds */
	for (const char *p = strstr(regions, region); p; p = strstr(p + 1, region)) {
		char before = p == regions ? '{' : p[-1];
		char after = p[n];
		if ((before == '{' || before == ',') && (after == '}' || after == ','))
			return true;
	}
	return false;
}

unsigned rights_scopes(const struct fleet_actor *actor, const struct rights *r)
{
	return (rights_may_use(actor, r, FLEET_SCOPE_READ, NULL, false) ? FLEET_SCOPE_READ : 0u) |
	       (rights_may_use(actor, r, FLEET_SCOPE_REPORT, NULL, false) && !actor->machine
			? FLEET_SCOPE_REPORT
			: 0u);
}

void rights_from_fields(const char *const *v, struct rights *r)
{
	memset(r, 0, sizeof *r);
	r->known = v[0] != NULL;
	db_copy(r->role, sizeof r->role, v[0]);
	db_copy(r->regions, sizeof r->regions, v[1]);
	r->human = v[2] && strcmp(v[2], "t") == 0;
	r->client_read = v[3] && strcmp(v[3], "t") == 0;
	r->client_report = v[4] && strcmp(v[4], "t") == 0;
	r->confirm = v[5] && strcmp(v[5], "t") == 0;
}

enum fleet_status rights_development_db(bool *dev)
{
	static const char sql[] = "SELECT value FROM fleet.settings WHERE name = 'environment'";
	*dev = false;
	/* A connection of its own: asked before the login role is checked (statements held). */
	struct exec_session *es = exec_session_new(NULL, false);
	struct db_error err;
	PGresult *res = db_session_exec(es, sql, 0, NULL, &err);
	enum fleet_status st = err.st;
	static const char *const names[] = {"value"};
	int col[1];
	if (!res) {
		log_error("database: cannot tell whether it is a development one: %s",
			  *err.message ? err.message : fleet_status_name(err.st));
	} else if (db_columns(res, "environment", names, 1, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
	} else {
		*dev = PQntuples(res) == 1 &&
		       strcmp(PQgetvalue(res, 0, col[0]), "development") == 0;
	}
	PQclear(res);
	PQclear(err.refusal);
	exec_session_close(es);
	return st;
}

enum fleet_status rights_read_row(const struct pg_result *res, const char *what, const char *prefix,
				  struct rights *r)
{
	enum { R_ROLE, R_REGIONS, R_HUMAN, R_READ, R_REPORT, R_CONFIRM, R_NCOLS };
	static const char *const names[R_NCOLS] = {
		[R_ROLE] = "role",
		[R_REGIONS] = "regions",
		[R_HUMAN] = "is_human",
		[R_READ] = "client_may_read",
		[R_REPORT] = "client_may_report",
		[R_CONFIRM] = "requires_confirmation",
	};
	char buf[R_NCOLS][48];
	const char *full[R_NCOLS];
	int col[R_NCOLS];
	memset(r, 0, sizeof *r);
	for (int i = 0; i < R_NCOLS; i++) {
		full[i] = names[i];
		if (*prefix) {
			snprintf(buf[i], sizeof buf[i], "%s%s", prefix, names[i]);
			full[i] = buf[i];
		}
	}
	if (PQntuples(res) < 1 || db_columns(res, what, full, R_NCOLS, col) != FLEET_OK)
		return FLEET_INTERNAL;
	r->known = !PQgetisnull(res, 0, col[R_ROLE]);
	db_copy(r->role, sizeof r->role, PQgetvalue(res, 0, col[R_ROLE]));
	db_copy(r->regions, sizeof r->regions, PQgetvalue(res, 0, col[R_REGIONS]));
	r->human = db_true(res, 0, col[R_HUMAN]);
	r->client_read = db_true(res, 0, col[R_READ]);
	r->client_report = db_true(res, 0, col[R_REPORT]);
	r->confirm = db_true(res, 0, col[R_CONFIRM]);
	return FLEET_OK;
}
