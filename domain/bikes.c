/* Bikes: column maps of fleet.bike_status_for and fleet.bike_ids_for for the one read path
 * (reads.h), where the identity, the rights, both perimeter checks and the audit row are. */
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

#define BIKE_COLUMN(field, type, column) READS_COLUMN(struct fleet_bike_status, field, type, column)
static const struct reads_column bikes_status_columns[] = {
	BIKE_COLUMN(bike_id, READS_TEXT, "bike_id"),
	BIKE_COLUMN(status, READS_TEXT, "status"),
	BIKE_COLUMN(status_label, READS_TEXT, "status_label"),
	BIKE_COLUMN(region, READS_TEXT, "region"),
	BIKE_COLUMN(station, READS_TEXT, "station_id"),
	BIKE_COLUMN(station_name, READS_TEXT, "station_name"),
	BIKE_COLUMN(battery_pct, READS_INT, "battery_pct"),
	BIKE_COLUMN(last_seen_at, READS_TEXT, "last_seen_at"),
	BIKE_COLUMN(open_case_id, READS_TEXT, "open_case_id"),
};

static const struct reads_query bikes_status_query = {
	.function = "fleet.bike_status_for",
	.region_column = "region",
	.key_column = "bike_id",
	.columns = bikes_status_columns,
	.ncolumns = sizeof bikes_status_columns / sizeof bikes_status_columns[0],
	.row_size = sizeof(struct fleet_bike_status),
};

enum fleet_status bikes_status(const struct fleet_actor *actor, const char *bike_id,
			       const struct audit_entry *audit, struct fleet_bike_status *out)
{
	size_t n;
	return reads_run(&bikes_status_query, actor, bike_id, audit, out, 1, &n);
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
