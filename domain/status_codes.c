/* The status-code table: one call of fleet.status_codes_as, which fixes the acting identity
 * and then reads under RLS. */
#include "status_codes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/pg/db.h"
#include "rights.h"

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
	enum { SC_CODE, SC_LABEL, SC_DESCRIPTION, SC_RENTABLE, SC_NCOLS };
	static const char *const names[SC_NCOLS] = {
		[SC_CODE] = "code",
		[SC_LABEL] = "label",
		[SC_DESCRIPTION] = "description",
		[SC_RENTABLE] = "rentable",
	};
	int col[SC_NCOLS];
	struct rights rights;
	if (rights_read_row(res, "status_codes_as", "", &rights) != FLEET_OK ||
	    db_columns(res, "status_codes_as", names, SC_NCOLS, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
		goto out;
	}
	if (!rights_may_read(actor, &rights)) {
		st = FLEET_FORBIDDEN;
		goto out;
	}
	for (int i = 0; i < PQntuples(res) && *n < cap; i++) {
		if (PQgetisnull(res, i, col[SC_CODE]))
			continue;
		struct fleet_status_code *c = &out[(*n)++];
		db_copy(c->code, sizeof c->code, PQgetvalue(res, i, col[SC_CODE]));
		db_copy(c->label, sizeof c->label, PQgetvalue(res, i, col[SC_LABEL]));
		db_copy(c->description, sizeof c->description,
			PQgetvalue(res, i, col[SC_DESCRIPTION]));
		c->rentable = db_true(res, i, col[SC_RENTABLE]);
	}
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}
