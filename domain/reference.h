/* Reference reads behind resources and completion: the status-code table and the bike ids a
 * caller may see. Run as the acting identity, one round trip each, under row-level security.
 * No MCP here: plain structs in, plain structs and a status out. */
#ifndef BIKAROO_REFERENCE_H
#define BIKAROO_REFERENCE_H

#include <stddef.h>

#include "fleet.h"

#define REFERENCE_MAX_CODES 32
#define REFERENCE_MAX_COMPLETIONS 100

/* Reads the status-code table in display order into out[0..cap) as actor; *n receives the
 * count. FLEET_FORBIDDEN when the actor may not read at all. */
enum fleet_status reference_status_codes(const struct fleet_actor *actor,
					 struct fleet_status_code *out, size_t cap, size_t *n)
	__attribute__((warn_unused_result));

/* Up to REFERENCE_MAX_COMPLETIONS bike ids starting with prefix (compared literally) among the
 * bikes actor may see, in id order, into ids; *n is how many were written and *total how many
 * match in all. A prefix that no bike id can start with yields zero matches, not an error. */
enum fleet_status reference_complete_bike_ids(const struct fleet_actor *actor, const char *prefix,
					      char ids[][FLEET_BIKE_ID_MAX], size_t *n, long *total)
	__attribute__((warn_unused_result));

#endif
