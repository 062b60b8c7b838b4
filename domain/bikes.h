/* Bikes: a bike's status read as the acting identity, and the bike ids a caller may see, for
 * completion; both through the one read path (reads.h). No MCP, JSON-RPC or HTTP here: plain
 * structs in, plain structs and a status out. */
#ifndef BIKAROO_BIKES_H
#define BIKAROO_BIKES_H

#include "audit.h"
#include "types.h"

#define BIKES_MAX_COMPLETIONS 100

struct fleet_bike_status {
	char bike_id[FLEET_BIKE_ID_MAX];
	char status[FLEET_TEXT_MAX];
	char status_label[FLEET_TEXT_MAX];
	char region[FLEET_TEXT_MAX];
	char station[FLEET_TEXT_MAX];      /* "" = none */
	char station_name[FLEET_TEXT_MAX]; /* "" = none */
	int battery_pct;                   /* -1 = unknown */
	char last_seen_at[FLEET_TIME_MAX];
	char open_case_id[FLEET_TEXT_MAX]; /* "" = none */
};

/* True when id has the shape of a bike id: ^VL-[0-9]{4,6}$. */
bool bikes_id_valid(const char *id);

/* Reads a bike's status as actor (fleet.bike_status_as). FLEET_NOT_FOUND for unknown and
 * out-of-perimeter bikes alike; FLEET_FORBIDDEN when the actor's role or client may not read at
 * all. With audit (reads.h), the call's one audit row, committed before it returns; every call,
 * even a malformed id, leaves its row. */
enum fleet_status bikes_status(const struct fleet_actor *actor, const char *bike_id,
			       const struct audit_entry *audit, struct fleet_bike_status *out)
	__attribute__((warn_unused_result));

/* Up to BIKES_MAX_COMPLETIONS bike ids starting with prefix (compared literally) among the
 * bikes actor may see, in id order, into ids; *n is how many were written and *total how many
 * match in all. A prefix that no bike id can start with yields zero matches, not an error. */
enum fleet_status bikes_complete_ids(const struct fleet_actor *actor, const char *prefix,
				     char ids[][FLEET_BIKE_ID_MAX], size_t *n, long *total)
	__attribute__((warn_unused_result));

#endif
