/* Bikes: the shape of a bike id. (A bike's status is a declared read: server/capabilities/
 * bike_status.json; the bike ids a caller may see, for completion, are ids.h's.) No MCP,
 * JSON-RPC or HTTP here. */
#ifndef BIKAROO_BIKES_H
#define BIKAROO_BIKES_H

#include "types.h"

/* True when id has the shape of a bike id: ^VL-[0-9]{4,6}$. */
bool bikes_id_valid(const char *id);

#endif
