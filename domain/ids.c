/* Ids for completion (ids.h): the column maps of fleet.bike_ids_for and fleet.case_ids_for for
 * the one read path (reads.h), where the identity, the rights and both perimeter checks are. */
#include "ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reads.h"

/* One completion match. */
struct ids_match {
	char *id, *region;
	long total;
};

#define IDS_COLUMNS(id_column)                                                                     \
	{                                                                                          \
		READS_COLUMN(struct ids_match, id, READS_SKIP, "prefix"),                          \
			READS_COLUMN(struct ids_match, id, READS_TEXT_NEW, id_column),             \
			READS_COLUMN(struct ids_match, region, READS_TEXT_NEW, "region"),          \
			READS_COLUMN(struct ids_match, total, READS_LONG, "total"),                \
	}

static const struct reads_column ids_bike_columns[] = IDS_COLUMNS("bike_id");
static const struct reads_column ids_case_columns[] = IDS_COLUMNS("case_id");

static const struct reads_query ids_queries[] = {
	[IDS_BIKE] = {.function = "fleet.bike_ids_for",
		      .columns = ids_bike_columns,
		      .ncolumns = sizeof ids_bike_columns / sizeof ids_bike_columns[0],
		      .key_column = "prefix",
		      .region_column = "region",
		      .row_size = sizeof(struct ids_match),
		      .list = true},
	[IDS_CASE] = {.function = "fleet.case_ids_for",
		      .columns = ids_case_columns,
		      .ncolumns = sizeof ids_case_columns / sizeof ids_case_columns[0],
		      .key_column = "prefix",
		      .region_column = "region",
		      .row_size = sizeof(struct ids_match),
		      .list = true},
};

enum fleet_status ids_complete(enum ids_kind kind, const struct fleet_actor *actor,
			       const char *prefix, char ids[][IDS_ID_MAX], size_t *n, long *total)
{
	*n = 0;
	*total = 0;
	/* No id is longer than IDS_ID_MAX - 1: a longer prefix matches nothing, and the database
	 * is not asked. */
	if (strlen(prefix) >= IDS_ID_MAX)
		return FLEET_OK;
	struct ids_match *m = NULL;
	size_t got = 0;
	enum fleet_status st = reads_run_all(&ids_queries[kind], actor, prefix, NULL,
					     IDS_MAX_COMPLETIONS, (void **)&m, &got);
	for (size_t i = 0; i < got; i++) {
		snprintf(ids[i], IDS_ID_MAX, "%s", m[i].id ? m[i].id : "");
		*total = m[i].total;
	}
	*n = got;
	reads_free_rows(&ids_queries[kind], m, got);
	free(m);
	return st;
}
