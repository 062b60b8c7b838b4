/* The conformance server's description: the product's, serving the fixtures (fixtures.h) in place
 * of its rows. */
#ifndef BIKAROO_CONF_REGISTRIES_H
#define BIKAROO_CONF_REGISTRIES_H

#include <stdbool.h>

#include "server/protocol/server.h"

/* Fills *out from product (its name, version, instructions and extensions) with the fixtures'
 * rows and none of the product's, and none of its hooks that reach the business database (the
 * caller's rights, the audit): its tasks kept by tasks (the task store's provider), its changes
 * told through the task store's feed. Call once; the rows live in static storage. */
void conf_describe(struct mcp_server *out, const struct mcp_server *product,
		   const struct mcp_task_provider *tasks);

#endif
