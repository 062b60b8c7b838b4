/* What a transport needs of the protocol core: where a connection keeps its subscriptions and
 * listen streams (subscriptions.h), the answer to one message, and the entry point that turns one
 * into the other for a loaded server (struct mcp_service, server.h). */
#ifndef BIKAROO_DISPATCH_H
#define BIKAROO_DISPATCH_H

#include "changes.h"
#include "mcp.h"
#include "subscriptions.h"

/* What the transport writes back. body is new memory (caller frees), NULL = no body. */
struct mcp_response {
	int http_status;
	char *body;
	/* Set when the token lacks a scope the method needs (HTTP answers 403 insufficient_scope
	 * with a challenge naming it). Static string or NULL. */
	const char *missing_scope;
	/* The backend was unavailable (HTTP answers 503 with Retry-After: MCP_RETRY_AFTER). */
	bool unavailable;
	/* Seconds for a Retry-After header (a 429), 0: none. */
	long retry_after;
	/* For access logs and metrics, all static strings from bounded sets (never client text):
	 * the method table's name (NULL: none matched), the tool, resource (URI or URI template)
	 * or prompt of the server description (NULL: none), and how it ended: ok, failed (a tool
	 * result with isError), denied, invalid, not_found, input_required, rate_limited, stream,
	 * notification, unavailable or error. */
	const char *method;
	const char *name;
	const char *outcome;
	/* The request was local_only and its method is not local: nothing was run or answered,
	 * the transport runs it again where it may wait. */
	bool not_local;
	/* The trace the message belongs to (its params._meta traceparent's, else the transport's):
	 * 32 hex digits, for the access line. */
	char trace_id[33];
	/* Its server span (common/trace.h; NULL: not recorded): the transport adds its own parts
	 * and ends it once the answer is sent (mcp_response_free ends it when still there). */
	struct trace_span *span;
	/* The message as the conventions describe it, for mcp.server.operation.duration. */
	struct mcp_operation op;
};

/* The change feed of the description svc serves (NULL: none), for a transport's sinks. */
const struct mcp_change_feed *mcp_service_changes(const struct mcp_service *svc);

/* Handles one message for svc. Never fails: every outcome is a response (possibly 202, no
 * body). */
void mcp_handle(const struct mcp_service *svc, const struct mcp_request *req,
		struct mcp_response *out);
void mcp_response_free(struct mcp_response *r);

/* Whether method (e.g. an Mcp-Method header's value) is one that answers without waiting: a
 * request announcing it may be tried with local_only. */
bool mcp_method_local(const struct mcp_service *svc, const char *method);

#endif
