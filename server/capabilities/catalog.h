/* The catalogue: the one list of what Bikaroo serves (one value per file of server/capabilities),
 * and the server description built from it for the protocol core. */
#ifndef BIKAROO_CATALOG_H
#define BIKAROO_CATALOG_H

#include "adapter.h"
#include "server/protocol/server.h"

#define CATALOG_GOVERNANCE_KEY "com.bikaroo/governance"

/* Fills *out with Bikaroo's server description: every capability's rows, the hooks (the
 * caller's rights from PostgreSQL, the audit), the change feed, and app (borrowed for the
 * server's life; NULL: defaults). 0, or -1 (logged) when two rows collide. Release it with
 * mcp_server_release() after the service made of it is freed. */
int catalog_describe(struct mcp_server *out, const struct mcp_app *app)
	__attribute__((warn_unused_result));

#endif
