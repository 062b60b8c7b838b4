/* Bike status: one bike as the caller may see it, through a tool, a resource template and
 * completion (see bike_status.h). */
#include "bike_status.h"

#include <stdio.h>
#include <stdlib.h>

#include "adapter.h"
#include "common/jsonw.h"
#include "server/protocol/reqstate.h"
#include "server/protocol/resources.h"
#include "server/protocol/tools.h"

#define BIKE_STATUS_TTL_MS 10000L

const char bike_status_description[] =
	"Current status of one bike: status code and label, region and station, battery level, "
	"when it was last seen, and its open investigation case if any. Only bikes in your regions "
	"are visible; others read as not found.";

const char bike_status_in[] =
	"{\"type\":\"object\","
	"\"properties\":{\"bikeId\":{\"type\":\"string\",\"pattern\":\"^VL-[0-9]{4,6}$\","
	"\"description\":\"The bike's id as printed on its frame, e.g. VL-2048.\"}},"
	"\"required\":[\"bikeId\"],\"additionalProperties\":false}";

const char bike_status_out[] =
	"{\"type\":\"object\","
	"\"properties\":{"
	"\"bikeId\":{\"type\":\"string\"},"
	"\"status\":{\"type\":\"string\",\"description\":\"A code of "
	"bikaroo://fleet/status-codes.\"},"
	"\"statusLabel\":{\"type\":\"string\"},"
	"\"region\":{\"type\":\"string\"},"
	"\"station\":{\"type\":[\"string\",\"null\"]},"
	"\"batteryPct\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"maximum\":100},"
	"\"lastSeenAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"openCaseId\":{\"type\":[\"string\",\"null\"]}},"
	"\"required\":[\"bikeId\",\"status\",\"statusLabel\",\"region\",\"station\",\"batteryPct\","
	"\"lastSeenAt\",\"openCaseId\"],"
	"\"additionalProperties\":false}";

json_t *bike_status_json(const struct fleet_bike_status *b)
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

int bike_status_call(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	const char *bike_id = json_string_value(json_object_get(args, "bikeId"));
	struct fleet_bike_status b;
	char digest[65], reqid[ADAPTER_REF_MAX];
	reqstate_digest(args, digest);
	adapter_request_ref(ctx, reqid, sizeof reqid);
	enum fleet_status st = bikes_status_audited(ctx->req->actor, bike_id, digest, reqid, &b);
	if (st == FLEET_UNAVAILABLE)
		return adapter_unavailable(err);
	*result = st == FLEET_OK ? adapter_structured(bike_status_json(&b))
				 : bike_status_refusal(st, bike_id);
	return 0;
}

enum resource_status bike_status_read(struct mcp_ctx *ctx, const char *uri, const char *value,
				      json_t **result, struct mcp_error *err)
{
	struct fleet_bike_status b;
	enum fleet_status st = bikes_status(ctx->req->actor, value, &b);
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

int bike_status_complete(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			 struct mcp_error *err)
{
	char ids[BIKES_MAX_COMPLETIONS][FLEET_BIKE_ID_MAX];
	size_t n = 0;
	enum fleet_status st = bikes_complete_ids(ctx->req->actor, prefix, ids, &n, total);
	if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL)
		return adapter_domain_error(st, err);
	/* A caller who may not read gets no suggestions, like a caller whose prefix matches
	 * nothing: completion never reveals what the caller could not read. */
	*values = json_array();
	if (st != FLEET_OK) {
		*total = 0;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(*values, json_string(ids[i]));
	return 0;
}
