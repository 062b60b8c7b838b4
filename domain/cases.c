/* Investigation cases: the column map of fleet.case_for for the one read path (reads.h), and its
 * rows (the case, then its reports and events) as a case file. */
#include "cases.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "reads.h"

/* Most reports and events read with one case. */
#define CASES_MAX_ROWS 10000

/* One row of case_for: the case, a report or an event. */
struct cases_row {
	char kind[16];
	char item_id[FLEET_TEXT_MAX];
	char at[FLEET_TIME_MAX];
	char bike_id[FLEET_BIKE_ID_MAX];
	char region[FLEET_TEXT_MAX];
	char state[FLEET_TEXT_MAX];
	char subject[FLEET_ID_MAX];
	char client_id[FLEET_ID_MAX];
	char issue[FLEET_TEXT_MAX];
	char *description;
	char detail[FLEET_TEXT_MAX];
	char region_name[CASES_NAME_MAX];
	char subject_name[CASES_NAME_MAX];
	char client_name[CASES_NAME_MAX];
};

#define CASE_COLUMN(field, type, column) READS_COLUMN(struct cases_row, field, type, column)
static const struct reads_column cases_columns[] = {
	CASE_COLUMN(kind, READS_SKIP, "case_id"),
	CASE_COLUMN(kind, READS_TEXT, "kind"),
	CASE_COLUMN(item_id, READS_TEXT, "item_id"),
	CASE_COLUMN(at, READS_TEXT, "at"),
	CASE_COLUMN(bike_id, READS_TEXT, "bike_id"),
	CASE_COLUMN(region, READS_TEXT, "region"),
	CASE_COLUMN(state, READS_TEXT, "state"),
	CASE_COLUMN(subject, READS_TEXT, "subject"),
	CASE_COLUMN(client_id, READS_TEXT, "client_id"),
	CASE_COLUMN(issue, READS_TEXT, "issue"),
	CASE_COLUMN(description, READS_TEXT_NEW, "description"),
	CASE_COLUMN(detail, READS_TEXT, "detail"),
	CASE_COLUMN(region_name, READS_TEXT, "region_name"),
	CASE_COLUMN(subject_name, READS_TEXT, "subject_name"),
	CASE_COLUMN(client_name, READS_TEXT, "client_name"),
};

static const struct reads_query cases_query = {
	.function = "fleet.case_for",
	.region_column = "region",
	.key_column = "case_id",
	.columns = cases_columns,
	.ncolumns = sizeof cases_columns / sizeof cases_columns[0],
	.row_size = sizeof(struct cases_row),
};

void cases_free(struct case_file *c)
{
	for (size_t i = 0; i < c->nitems; i++)
		free(c->items[i].description);
	free(c->items);
	c->items = NULL;
	c->nitems = 0;
}

/* A report or event row as a case item; its description is handed over. */
static void cases_item(struct cases_row *row, struct case_item *it)
{
	it->is_event = strcmp(row->kind, "event") == 0;
	memcpy(it->id, row->item_id, sizeof it->id);
	memcpy(it->at, row->at, sizeof it->at);
	memcpy(it->subject, row->subject, sizeof it->subject);
	memcpy(it->client_id, row->client_id, sizeof it->client_id);
	memcpy(it->subject_name, row->subject_name, sizeof it->subject_name);
	memcpy(it->client_name, row->client_name, sizeof it->client_name);
	memcpy(it->kind, row->issue, sizeof it->kind);
	if (it->is_event) {
		memcpy(it->report_id, row->detail, sizeof it->report_id);
	} else {
		memcpy(it->status_after, row->state, sizeof it->status_after);
		memcpy(it->status_before, row->detail, sizeof it->status_before);
		it->description = row->description;
		row->description = NULL;
	}
}

enum fleet_status cases_read(const struct fleet_actor *actor, const char *case_id,
			     const struct audit_entry *audit, struct case_file *out)
{
	memset(out, 0, sizeof *out);
	struct cases_row *rows = NULL;
	size_t n = 0;
	enum fleet_status st = reads_run_all(&cases_query, actor, case_id, audit, CASES_MAX_ROWS,
					     (void **)&rows, &n);
	if (st != FLEET_OK)
		goto out;
	if (strcmp(rows[0].kind, "case") != 0) {
		st = FLEET_INTERNAL;
		goto out;
	}
	const struct cases_row *c = &rows[0];
	memcpy(out->case_id, c->item_id, sizeof out->case_id);
	memcpy(out->opened_at, c->at, sizeof out->opened_at);
	memcpy(out->bike_id, c->bike_id, sizeof out->bike_id);
	memcpy(out->region, c->region, sizeof out->region);
	memcpy(out->region_name, c->region_name, sizeof out->region_name);
	memcpy(out->state, c->state, sizeof out->state);
	memcpy(out->opened_by, c->subject, sizeof out->opened_by);
	memcpy(out->opened_via, c->client_id, sizeof out->opened_via);
	memcpy(out->opened_by_name, c->subject_name, sizeof out->opened_by_name);
	memcpy(out->opened_via_name, c->client_name, sizeof out->opened_via_name);
	memcpy(out->closed_at, c->detail, sizeof out->closed_at);
	out->items = mem_calloc(n, sizeof *out->items);
	for (size_t r = 1; r < n; r++)
		cases_item(&rows[r], &out->items[out->nitems++]);
out:
	if (rows)
		reads_free_rows(&cases_query, rows, n);
	free(rows);
	return st;
}
