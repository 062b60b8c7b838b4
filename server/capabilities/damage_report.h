/* report_damaged_bike: the tool's descriptor parts for the registry in tools.c, its handler,
 * and the server-side confirmation (input_required + a sealed requestState) for client
 * applications registered with requires_confirmation. */
#ifndef BIKAROO_TOOL_REPORT_H
#define BIKAROO_TOOL_REPORT_H

#include "server/protocol/mcp.h"

extern const char tool_report_description[];
extern const char tool_report_in[];  /* input JSON Schema */
extern const char tool_report_out[]; /* output JSON Schema */

/* Seconds a confirmation's requestState stays valid (BIKAROO_CONFIRM_TTL). Call before serving. */
void tool_report_configure(long confirm_ttl_s);

/* The tools/call handler (tool_fn contract of tools.h). Writes the audit row of every call
 * it handles (the database does so for the outcomes it decides). */
int tool_report_damaged_bike(struct mcp_ctx *ctx, json_t *args, json_t **result,
			     struct mcp_error *err);

/* The JSON-RPC id of ctx's request as text ("" for none) into buf. */
void tool_request_id(const struct mcp_ctx *ctx, char *buf, size_t cap);

#endif
