/* The status-code table: fleet.status_codes_for through the one read path (reads.h). Reference
 * data: no key, no region, so no perimeter. */
#include "status_codes.h"

#include "reads.h"

static const struct reads_column status_codes_columns[] = {
	READS_COLUMN(struct fleet_status_code, code, READS_TEXT, "code"),
	READS_COLUMN(struct fleet_status_code, label, READS_TEXT, "label"),
	READS_COLUMN(struct fleet_status_code, description, READS_TEXT, "description"),
	READS_COLUMN(struct fleet_status_code, rentable, READS_BOOL, "rentable"),
};

static const struct reads_query status_codes_query = {
	.function = "fleet.status_codes_for",
	.columns = status_codes_columns,
	.ncolumns = sizeof status_codes_columns / sizeof status_codes_columns[0],
	.row_size = sizeof(struct fleet_status_code),
	.list = true,
};

enum fleet_status status_codes_read(const struct fleet_actor *actor, struct fleet_status_code *out,
				    size_t cap, size_t *n)
{
	return reads_run(&status_codes_query, actor, NULL, NULL, out, cap, n);
}
