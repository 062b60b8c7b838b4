/* Cases: bikaroo://cases/{caseId}, the domain's cases_read() as an MCP resource. */
#include "cases.h"

#include <stdio.h>
#include <string.h>

#define CASES_TTL_MS 10000L

#include "adapter.h"
#include "common/jsonw.h"
#include "common/mem.h"

static json_t *cases_opt(const char *s)
{
	return *s ? json_string(s) : json_null();
}

json_t *cases_json(const struct case_file *c)
{
	json_t *reports = json_array(), *events = json_array();
	for (size_t i = 0; i < c->nitems; i++) {
		const struct case_item *it = &c->items[i];
		if (it->is_event) {
			json_array_append_new(events,
					      json_pack("{s:s, s:s, s:o, s:s, s:s}", "type",
							it->kind, "at", it->at, "reportId",
							cases_opt(it->report_id), "subject",
							it->subject, "clientId", it->client_id));
		} else {
			json_array_append_new(
				reports,
				json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:s}", "reportId",
					  it->id, "issue", it->kind, "description",
					  it->description ? json_string(it->description)
							  : json_null(),
					  "statusBefore", it->status_before, "statusAfter",
					  it->status_after, "recordedAt", it->at, "reportedBy",
					  it->subject, "clientId", it->client_id));
		}
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "caseId", c->case_id,
			 "bikeId", c->bike_id, "region", c->region, "state", c->state, "openedAt",
			 c->opened_at, "openedBy", c->opened_by, "openedVia", c->opened_via,
			 "closedAt", cases_opt(c->closed_at), "reports", reports, "events", events);
}

int cases_resource_read(struct mcp_ctx *ctx, const char *case_id, json_t **contents,
			struct mcp_error *err)
{
	struct case_file c;
	char *uri = mem_printf("%s%s", CASES_URI_PREFIX, case_id ? case_id : "");
	enum fleet_status st = cases_read(ctx->req->actor, case_id, &c);
	int rc = 0;
	if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL) {
		rc = adapter_domain_error(st, err);
		goto out;
	}
	if (st != FLEET_OK) {
		/* Forbidden, unknown and out of perimeter read alike: no existence oracle. */
		rc = mcp_fail(err, ctx->modern ? MCP_INVALID_PARAMS : MCP_LEGACY_RESOURCE_NOT_FOUND,
			      "Resource not found", json_pack("{s:s}", "uri", uri));
		goto out;
	}
	json_t *body = cases_json(&c);
	char *text = jsonw_dump(body);
	json_decref(body);
	*contents = json_pack("[{s:s, s:s, s:s}]", "uri", uri, "mimeType", "application/json",
			      "text", text);
	free(text);
	cases_free(&c);
out:
	free(uri);
	return rc;
}

enum resource_status cases_read_template(struct mcp_ctx *ctx, const char *uri, const char *value,
					 json_t **result, struct mcp_error *err)
{
	(void)uri;
	json_t *contents = NULL;
	if (cases_resource_read(ctx, value, &contents, err) != 0) {
		if (err->code == MCP_INTERNAL_ERROR)
			return RESOURCE_FAILED;
		json_decref(err->data); /* the registry answers "Resource not found" itself */
		err->data = NULL;
		return RESOURCE_NOT_FOUND;
	}
	json_t *r = json_pack("{s:o}", "contents", contents);
	mcp_cacheable(r, CASES_TTL_MS, true); /* per user */
	*result = r;
	return RESOURCE_OK;
}
