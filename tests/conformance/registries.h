/* The conformance server's description: the product's, with the fixtures (fixtures.h) after
 * its rows. */
#ifndef BIKAROO_CONF_REGISTRIES_H
#define BIKAROO_CONF_REGISTRIES_H

#include <stdbool.h>

#include "server/protocol/server.h"

/* Fills *out from product (its rows copied, then the fixtures'); without feed, no change feed
 * (no database behind the server). Call once; the rows live in static storage. */
void conf_describe(struct mcp_server *out, const struct mcp_server *product, bool feed);

#endif
