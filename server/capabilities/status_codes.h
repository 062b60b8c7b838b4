/* Status codes: bikaroo://fleet/status-codes, the reference table every bike status comes from. */
#ifndef BIKAROO_STATUS_CODES_CAPABILITY_H
#define BIKAROO_STATUS_CODES_CAPABILITY_H

#include "server/protocol/mcp.h"

/* The resource's read (resource_read_fn): the same for every caller who may read it. */
enum resource_status status_codes_resource(struct mcp_ctx *ctx, const char *uri, const char *value,
					   json_t **result, struct mcp_error *err);

#endif
