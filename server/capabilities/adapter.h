/* What every capability adapter shares: the application settings its handlers read, the
 * mapping of domain failures to MCP answers, and the hooks the server description gives the
 * protocol core (the caller's effective scopes, the audit row of a tools/call). No capability
 * includes another; they all include this. */
#ifndef BIKAROO_ADAPTER_H
#define BIKAROO_ADAPTER_H

#include "domain/types.h"
#include "server/protocol/mcp.h"

/* The application's settings, reached by handlers as ctx->server->app. */
struct adapter_settings {
	long confirm_ttl_s; /* seconds a report's confirmation request stays valid */
};

/* The settings of ctx's server (never NULL: defaults when the description has none). */
const struct adapter_settings *adapter_settings(const struct mcp_ctx *ctx);

/* The answer when PostgreSQL is unavailable, whatever the method (docs/security.md): -32603
 * "The fleet database is unavailable right now", HTTP 503 + Retry-After; never a result. */
int adapter_unavailable(struct mcp_error *err);
/* A domain call that failed for want of the database or of a working statement:
 * FLEET_UNAVAILABLE is adapter_unavailable(), anything else -32603 "Internal error". */
int adapter_domain_error(enum fleet_status st, struct mcp_error *err);
/* A failed read behind a resource: no scope -> 403 insufficient_scope on HTTP (like
 * tools/call); no right or not visible -> not found (no existence oracle); the rest ->
 * adapter_domain_error (RESOURCE_FAILED). */
enum resource_status adapter_read_failure(struct mcp_ctx *ctx, enum fleet_status st,
					  struct mcp_error *err);

/* struct mcp_server.caller_scopes: scopes ∩ role ∩ client application as PostgreSQL states
 * them (calls still apply the perimeter per object). */
int adapter_caller_scopes(struct mcp_ctx *ctx, unsigned *may, struct mcp_error *err);
/* The request reference every audit row is written with (the request_id argument of the domain's
 * audited calls): the request's trace id and a space, the token's reference (fleet_actor.
 * token_ref, never the token) and a space, each when there is one, then its JSON-RPC id.
 * fleet.audit_ref splits it into the row's trace_id, token_ref and request_id. */
#define ADAPTER_REF_MAX (33 + FLEET_TOKEN_REF_MAX + 96)
void adapter_request_ref(const struct mcp_ctx *ctx, char *buf, size_t cap);
/* struct mcp_server.audit: the audit row of one tools/call (who, which tool and target, a
 * digest of the arguments, the outcome, the request id); never the arguments, never a token. */
void adapter_audit(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		   const char *detail);

/* The text of a JSON value as a CallToolResult with structured content (sc stolen). */
json_t *adapter_structured(json_t *sc);

#endif
