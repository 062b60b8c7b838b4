/* The conformance server's description: the product's, with the fixtures (fixtures.h) after
 * its rows. */
#ifndef BIKAROO_CONF_REGISTRIES_H
#define BIKAROO_CONF_REGISTRIES_H

#include <stdbool.h>

#include "server/protocol/server.h"

/* Fills *out from product (its rows copied, then the fixtures'), its tasks kept by tasks (the
 * task store's provider) and its changes told through the task store's feed (which carries the
 * product's too when the server has a database). Call once; the rows live in static storage. */
void conf_describe(struct mcp_server *out, const struct mcp_server *product,
		   const struct mcp_task_provider *tasks);

#endif
