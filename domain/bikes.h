/* Bikes: the shape of a bike id, and the bike ids a caller may see, for completion, through the
 * one read path (reads.h). (A bike's status is a declared read: server/capabilities/
 * bike_status.json.) No MCP, JSON-RPC or HTTP here. */
#ifndef BIKAROO_BIKES_H
#define BIKAROO_BIKES_H

#include "types.h"

#define BIKES_MAX_COMPLETIONS 100

/* True when id has the shape of a bike id: ^VL-[0-9]{4,6}$. */
bool bikes_id_valid(const char *id);

/* Up to BIKES_MAX_COMPLETIONS bike ids starting with prefix (compared literally) among the
 * bikes actor may see, in id order, into ids; *n is how many were written and *total how many
 * match in all. A prefix that no bike id can start with yields zero matches, not an error. */
enum fleet_status bikes_complete_ids(const struct fleet_actor *actor, const char *prefix,
				     char ids[][FLEET_BIKE_ID_MAX], size_t *n, long *total)
	__attribute__((warn_unused_result));

#endif
