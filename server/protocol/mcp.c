/* Helpers every handler shares: errors, caching hints, revisions, the caller's scopes, strict
 * JSON parsing, and the governance a descriptor lists. */
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

int mcp_caller_scopes(struct mcp_ctx *ctx, unsigned *may, struct mcp_error *err)
{
	*may = ctx->req->actor->scopes;
	if (!ctx->server->caller_scopes)
		return 0;
	return ctx->server->caller_scopes(ctx, may, err);
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

json_t *mcp_governance_json(const struct mcp_governance *g)
{
	const char *const fields[][2] = {
		{"version", g->version}, {"owner", g->owner},
		{"domain", g->domain},   {"risk", g->risk},
		{"data", g->data},       {"roles", g->roles},
		{"systems", g->systems}, {"confirmation", g->confirmation},
		{"audit", g->audit},     {"lifecycle", g->lifecycle},
		{"sunset", g->sunset},   {"replacement", g->replacement},
	};
	json_t *gov = json_object();
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (fields[i][1])
			json_object_set_new(gov, fields[i][0], json_string(fields[i][1]));
	return gov;
}

void mcp_describe_governance(const struct mcp_ctx *ctx, json_t *o, const struct mcp_governance *g)
{
	const char *key = ctx->server->governance_key;
	if (!g || !key || !mcp_version_at_least(ctx, "2025-06-18"))
		return; /* descriptors have _meta from 2025-06-18 on */
	json_t *meta = json_object_get(o, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(o, "_meta", meta);
	}
	json_object_set_new(meta, key, mcp_governance_json(g));
}

bool mcp_ext_declared(const struct mcp_ctx *ctx, const struct mcp_ext_meta *ext)
{
	json_t *decl = json_object_get(ctx->client_extensions, ext->extension);
	if (!json_is_object(decl))
		return false;
	if (!ext->setting_key)
		return true;
	json_t *list = json_object_get(decl, ext->setting_key);
	size_t i;
	json_t *v;
	json_array_foreach (list, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), ext->setting_value) == 0)
			return true;
	return false;
}

bool mcp_ext_offered(const struct mcp_ctx *ctx, const struct mcp_ext_meta *ext)
{
	return !ext || !ext->exclusive || mcp_ext_declared(ctx, ext);
}

void mcp_describe_ext(const struct mcp_ctx *ctx, json_t *o, const struct mcp_ext_meta *ext)
{
	if (!ext || !mcp_version_at_least(ctx, "2025-06-18") || !mcp_ext_declared(ctx, ext))
		return; /* descriptors have _meta from 2025-06-18 on */
	json_t *add = json_loads(ext->meta, JSON_REJECT_DUPLICATES, NULL); /* mcp_ext_check()ed */
	json_t *meta = json_object_get(o, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(o, "_meta", meta);
	}
	json_object_update(meta, add);
	json_decref(add);
}

int mcp_ext_check(const struct mcp_ext_meta *ext)
{
	if (!ext)
		return 0;
	json_t *m = ext->meta ? json_loads(ext->meta, JSON_REJECT_DUPLICATES, NULL) : NULL;
	bool ok = ext->extension && json_is_object(m) && !ext->setting_key == !ext->setting_value;
	json_decref(m);
	return ok ? 0 : -1;
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
