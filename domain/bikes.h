/* Bikes: a bike's status read as the acting identity (plain, or audited), and the bike ids a
 * caller may see, for completion. No MCP, JSON-RPC or HTTP here: plain structs in, plain
 * structs and a status out. */
#ifndef BIKAROO_BIKES_H
#define BIKAROO_BIKES_H

#include "types.h"

#define BIKES_MAX_COMPLETIONS 100

struct fleet_bike_status {
	char bike_id[FLEET_BIKE_ID_MAX];
	char status[FLEET_TEXT_MAX];
	char status_label[FLEET_TEXT_MAX];
	char region[FLEET_TEXT_MAX];
	char station[FLEET_TEXT_MAX]; /* "" = none */
	int battery_pct;              /* -1 = unknown */
	char last_seen_at[FLEET_TIME_MAX];
	char open_case_id[FLEET_TEXT_MAX]; /* "" = none */
};

/* True when id has the shape of a bike id: ^VL-[0-9]{4,6}$. */
bool bikes_id_valid(const char *id);

/* Reads a bike's status as actor. FLEET_NOT_FOUND for unknown and out-of-perimeter bikes alike;
 * FLEET_FORBIDDEN when the actor's role or client may not read at all. */
enum fleet_status bikes_status(const struct fleet_actor *actor, const char *bike_id,
			       struct fleet_bike_status *out) __attribute__((warn_unused_result));

/* The same read, and the call's audit row (tool get_bike_status, target bike_id, the
 * arguments' digest, outcome ok / not_found / denied, request_id): a denial's row in the read's
 * own transaction (fleet.bike_status_read_as, or fleet.audit_as for a token without fleet:read),
 * an allowed read's by group commit (audit_record_read). Returns only once the row has
 * committed; when it could not be written, that status (e.g. FLEET_UNAVAILABLE), never the
 * read. args_digest: SHA-256 hex of the canonical arguments; request_id may be NULL. */
enum fleet_status bikes_status_audited(const struct fleet_actor *actor, const char *bike_id,
				       const char *args_digest, const char *request_id,
				       struct fleet_bike_status *out)
	__attribute__((warn_unused_result));

/* Up to BIKES_MAX_COMPLETIONS bike ids starting with prefix (compared literally) among the
 * bikes actor may see, in id order, into ids; *n is how many were written and *total how many
 * match in all. A prefix that no bike id can start with yields zero matches, not an error. */
enum fleet_status bikes_complete_ids(const struct fleet_actor *actor, const char *prefix,
				     char ids[][FLEET_BIKE_ID_MAX], size_t *n, long *total)
	__attribute__((warn_unused_result));

#endif
