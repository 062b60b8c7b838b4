/* OpenTelemetry's conventions for one MCP message (semantic-conventions-genai, its MCP page),
 * for dispatch.c: the message's server span, named "{mcp.method.name} {target}" (the tool or
 * prompt), parented on its params._meta traceparent (and tracestate), else on the transport's
 * context, which becomes a link when both are there; its attributes once answered; the names
 * of struct mcp_operation, which mcp.server.operation.duration is labelled with. */
#ifndef BIKAROO_OBSERVE_H
#define BIKAROO_OBSERVE_H

#include "mcp.h"

/* method as the conventions name it: the method table's static name (either era), else one of
 * their well-known names, else "_OTHER" (never what a client chose). */
const char *observe_method(const struct mcp_ctx *ctx, const char *method);
/* The message msg (borrowed: a request or notification; op_method: observe_method's) begins:
 * the trace it belongs to into trace_id, and its span, or NULL (not recorded). */
struct trace_span *observe_begin(const struct mcp_ctx *ctx, json_t *msg, const char *op_method,
				 char trace_id[33]);
/* The message (method: as it came) was answered as op says: s's name and attributes. */
void observe_end(struct trace_span *s, const struct mcp_ctx *ctx, json_t *msg, const char *method,
		 const struct mcp_operation *op);

#endif
