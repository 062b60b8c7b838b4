/* Bikes: each read runs as the acting identity in one round trip to PostgreSQL, where
 * fleet.act_as() fixes the perimeter that row-level security then enforces. */
#include "bikes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "common/log.h"
#include "domain/pg/db.h"
#include "rights.h"

bool bikes_id_valid(const char *id)
{
	if (strncmp(id, "VL-", 3) != 0)
		return false;
	size_t n = 0;
	for (const char *p = id + 3; *p; p++, n++)
		if (*p < '0' || *p > '9')
			return false;
	return n >= 4 && n <= 6;
}

/* bike_status_as's bike columns, looked up by name once per result. */
enum {
	BIKE_ID,
	BIKE_STATUS,
	BIKE_STATUS_LABEL,
	BIKE_REGION,
	BIKE_STATION,
	BIKE_BATTERY,
	BIKE_LAST_SEEN,
	BIKE_OPEN_CASE,
	BIKE_NCOLS
};
static const char *const bikes_columns[BIKE_NCOLS] = {
	[BIKE_ID] = "bike_id",
	[BIKE_STATUS] = "status",
	[BIKE_STATUS_LABEL] = "status_label",
	[BIKE_REGION] = "region",
	[BIKE_STATION] = "station_id",
	[BIKE_BATTERY] = "battery_pct",
	[BIKE_LAST_SEEN] = "last_seen_at",
	[BIKE_OPEN_CASE] = "open_case_id",
};

/* Runs a statement returning bike_status_as's columns and maps its row into out; the caller's
 * rights as the database stated them into *rights. */
static enum fleet_status bikes_status_run(const struct fleet_actor *actor, const char *name,
					  const char *sql, int nparams, const char *const *params,
					  struct fleet_bike_status *out, struct rights *rights)
{
	enum fleet_status st;
	int col[BIKE_NCOLS];
	memset(rights, 0, sizeof *rights);
	PGresult *res = db_exec_prepared(name, sql, nparams, params, &st);
	if (!res)
		return st;
	if (PQntuples(res) != 1 || rights_read_row(res, name, "", rights) != FLEET_OK ||
	    db_columns(res, name, bikes_columns, BIKE_NCOLS, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
		goto out;
	}
	if (!rights_may_read(actor, rights)) {
		st = FLEET_FORBIDDEN;
		goto out;
	}
	/* Row-level security already hid other regions; the C check is the second, independent
	 * line: both must agree before anything is shown. */
	bool outside = !rights_in_perimeter(rights->regions, PQgetvalue(res, 0, col[BIKE_REGION]));
#ifdef FLEET_TEST_NO_C_PERIMETER
	/* Test-only build (bikaroo-mcp-rls-only): the C check is gone, so the tests can show that
	 * PostgreSQL alone keeps other regions out. Never in the product binary. */
	outside = false;
#endif
	if (PQgetisnull(res, 0, col[BIKE_ID]) || outside) {
		st = FLEET_NOT_FOUND;
		goto out;
	}
	db_copy(out->bike_id, sizeof out->bike_id, PQgetvalue(res, 0, col[BIKE_ID]));
	db_copy(out->status, sizeof out->status, PQgetvalue(res, 0, col[BIKE_STATUS]));
	db_copy(out->status_label, sizeof out->status_label,
		PQgetvalue(res, 0, col[BIKE_STATUS_LABEL]));
	db_copy(out->region, sizeof out->region, PQgetvalue(res, 0, col[BIKE_REGION]));
	db_copy(out->station, sizeof out->station, PQgetvalue(res, 0, col[BIKE_STATION]));
	out->battery_pct = PQgetisnull(res, 0, col[BIKE_BATTERY])
				   ? -1
				   : (int)strtol(PQgetvalue(res, 0, col[BIKE_BATTERY]), NULL, 10);
	db_copy(out->last_seen_at, sizeof out->last_seen_at,
		PQgetvalue(res, 0, col[BIKE_LAST_SEEN]));
	db_copy(out->open_case_id, sizeof out->open_case_id,
		PQgetvalue(res, 0, col[BIKE_OPEN_CASE]));
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}

enum fleet_status bikes_status(const struct fleet_actor *actor, const char *bike_id,
			       struct fleet_bike_status *out)
{
	static const char sql[] = "SELECT * FROM fleet.bike_status_as($1, $2, $3)";
	memset(out, 0, sizeof *out);
	if (!bikes_id_valid(bike_id))
		return FLEET_NOT_FOUND;
	const char *params[3] = {actor->subject, actor->client_id, bike_id};
	struct rights rights;
	return bikes_status_run(actor, "bike_status_as", sql, 3, params, out, &rights);
}

enum fleet_status bikes_status_audited(const struct fleet_actor *actor, const char *bike_id,
				       const char *args_digest, const char *request_id,
				       struct fleet_bike_status *out)
{
	static const char sql[] = "SELECT * FROM fleet.bike_status_read_as($1, $2, $3, $4, $5)";
	memset(out, 0, sizeof *out);
	/* No shape check first: every call, even a malformed id, leaves its audit row. */
	const char *params[5] = {actor->subject, actor->client_id, bike_id, args_digest,
				 request_id};
	struct rights rights;
	audit_read_begin();
	enum fleet_status st =
		bikes_status_run(actor, "bike_status_read_as", sql, 5, params, out, &rights);
	if (st != FLEET_OK && st != FLEET_NOT_FOUND) {
		audit_read_cancel(); /* no row for the group commit */
		if (st != FLEET_FORBIDDEN)
			return st; /* the statement failed: nothing was read, no row to write */
	}
	struct audit_entry e = {.tool = "get_bike_status",
				.target = bike_id,
				.args_digest = args_digest,
				.outcome = fleet_status_name(st),
				.request_id = request_id};
	enum fleet_status ast;
	if (st == FLEET_FORBIDDEN) {
		/* The database wrote the row of a denial it decided; one the token decided
		 * (no fleet:read) is written here, in its own transaction. */
		if (rights.known && rights.client_read) {
			e.outcome = "denied";
			ast = audit_record(actor, &e);
			return ast == FLEET_OK ? st : ast;
		}
		return st;
	}
	/* An allowed read: its row by group commit, and no answer before that commits. */
	ast = audit_record_read(actor, &e);
	return ast == FLEET_OK ? st : ast;
}

enum fleet_status bikes_complete_ids(const struct fleet_actor *actor, const char *prefix,
				     char ids[][FLEET_BIKE_ID_MAX], size_t *n, long *total)
{
	static const char sql[] = "SELECT * FROM fleet.complete_bike_ids_as($1, $2, $3, $4)";
	*n = 0;
	*total = 0;
	/* No bike id is longer than FLEET_BIKE_ID_MAX - 1: a longer prefix matches nothing, and
	 * the database is not asked. */
	if (strlen(prefix) >= FLEET_BIKE_ID_MAX)
		return FLEET_OK;
	char limit[16];
	snprintf(limit, sizeof limit, "%d", BIKES_MAX_COMPLETIONS);
	const char *params[4] = {actor->subject, actor->client_id, prefix, limit};
	enum fleet_status st;
	PGresult *res = db_exec_prepared("complete_bike_ids_as", sql, 4, params, &st);
	if (!res)
		return st;
	static const char *const names[] = {"bike_id", "total"};
	int col[2];
	struct rights rights;
	if (rights_read_row(res, "complete_bike_ids_as", "", &rights) != FLEET_OK ||
	    db_columns(res, "complete_bike_ids_as", names, 2, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
		goto out;
	}
	if (!rights_may_read(actor, &rights)) {
		st = FLEET_FORBIDDEN;
		goto out;
	}
	for (int i = 0; i < PQntuples(res) && *n < BIKES_MAX_COMPLETIONS; i++) {
		if (PQgetisnull(res, i, col[0]))
			continue;
		snprintf(ids[*n], FLEET_BIKE_ID_MAX, "%s", PQgetvalue(res, i, col[0]));
		(*n)++;
		*total = strtol(PQgetvalue(res, i, col[1]), NULL, 10);
	}
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}
