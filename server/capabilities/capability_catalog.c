/* The capability catalogue as a document: bikaroo://catalog lists the capabilities the caller
 * may use (every row of the server description with its governance: owner, risk, data handled,
 * roles, confirmation, audit, lifecycle, contract version), filtered like the lists. */
#include <stdlib.h>

#include "adapter.h"
#include "common/jsonw.h"
#include "server/protocol/resources.h"
#include "server/protocol/server.h"

static const struct mcp_governance catalog_governance = {
	.version = "1.0.0",
	ADAPTER_GOV_STABLE,
	.risk = "none",
	.data = "public: descriptions of this server's capabilities",
	ADAPTER_GOV_READ_ONLY,
	.systems = "none",
	.audit = "none",
};

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

/* Listed for this caller: the scope held, and not a row of an extension the client lacks. */
static bool catalog_may(const struct mcp_ctx *ctx, unsigned scope, const struct mcp_ext_meta *ext,
			unsigned may)
{
	return (!scope || (scope & may)) && mcp_ext_offered(ctx, ext);
}

static enum resource_status catalog_read(struct mcp_ctx *ctx, const char *uri, const char *value,
					 json_t **result, struct mcp_error *err)
{
	(void)value;
	unsigned may = 0;
	if (mcp_caller_scopes(ctx, &may, err) != 0)
		return RESOURCE_FAILED;
	if (!(may & FLEET_SCOPE_READ))
		return RESOURCE_NOT_FOUND; /* a caller the database does not know reads nothing */
	const struct mcp_server *s = ctx->server;
	json_t *list = json_array();
	for (size_t i = 0; i < s->ntools; i++)
		if (s->tools[i].governance &&
		    catalog_may(ctx, s->tools[i].scope, s->tools[i].ext, may))
			json_array_append_new(list, catalog_entry("tool", s->tools[i].name,
								  s->tools[i].title,
								  s->tools[i].governance));
	for (size_t i = 0; i < s->nresources; i++)
		if (s->resources[i].governance &&
		    catalog_may(ctx, s->resources[i].scope, s->resources[i].ext, may))
			json_array_append_new(list, catalog_entry("resource", s->resources[i].uri,
								  s->resources[i].title,
								  s->resources[i].governance));
	for (size_t i = 0; i < s->ntemplates; i++)
		if (s->templates[i].governance &&
		    catalog_may(ctx, s->templates[i].scope, s->templates[i].ext, may))
			json_array_append_new(list, catalog_entry("resourceTemplate",
								  s->templates[i].uri_template,
								  s->templates[i].title,
								  s->templates[i].governance));
	for (size_t i = 0; i < s->nprompts; i++)
		if (s->prompts[i].governance && catalog_may(ctx, s->prompts[i].scope, NULL, may))
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

static const struct resource_desc catalog_resources[] = {{
	.uri = "bikaroo://catalog",
	.name = "capability-catalog",
	.title = "Capability catalogue",
	.description = "The capabilities you may use on this server, each with its governance "
		       "(owner, risk, data handled, roles, confirmation, audit, lifecycle) and its "
		       "contract version (JSON).",
	.mime_type = "application/json",
	.read = catalog_read,
	ADAPTER_SCOPE_READ,
	.governance = &catalog_governance,
}};

const struct mcp_capability capability_catalog = {
	.name = "capability_catalog",
	.resources = catalog_resources,
	.nresources = MCP_COUNT(catalog_resources),
};
