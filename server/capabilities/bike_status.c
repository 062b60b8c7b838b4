/* Bike status: one bike as the caller may see it, through the tool get_bike_status and the
 * resource template bikaroo://fleet/bikes/{bikeId}, one JSON view of a bike for both. */
#include <stdio.h>
#include <stdlib.h>

#include "adapter.h"
#include "common/jsonw.h"
#include "domain/bikes.h"
#include "gen/schemas.h"
#include "server/protocol/resources.h"
#include "server/protocol/tools.h"

#define BIKE_STATUS_TTL_MS 10000L

static const struct mcp_governance bike_status_governance = {
	.version = "1.1.0",
	ADAPTER_GOV_STABLE,
	.risk = "low",
	.data = "internal: fleet operations data of the caller's regions, no personal data",
	ADAPTER_GOV_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "one audit row per call: subject, client, tool, bikeId, argument digest, "
		 "outcome, request id",
};

static const struct mcp_governance bike_governance = {
	.version = "1.1.1",
	ADAPTER_GOV_STABLE,
	.risk = "low",
	.data = "internal: fleet operations data of the caller's regions, no personal data",
	ADAPTER_GOV_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "one audit row per read, like the tool's calls: subject, client, the URI "
		 "template, bikeId, outcome, request id",
};

/* One bike's status as the tool's structured content and the template's document (new): one
 * shape, exactly the properties of the tool's outputSchema, no more (a client validates the
 * answer against the schema it listed, perhaps on an instance of the previous release, whose
 * schema was closed: the station's name, b->station_name, is added, optional, by the release
 * after this one; docs/capabilities.md). */
static json_t *bike_status_json(const struct fleet_bike_status *b)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:o}", "bikeId", b->bike_id, "status",
			 b->status, "statusLabel", b->status_label, "region", b->region, "station",
			 *b->station ? json_string(b->station) : json_null(), "batteryPct",
			 b->battery_pct < 0 ? json_null() : json_integer(b->battery_pct),
			 "lastSeenAt", b->last_seen_at, "openCaseId",
			 *b->open_case_id ? json_string(b->open_case_id) : json_null());
}

/* A refused read as words a person (or a model) can act on; unknown and out-of-perimeter bikes
 * read alike: no existence oracle. */
static json_t *bike_status_refusal(enum fleet_status st, const char *bike_id)
{
	char text[320];
	switch (st) {
	case FLEET_NOT_FOUND:
		snprintf(text, sizeof text,
			 "Bike %s was not found among the bikes you can access. Check the id on "
			 "the frame (VL- and 4 to 6 digits).",
			 bike_id);
		break;
	case FLEET_FORBIDDEN:
		snprintf(text, sizeof text,
			 "You are not permitted to do this with this application. Ask an "
			 "administrator for the role or client access it needs.");
		break;
	default:
		snprintf(text, sizeof text, "The request could not be completed (%s).",
			 fleet_status_name(st));
		break;
	}
	return tools_result(text, NULL, true);
}

/* get_bike_status: the read and its one audit row (domain/reads.h). */
static int bike_status_call(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	const char *bike_id = json_string_value(json_object_get(args, "bikeId"));
	struct adapter_call call;
	adapter_call_entry(ctx, args, &call);
	struct fleet_bike_status b;
	enum fleet_status st = bikes_status(ctx->req->actor, bike_id, &call.entry, &b);
	if (st == FLEET_UNAVAILABLE)
		return adapter_unavailable(err);
	if (st == FLEET_FORBIDDEN)
		ctx->outcome = "denied"; /* a refusal, not a failure (access line, metrics) */
	*result = st == FLEET_OK ? adapter_structured(bike_status_json(&b))
				 : bike_status_refusal(st, bike_id);
	return 0;
}

/* bikaroo://fleet/bikes/{bikeId}: the same read and rules as the tool. */
static enum resource_status bike_status_read(struct mcp_ctx *ctx, const char *uri,
					     const char *value, json_t **result,
					     struct mcp_error *err)
{
	struct adapter_call call;
	adapter_read_entry(ctx, uri, value, &call);
	struct fleet_bike_status b;
	enum fleet_status st = bikes_status(ctx->req->actor, value, &call.entry, &b);
	if (st != FLEET_OK)
		return adapter_read_failure(ctx, st, err);
	json_t *doc = bike_status_json(&b);
	char *text = jsonw_dump(doc);
	json_decref(doc);
	/* Per-user: what this caller may see. */
	*result = resources_text_result(uri, "application/json", text, BIKE_STATUS_TTL_MS, true);
	free(text);
	return RESOURCE_OK;
}

static const struct tool_desc bike_status_tools[] = {{
	.name = "get_bike_status",
	.title = "Bike status",
	.description = "Current status of one bike: status code and label, region and station, "
		       "battery level, when it was last seen, and its open investigation case if "
		       "any. Only bikes in your regions are visible; others read as not found.",
	.input_schema = schema_get_bike_status_input,
	.output_schema = schema_get_bike_status_output,
	.read_only = true,
	.idempotent = true,
	.scope = FLEET_SCOPE_READ,
	.scope_name = "fleet:read",
	.fn = bike_status_call,
	.audit = {.target = "bikeId", .self = true},
	.example = "{\"bikeId\":\"VL-2048\"}",
	.governance = &bike_status_governance,
	.ext = &adapter_card_link,
}};

static const struct resource_template_desc bike_status_templates[] = {{
	.uri_template = "bikaroo://fleet/bikes/{bikeId}",
	.name = "bike",
	.title = "Bike status",
	.description = "The current status of one bike in your regions (the same data as the "
		       "get_bike_status tool), as JSON.",
	.mime_type = "application/json",
	.prefix = "bikaroo://fleet/bikes/",
	.var = "bikeId",
	.suffix = "",
	.read = bike_status_read,
	.complete = adapter_complete_bike_id,
	ADAPTER_SCOPE_READ,
	.governance = &bike_governance,
}};

const struct mcp_capability capability_bike_status = {
	.name = "bike_status",
	.tools = bike_status_tools,
	.ntools = MCP_COUNT(bike_status_tools),
	.templates = bike_status_templates,
	.ntemplates = MCP_COUNT(bike_status_templates),
};
