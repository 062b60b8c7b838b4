/* The caller's rights, read from the *_as functions' first columns (see rights.h). */
#include "rights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "domain/pg/db.h"
#include "reads_batch.h"

bool rights_may_read(const struct fleet_actor *actor, const struct rights *r)
{
	return (actor->scopes & FLEET_SCOPE_READ) && r->known && r->client_read;
}

bool rights_may_report(const struct fleet_actor *actor, const struct rights *r)
{
	bool role_reports =
		strcmp(r->role, "customer_care") == 0 || strcmp(r->role, "fleet_operator") == 0;
	return (actor->scopes & FLEET_SCOPE_REPORT) && r->known && role_reports && r->human &&
	       !actor->machine && r->client_report;
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

enum fleet_status rights_effective_scopes(const struct fleet_actor *actor, unsigned *scopes)
{
	/* fleet.act_as itself as a read of the batch: the identity set, the rights read. */
	*scopes = 0;
	struct reads_batch_elem e = {
		.function = "fleet.act_as",
		.columns = "{role,regions,is_human,client_may_read,client_may_report,"
			   "requires_confirmation}",
		.rights_prefix = "",
		.key_column = "role",
		.may = true,
		.actor = actor,
	};
	enum fleet_status st = reads_batch_run(&e);
	if (st != FLEET_OK)
		return st;
	const char *f[READS_BATCH_NRIGHTS];
	char *buf;
	if (e.outcome[0] == 'e' ||
	    reads_batch_row(&e, 0, f, READS_BATCH_NRIGHTS, &buf) != FLEET_OK) {
		if (e.outcome[0] == 'e')
			log_error("fleet.act_as failed: SQLSTATE %s", e.sqlstate);
		reads_batch_done(&e);
		return FLEET_INTERNAL;
	}
	struct rights r;
	rights_from_fields(f, &r);
	free(buf);
	reads_batch_done(&e);
	if (rights_may_read(actor, &r))
		*scopes |= FLEET_SCOPE_READ;
	if (rights_may_report(actor, &r))
		*scopes |= FLEET_SCOPE_REPORT;
	return FLEET_OK;
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
	PGconn *pg = db_open();
	if (!pg)
		return FLEET_UNAVAILABLE;
	enum fleet_status st = FLEET_OK;
	PGresult *res = PQexecParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0);
	static const char *const names[] = {"value"};
	int col[1];
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		log_error("database: cannot tell whether it is a development one: %s",
			  PQresultErrorMessage(res));
		st = PQstatus(pg) == CONNECTION_OK ? FLEET_INTERNAL : FLEET_UNAVAILABLE;
	} else if (db_columns(res, "environment", names, 1, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
	} else {
		*dev = PQntuples(res) == 1 &&
		       strcmp(PQgetvalue(res, 0, col[0]), "development") == 0;
	}
	PQclear(res);
	PQfinish(pg);
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
