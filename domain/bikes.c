/* Bikes: the column map of fleet.bike_ids_for for the one read path (reads.h), where the
 * identity, the rights and both perimeter checks are. */
#include "bikes.h"

#include <stdio.h>
#include <string.h>

#include "reads.h"

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

/* One completion match. */
struct bikes_match {
	char bike_id[FLEET_BIKE_ID_MAX];
	char region[FLEET_TEXT_MAX];
	long total;
};

static const struct reads_column bikes_match_columns[] = {
	READS_COLUMN(struct bikes_match, bike_id, READS_SKIP, "prefix"),
	READS_COLUMN(struct bikes_match, bike_id, READS_TEXT, "bike_id"),
	READS_COLUMN(struct bikes_match, region, READS_TEXT, "region"),
	READS_COLUMN(struct bikes_match, total, READS_LONG, "total"),
};

static const struct reads_query bikes_match_query = {
	.function = "fleet.bike_ids_for",
	.region_column = "region",
	.key_column = "prefix",
	.columns = bikes_match_columns,
	.ncolumns = sizeof bikes_match_columns / sizeof bikes_match_columns[0],
	.row_size = sizeof(struct bikes_match),
	.list = true,
};

enum fleet_status bikes_complete_ids(const struct fleet_actor *actor, const char *prefix,
				     char ids[][FLEET_BIKE_ID_MAX], size_t *n, long *total)
{
	*n = 0;
	*total = 0;
	/* No bike id is longer than FLEET_BIKE_ID_MAX - 1: a longer prefix matches nothing, and
	 * the database is not asked. */
	if (strlen(prefix) >= FLEET_BIKE_ID_MAX)
		return FLEET_OK;
	struct bikes_match m[BIKES_MAX_COMPLETIONS];
	size_t got = 0;
	enum fleet_status st =
		reads_run(&bikes_match_query, actor, prefix, NULL, m, BIKES_MAX_COMPLETIONS, &got);
	for (size_t i = 0; st == FLEET_OK && i < got; i++) {
		memcpy(ids[i], m[i].bike_id, FLEET_BIKE_ID_MAX);
		*total = m[i].total;
	}
	*n = st == FLEET_OK ? got : 0;
	return st;
}
