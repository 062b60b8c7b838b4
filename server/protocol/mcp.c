/* Helpers every handler shares: errors, caching hints, revisions, request ids, strict JSON
 * parsing. */
#include "changes.h"
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Revisions served through `initialize`, newest first (the counter-offer is the first). */
static const char *const mcp_legacy_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
#define MCP_NLEGACY (sizeof mcp_legacy_versions / sizeof mcp_legacy_versions[0])

int mcp_fail(struct mcp_error *err, int code, const char *message, json_t *data)
{
	err->code = code;
	err->message = message;
	err->data = data;
	return -1;
}

int mcp_unavailable(struct mcp_error *err, const char *message)
{
	err->unavailable = true;
	return mcp_fail(err, MCP_INTERNAL_ERROR, message,
			json_pack("{s:i}", "retryAfterSeconds", MCP_RETRY_AFTER));
}

int mcp_limited_as(struct mcp_error *err, int http_status, const char *message, long retry_after_s)
{
	err->http_status = http_status;
	err->retry_after = retry_after_s;
	return mcp_fail(err, MCP_RATE_LIMITED, message,
			json_pack("{s:I}", "retryAfterSeconds", (json_int_t)retry_after_s));
}

int mcp_limited(struct mcp_error *err, long retry_after_s)
{
	return mcp_limited_as(err, 429, "Too many tool calls: retry after the delay given",
			      retry_after_s);
}

int mcp_require_scope(struct mcp_ctx *ctx, unsigned scope, const char *scope_name,
		      struct mcp_error *err)
{
	if (!scope || (ctx->req->actor->scopes & scope))
		return 0;
	ctx->outcome = "denied";
	err->missing_scope = scope_name;
	return mcp_fail(err, MCP_INVALID_PARAMS, "Insufficient scope",
			json_pack("{s:s}", "requiredScope", scope_name ? scope_name : ""));
}

int mcp_input_responses_check(json_t *responses, struct mcp_error *err)
{
	if (!json_is_object(responses))
		return mcp_fail(err, MCP_INVALID_PARAMS, "inputResponses must be an object", NULL);
	const char *key;
	json_t *v;
	json_object_foreach (responses, key, v)
		if (!json_is_object(v))
			return mcp_fail(err, MCP_INVALID_PARAMS,
					"Each inputResponses entry must be the result object of "
					"its input request",
					json_pack("{s:s}", "key", key));
	return 0;
}

bool mcp_version_at_least(const struct mcp_ctx *ctx, const char *v)
{
	return strcmp(ctx->version, v) >= 0;
}

void mcp_cacheable(json_t *result, long ttl_ms, bool private_scope)
{
	json_object_set_new(result, "ttlMs", json_integer(ttl_ms));
	json_object_set_new(result, "cacheScope",
			    json_string(private_scope ? "private" : "public"));
}

void mcp_request_id(const struct mcp_ctx *ctx, char *buf, size_t cap)
{
	/* ASCII (\uXXXX escapes): a caller's buf may cut it, never inside a UTF-8 sequence that
	 * PostgreSQL would then refuse (the audit's request_id). */
	char *text =
		ctx->id ? json_dumps(ctx->id, JSON_COMPACT | JSON_ENCODE_ANY | JSON_ENSURE_ASCII)
			: NULL;
	snprintf(buf, cap, "%s", text ? text : "");
	free(text);
}

bool mcp_change_of_rights_of(const struct mcp_change *c, const char *subject, const char *client)
{
	return (c->subject && strcmp(c->subject, subject) == 0) ||
	       (c->client && strcmp(c->client, client) == 0);
}

json_t *mcp_parse_strict(const char *text, size_t len)
{
	json_error_t e;
	/* NUL inside strings is refused unless JSON_ALLOW_NUL; invalid UTF-8 is always refused. */
	return json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
}

const char *mcp_legacy_version(size_t i)
{
	return i < MCP_NLEGACY ? mcp_legacy_versions[i] : NULL;
}
