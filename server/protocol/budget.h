/* The caller's volume budget for one request (ratelimit.h: token buckets per subject and client
 * application, shared by the deployment when a store is configured): a tools/call takes from the
 * read or the write budget, and so does every other path that reads the business (resources/read
 * of a row that reads it, completion, each URI a subscription honours), from the read budget. */
#ifndef BIKAROO_BUDGET_H
#define BIKAROO_BUDGET_H

#include <stdbool.h>

#include "mcp.h"

/* Takes one token of the read (write false) or write budget for ctx's caller: 0, or -1 with err
 * filled (MCP_RATE_LIMITED, HTTP 429 + Retry-After) and ctx->outcome "rate_limited"; logged and
 * counted in the rate-limited metric. what names the path for the log line. */
int mcp_budget_take(struct mcp_ctx *ctx, bool write, const char *what, struct mcp_error *err)
	__attribute__((warn_unused_result));

#endif
