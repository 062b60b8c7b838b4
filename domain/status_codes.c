/* The status-code table: one call of fleet.status_codes_as, which fixes the acting identity
 * and then reads under RLS. */
#include "status_codes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/pg/db.h"
#include "rights.h"

/* May this actor read at all (the rights columns of the *_as function's first row)? */
static bool status_codes_may_read(const struct fleet_actor *actor, PGresult *res)
{
	struct rights r;
	db_read_rights(res, &r);
	return rights_may_read(actor, &r);
}

enum fleet_status status_codes_read(const struct fleet_actor *actor, struct fleet_status_code *out,
				    size_t cap, size_t *n)
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
	if (!status_codes_may_read(actor, res)) {
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
