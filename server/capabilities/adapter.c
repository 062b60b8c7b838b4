/* The capability adapters' shared parts (see adapter.h). */
#include "adapter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "domain/audit.h"
#include "domain/rights.h"
#include "server/protocol/reqstate.h"
#include "server/protocol/tools.h"

const struct adapter_settings *adapter_settings(const struct mcp_ctx *ctx)
{
	static const struct adapter_settings defaults = {.confirm_ttl_s = 300};
	const struct adapter_settings *s = ctx->server->app;
	return s ? s : &defaults;
}

int adapter_unavailable(struct mcp_error *err)
{
	return mcp_unavailable(
		err, "The fleet database is unavailable right now. Try again in a minute.");
}

int adapter_domain_error(enum fleet_status st, struct mcp_error *err)
{
	if (st == FLEET_UNAVAILABLE)
		return adapter_unavailable(err);
	return mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error", NULL);
}

enum resource_status adapter_read_failure(struct mcp_ctx *ctx, enum fleet_status st,
					  struct mcp_error *err)
{
	if (st == FLEET_NOT_FOUND)
		return RESOURCE_NOT_FOUND;
	if (st == FLEET_FORBIDDEN && !(ctx->req->actor->scopes & FLEET_SCOPE_READ)) {
		err->missing_scope = "fleet:read";
		mcp_fail(err, MCP_INVALID_PARAMS, "Insufficient scope",
			 json_pack("{s:s}", "requiredScope", "fleet:read"));
		return RESOURCE_FAILED;
	}
	if (st == FLEET_FORBIDDEN)
		return RESOURCE_NOT_FOUND;
	adapter_domain_error(st, err);
	return RESOURCE_FAILED;
}

int adapter_caller_scopes(struct mcp_ctx *ctx, unsigned *may, struct mcp_error *err)
{
	enum fleet_status st = rights_effective_scopes(ctx->req->actor, may);
	return st == FLEET_OK ? 0 : adapter_domain_error(st, err);
}

void adapter_request_ref(const struct mcp_ctx *ctx, char *buf, size_t cap)
{
	char id[96];
	mcp_request_id(ctx, id, sizeof id);
	const char *trace = ctx->req->trace_id;
	const char *token = ctx->req->actor->token_ref;
	bool t = trace && strlen(trace) == 32;
	snprintf(buf, cap, "%s%s%s%s%s", t ? trace : "", t ? " " : "", token, *token ? " " : "",
		 id);
}

void adapter_audit(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		   const char *detail)
{
	char digest[65], reqid[ADAPTER_REF_MAX];
	reqstate_digest(args ? args : json_null(), digest);
	adapter_request_ref(ctx, reqid, sizeof reqid);
	const char *key = ctx->server->target_arg;
	struct audit_entry e = {.tool = tool,
				.target =
					key ? json_string_value(json_object_get(args, key)) : NULL,
				.args_digest = digest,
				.outcome = outcome,
				.detail = detail,
				.request_id = reqid};
	if (audit_record(ctx->req->actor, &e) != FLEET_OK)
		log_msg(LOG_WARN, ctx->req->reqid, "audit row missing for %s", tool);
}

json_t *adapter_structured(json_t *sc)
{
	char *text = jsonw_dump(sc);
	json_t *r = tools_result(text, sc, false);
	free(text);
	return r;
}
