/* The capability catalogue as a document: bikaroo://catalog lists the capabilities the caller
 * may use (every row of the server description with its governance: owner, risk, data handled,
 * roles, confirmation, audit, lifecycle, contract version), filtered like the lists. */
#include <stdlib.h>

#include "adapter.h"
#include "gen/capabilities.h"
#include "common/jsonw.h"
#include "server/protocol/resources.h"
#include "server/protocol/server.h"

/* One capability's entry: its kind, name, title and governance. */
static json_t *catalog_entry(const char *kind, const char *name, const char *title,
			     const struct mcp_governance *g)
{
	json_t *e = mcp_governance_json(g);
	json_object_set_new(e, "kind", json_string(kind));
	json_object_set_new(e, "name", json_string(name));
	if (title)
		json_object_set_new(e, "title", json_string(title));
	return e;
}

/* Listed for this caller: its scope and roles, and not a row of an extension the client lacks. */
#define CATALOG_MAY(ctx, who, row) (MCP_MAY((who), (row)) && mcp_ext_offered((ctx), (row)->ext))

enum resource_status capability_catalog_read(struct mcp_ctx *ctx, const char *uri,
					     const char *value, json_t **result,
					     struct mcp_error *err)
{
	(void)value;
	struct mcp_caller who;
	if (mcp_caller(ctx, &who, err) != 0)
		return RESOURCE_FAILED;
	if (!(who.scopes & FLEET_SCOPE_READ))
		return RESOURCE_NOT_FOUND; /* a caller the database does not know reads nothing */
	const struct mcp_server *s = ctx->server;
	json_t *list = json_array();
	for (size_t i = 0; i < s->ntools; i++)
		if (s->tools[i].governance && CATALOG_MAY(ctx, &who, &s->tools[i]))
			json_array_append_new(list, catalog_entry("tool", s->tools[i].name,
								  s->tools[i].title,
								  s->tools[i].governance));
	for (size_t i = 0; i < s->nresources; i++)
		if (s->resources[i].governance && CATALOG_MAY(ctx, &who, &s->resources[i]))
			json_array_append_new(list, catalog_entry("resource", s->resources[i].uri,
								  s->resources[i].title,
								  s->resources[i].governance));
	for (size_t i = 0; i < s->ntemplates; i++)
		if (s->templates[i].governance && CATALOG_MAY(ctx, &who, &s->templates[i]))
			json_array_append_new(list, catalog_entry("resourceTemplate",
								  s->templates[i].uri_template,
								  s->templates[i].title,
								  s->templates[i].governance));
	for (size_t i = 0; i < s->nprompts; i++)
		if (s->prompts[i].governance && MCP_MAY(&who, &s->prompts[i]))
			json_array_append_new(list, catalog_entry("prompt", s->prompts[i].name,
								  s->prompts[i].title,
								  s->prompts[i].governance));
	json_t *doc = json_pack("{s:s, s:s, s:o}", "server", s->name, "version", s->version,
				"capabilities", list);
	char *text = jsonw_dump(doc);
	json_decref(doc);
	*result = resources_text_result(uri, "application/json", text, 60000, true);
	free(text);
	return RESOURCE_OK;
}
