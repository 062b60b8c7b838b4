/* The catalogue: the one list of what Bikaroo serves (every tool, resource, template and prompt,
 * each with its governance), and the server description built from it for the protocol core. */
#ifndef BIKAROO_CATALOG_H
#define BIKAROO_CATALOG_H

#include "adapter.h"
#include "server/protocol/mcp.h"

#define CATALOG_GOVERNANCE_KEY "com.bikaroo/governance"
#define CATALOG_URI "bikaroo://catalog"

/* Fills *out with Bikaroo's server description: its tables, the hooks (the caller's rights
 * from PostgreSQL, the audit), the change feed, and set (borrowed for the server's life; NULL:
 * defaults). Load it with mcp_server_load() before serving. */
void catalog_describe(struct mcp_server *out, const struct adapter_settings *set);

/* bikaroo://catalog (resource_read_fn): the capabilities the caller may use, with their
 * governance and contract versions (application/json, per caller). */
enum resource_status catalog_read(struct mcp_ctx *ctx, const char *uri, const char *value,
				  json_t **result, struct mcp_error *err);

#endif
