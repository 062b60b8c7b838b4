/* A descriptor's governance and extension parts (see describe.h). */
#include "describe.h"

#include <string.h>

#include "mcp.h"

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

void mcp_describe_governance(const struct mcp_ctx *ctx, const char *key, json_t *o,
			     const struct mcp_governance *g)
{
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
