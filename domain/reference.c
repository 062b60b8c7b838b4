/* Reference reads: the status-code table and bike-id completion, each one call of a SQL
 * function of migrations/0003 that fixes the acting identity and then reads under RLS. */
#include "reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "rights.h"

/* May this actor read at all (the rights columns of the *_as function's first row)? */
static bool reference_may_read(const struct fleet_actor *actor, PGresult *res)
{
	struct rights r;
	rights_read(res, &r);
	return rights_may_read(actor, &r);
}

enum fleet_status reference_status_codes(const struct fleet_actor *actor,
					 struct fleet_status_code *out, size_t cap, size_t *n)
{
	static const char sql[] = "SELECT * FROM fleet.status_codes_as($1, $2)";
	const char *params[2] = {actor->subject, actor->client_id};
	*n = 0;
	enum fleet_status st;
	PGresult *res = db_exec_prepared("status_codes_as", sql, 2, params, &st);
	if (!res)
		return st;
	if (PQntuples(res) < 1 || PQnfields(res) < 10) {
		st = FLEET_INTERNAL;
		goto out;
	}
	if (!reference_may_read(actor, res)) {
		st = FLEET_FORBIDDEN;
		goto out;
	}
	for (int i = 0; i < PQntuples(res) && *n < cap; i++) {
		if (PQgetisnull(res, i, 6))
			continue;
		struct fleet_status_code *c = &out[(*n)++];
		snprintf(c->code, sizeof c->code, "%s", PQgetvalue(res, i, 6));
		snprintf(c->label, sizeof c->label, "%s", PQgetvalue(res, i, 7));
		snprintf(c->description, sizeof c->description, "%s", PQgetvalue(res, i, 8));
		c->rentable = strcmp(PQgetvalue(res, i, 9), "t") == 0;
	}
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}

enum fleet_status reference_complete_bike_ids(const struct fleet_actor *actor, const char *prefix,
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
	snprintf(limit, sizeof limit, "%d", REFERENCE_MAX_COMPLETIONS);
	const char *params[4] = {actor->subject, actor->client_id, prefix, limit};
	enum fleet_status st;
	PGresult *res = db_exec_prepared("complete_bike_ids_as", sql, 4, params, &st);
	if (!res)
		return st;
	if (PQntuples(res) < 1 || PQnfields(res) < 8) {
		st = FLEET_INTERNAL;
		goto out;
	}
	if (!reference_may_read(actor, res)) {
		st = FLEET_FORBIDDEN;
		goto out;
	}
	for (int i = 0; i < PQntuples(res) && *n < REFERENCE_MAX_COMPLETIONS; i++) {
		if (PQgetisnull(res, i, 6))
			continue;
		snprintf(ids[*n], FLEET_BIKE_ID_MAX, "%s", PQgetvalue(res, i, 6));
		(*n)++;
		*total = strtol(PQgetvalue(res, i, 7), NULL, 10);
	}
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}
