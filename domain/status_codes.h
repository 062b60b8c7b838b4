/* Status codes: the reference table of bike statuses, read as the acting identity under
 * row-level security in one round trip. No MCP here. */
#ifndef BIKAROO_STATUS_CODES_H
#define BIKAROO_STATUS_CODES_H

#include "types.h"

#define STATUS_CODES_MAX 32

/* One status code of the reference table. */
struct fleet_status_code {
	char code[FLEET_TEXT_MAX];
	char label[FLEET_TEXT_MAX];
	char description[512];
	bool rentable;
};

/* Reads the status-code table in display order into out[0..cap) as actor; *n receives the
 * count. FLEET_FORBIDDEN when the actor may not read at all. */
enum fleet_status status_codes_read(const struct fleet_actor *actor, struct fleet_status_code *out,
				    size_t cap, size_t *n) __attribute__((warn_unused_result));

#endif
