/* Investigation cases: one case with its damage reports and events, read as the acting identity
 * in one call of fleet.case_as (row-level security and the case's visibility rules apply). */
#include "cases.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "domain/pg/db.h"
#include "rights.h"

/* case_as's item columns, looked up by name once per result. */
enum {
	CASE_KIND,
	CASE_ID,
	CASE_AT,
	CASE_BIKE,
	CASE_REGION,
	CASE_STATE,
	CASE_SUBJECT,
	CASE_CLIENT,
	CASE_ISSUE,
	CASE_DESCRIPTION,
	CASE_DETAIL,
	CASE_REGIONS, /* the caller's perimeter, in full (rights.regions is bounded) */
	CASE_NCOLS
};
static const char *const cases_columns[CASE_NCOLS] = {
	[CASE_KIND] = "kind",       [CASE_ID] = "item_id",
	[CASE_AT] = "at",           [CASE_BIKE] = "bike_id",
	[CASE_REGION] = "region",   [CASE_STATE] = "state",
	[CASE_SUBJECT] = "subject", [CASE_CLIENT] = "client_id",
	[CASE_ISSUE] = "issue",     [CASE_DESCRIPTION] = "description",
	[CASE_DETAIL] = "detail",   [CASE_REGIONS] = "out_regions",
};

void cases_free(struct case_file *c)
{
	for (size_t i = 0; i < c->nitems; i++)
		free(c->items[i].description);
	free(c->items);
	c->items = NULL;
	c->nitems = 0;
}

static void cases_read_item(const PGresult *res, const int *col, int row, struct case_item *it)
{
	const char *kind = PQgetvalue(res, row, col[CASE_KIND]);
	it->is_event = strcmp(kind, "event") == 0;
	db_copy(it->id, sizeof it->id, PQgetvalue(res, row, col[CASE_ID]));
	db_copy(it->at, sizeof it->at, PQgetvalue(res, row, col[CASE_AT]));
	db_copy(it->subject, sizeof it->subject, PQgetvalue(res, row, col[CASE_SUBJECT]));
	db_copy(it->client_id, sizeof it->client_id, PQgetvalue(res, row, col[CASE_CLIENT]));
	db_copy(it->kind, sizeof it->kind, PQgetvalue(res, row, col[CASE_ISSUE]));
	if (it->is_event) {
		db_copy(it->report_id, sizeof it->report_id,
			PQgetvalue(res, row, col[CASE_DETAIL]));
	} else {
		db_copy(it->status_after, sizeof it->status_after,
			PQgetvalue(res, row, col[CASE_STATE]));
		db_copy(it->status_before, sizeof it->status_before,
			PQgetvalue(res, row, col[CASE_DETAIL]));
		if (!PQgetisnull(res, row, col[CASE_DESCRIPTION]))
			it->description = mem_strdup(PQgetvalue(res, row, col[CASE_DESCRIPTION]));
	}
}

enum fleet_status cases_read(const struct fleet_actor *actor, const char *case_id,
			     struct case_file *out)
{
	static const char sql[] = "SELECT * FROM fleet.case_as($1, $2, $3)";
	memset(out, 0, sizeof *out);
	if (!case_id || strncmp(case_id, "IC-", 3) != 0 || strlen(case_id) >= FLEET_TEXT_MAX)
		return FLEET_NOT_FOUND;
	const char *params[3] = {actor->subject, actor->client_id, case_id};
	enum fleet_status st;
	PGresult *res = db_exec_prepared("case_as", sql, 3, params, &st);
	if (!res)
		return st;
	int rows = PQntuples(res);
	int col[CASE_NCOLS];
	struct rights rights;
	if (rows < 1 || rights_read_row(res, "case_as", "out_", &rights) != FLEET_OK ||
	    db_columns(res, "case_as", cases_columns, CASE_NCOLS, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
		goto out;
	}
	if (!rights_may_read(actor, &rights)) {
		st = FLEET_FORBIDDEN;
		goto out;
	}
	if (PQgetisnull(res, 0, col[CASE_KIND]) ||
	    strcmp(PQgetvalue(res, 0, col[CASE_KIND]), "case") != 0 ||
	    !rights_in_perimeter(PQgetvalue(res, 0, col[CASE_REGIONS]),
				 PQgetvalue(res, 0, col[CASE_REGION]))) {
		st = FLEET_NOT_FOUND;
		goto out;
	}
	db_copy(out->case_id, sizeof out->case_id, PQgetvalue(res, 0, col[CASE_ID]));
	db_copy(out->opened_at, sizeof out->opened_at, PQgetvalue(res, 0, col[CASE_AT]));
	db_copy(out->bike_id, sizeof out->bike_id, PQgetvalue(res, 0, col[CASE_BIKE]));
	db_copy(out->region, sizeof out->region, PQgetvalue(res, 0, col[CASE_REGION]));
	db_copy(out->state, sizeof out->state, PQgetvalue(res, 0, col[CASE_STATE]));
	db_copy(out->opened_by, sizeof out->opened_by, PQgetvalue(res, 0, col[CASE_SUBJECT]));
	db_copy(out->opened_via, sizeof out->opened_via, PQgetvalue(res, 0, col[CASE_CLIENT]));
	db_copy(out->closed_at, sizeof out->closed_at, PQgetvalue(res, 0, col[CASE_DETAIL]));
	out->items = mem_calloc((size_t)rows, sizeof *out->items);
	for (int r = 1; r < rows; r++)
		cases_read_item(res, col, r, &out->items[out->nitems++]);
	st = FLEET_OK;
out:
	PQclear(res);
	return st;
}
