/* Status codes: bikaroo://fleet/status-codes, the domain's reference table as a JSON document. */
#include <stdlib.h>

#include "adapter.h"
#include "common/jsonw.h"
#include "domain/status_codes.h"
#include "server/protocol/resources.h"

#define STATUS_CODES_TTL_MS 300000L

static const struct mcp_governance status_codes_governance = {
	.version = "1.0.0",
	ADAPTER_GOV_STABLE,
	.risk = "none",
	.data = "public reference data",
	ADAPTER_GOV_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "none (reference data)",
};

static enum resource_status status_codes_resource(struct mcp_ctx *ctx, const char *uri,
						  const char *value, json_t **result,
						  struct mcp_error *err)
{
	(void)value;
	struct fleet_status_code codes[STATUS_CODES_MAX];
	size_t n = 0;
	enum fleet_status st = status_codes_read(ctx->req->actor, codes, STATUS_CODES_MAX, &n);
	if (st != FLEET_OK)
		return adapter_read_failure(ctx, st, err);
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:b}", "code", codes[i].code,
						      "label", codes[i].label, "description",
						      codes[i].description, "rentable",
						      codes[i].rentable));
	json_t *doc = json_pack("{s:o}", "statusCodes", list);
	char *text = jsonw_dump(doc);
	json_decref(doc);
	/* Reference data, the same for every caller who may read it. */
	*result = resources_text_result(uri, "application/json", text, STATUS_CODES_TTL_MS, false);
	free(text);
	return RESOURCE_OK;
}

static const struct resource_desc status_codes_resources[] = {{
	.uri = "bikaroo://fleet/status-codes",
	.name = "status-codes",
	.title = "Bike status codes",
	.description = "Every bike status code with its label, its meaning and whether a bike in "
		       "that status can be rented (JSON).",
	.mime_type = "application/json",
	.read = status_codes_resource,
	ADAPTER_SCOPE_READ,
	.governance = &status_codes_governance,
}};

const struct mcp_capability capability_status_codes = {
	.name = "status_codes",
	.resources = status_codes_resources,
	.nresources = MCP_COUNT(status_codes_resources),
};
