/* Fleet operations: each runs as the acting identity in one round trip to PostgreSQL,
 * where fleet.act_as() fixes the perimeter that row-level security then enforces. */
#include "fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "db.h"
#include "rights.h"

const char *fleet_status_name(enum fleet_status st)
{
	switch (st) {
	case FLEET_OK: return "ok";
	case FLEET_NOT_FOUND: return "not_found";
	case FLEET_FORBIDDEN: return "forbidden";
	case FLEET_INVALID: return "invalid";
	case FLEET_CONFLICT: return "conflict";
	case FLEET_UNAVAILABLE: return "unavailable";
	case FLEET_INTERNAL: return "internal";
	}
	return "internal";
}

bool fleet_bike_id_valid(const char *id)
{
	if (strncmp(id, "VL-", 3) != 0)
		return false;
	size_t n = 0;
	for (const char *p = id + 3; *p; p++, n++)
		if (*p < '0' || *p > '9')
			return false;
	return n >= 4 && n <= 6;
}

bool fleet_in_perimeter(const char *regions, const char *region)
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

/* Runs a statement returning bike_status_as's columns and maps its row into out. */
static enum fleet_status fleet_bike_status_run(const struct fleet_actor *actor, const char *name,
					       const char *sql, int nparams,
					       const char *const *params,
					       struct fleet_bike_status *out)
{
	enum fleet_status st;
	PGresult *res = db_exec_prepared(name, sql, nparams, params, &st);
	if (!res)
		return st;
	if (PQntuples(res) != 1 || PQnfields(res) < 15) {
		st = FLEET_INTERNAL;
		goto out;
	}
	struct rights rights;
	rights_read(res, &rights);
	if (!rights_may_read(actor, &rights)) {
		st = FLEET_FORBIDDEN;
		goto out;
	}
	/* Row-level security already hid other regions; the C check is the second, independent
	 * line: both must agree before anything is shown. */
	bool outside = !fleet_in_perimeter(rights.regions, PQgetvalue(res, 0, 9));
#ifdef FLEET_TEST_NO_C_PERIMETER
	/* Test-only build (bikaroo-mcp-rls-only): the C check is gone, so the tests can show that
	 * PostgreSQL alone keeps other regions out. Never in the product binary. */
	outside = false;
#endif
	if (PQgetisnull(res, 0, 6) || outside) {
		st = FLEET_NOT_FOUND;
		goto out;
	}
	db_copy(out->bike_id, sizeof out->bike_id, PQgetvalue(res, 0, 6));
	db_copy(out->status, sizeof out->status, PQgetvalue(res, 0, 7));
	db_copy(out->status_label, sizeof out->status_label, PQgetvalue(res, 0, 8));
	db_copy(out->region, sizeof out->region, PQgetvalue(res, 0, 9));
	db_copy(out->station, sizeof out->station, PQgetvalue(res, 0, 10));
	out->battery_pct =
		PQgetisnull(res, 0, 12) ? -1 : (int)strtol(PQgetvalue(res, 0, 12), NULL, 10);
	db_copy(out->last_seen_at, sizeof out->last_seen_at, PQgetvalue(res, 0, 13));
	db_copy(out->open_case_id, sizeof out->open_case_id, PQgetvalue(res, 0, 14));
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}

enum fleet_status fleet_effective_scopes(const struct fleet_actor *actor, unsigned *scopes)
{
	static const char sql[] =
		"SELECT role, regions, is_human, client_may_read,"
		" client_may_report, requires_confirmation FROM fleet.act_as($1, $2)";
	*scopes = 0;
	const char *params[2] = {actor->subject, actor->client_id};
	enum fleet_status st;
	PGresult *res = db_exec_prepared("effective_scopes", sql, 2, params, &st);
	if (!res)
		return st;
	if (PQntuples(res) != 1 || PQnfields(res) != 6) {
		PQclear(res);
		return FLEET_INTERNAL;
	}
	struct rights r;
	rights_read(res, &r);
	if (rights_may_read(actor, &r))
		*scopes |= FLEET_SCOPE_READ;
	if (rights_may_report(actor, &r))
		*scopes |= FLEET_SCOPE_REPORT;
	PQclear(res);
	return FLEET_OK;
}

enum fleet_status fleet_is_development_db(bool *dev)
{
	static const char sql[] = "SELECT value FROM fleet.settings WHERE name = 'environment'";
	*dev = false;
	enum fleet_status st;
	PGresult *res = db_exec_prepared("environment", sql, 0, NULL, &st);
	if (!res)
		return st;
	*dev = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "development") == 0;
	PQclear(res);
	return FLEET_OK;
}

enum fleet_status fleet_get_bike_status(const struct fleet_actor *actor, const char *bike_id,
					struct fleet_bike_status *out)
{
	static const char sql[] = "SELECT * FROM fleet.bike_status_as($1, $2, $3)";
	memset(out, 0, sizeof *out);
	if (!fleet_bike_id_valid(bike_id))
		return FLEET_NOT_FOUND;
	const char *params[3] = {actor->subject, actor->client_id, bike_id};
	return fleet_bike_status_run(actor, "bike_status_as", sql, 3, params, out);
}

enum fleet_status fleet_get_bike_status_audited(const struct fleet_actor *actor,
						const char *bike_id, const char *args_digest,
						const char *request_id,
						struct fleet_bike_status *out)
{
	static const char sql[] = "SELECT * FROM fleet.bike_status_audited_as($1, $2, $3, $4, $5)";
	memset(out, 0, sizeof *out);
	/* No shape check first: every call, even a malformed id, leaves its audit row. */
	const char *params[5] = {actor->subject, actor->client_id, bike_id, args_digest,
				 request_id};
	return fleet_bike_status_run(actor, "bike_status_audited_as", sql, 5, params, out);
}
