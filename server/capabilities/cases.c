/* Cases: bikaroo://cases/{caseId}, an investigation case with its reports and events as the
 * caller may see it (domain/cases.h). */
#include <stdio.h>
#include <stdlib.h>

#include "adapter.h"
#include "common/jsonw.h"
#include "domain/cases.h"
#include "server/protocol/resources.h"

#define CASES_TTL_MS 10000L
#define CASES_URI_PREFIX "bikaroo://cases/"

static const struct mcp_governance cases_governance = {
	.version = "1.1.0",
	ADAPTER_GOV_STABLE,
	.risk = "low",
	.data = "internal: case history with the reporters' subjects, their names and free-text "
		"descriptions (may hold personal data)",
	ADAPTER_GOV_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "one audit row per read: subject, client, the URI template, caseId, outcome, "
		 "request id",
};

static json_t *cases_opt(const char *s)
{
	return *s ? json_string(s) : json_null();
}

static json_t *cases_json(const struct case_file *c)
{
	json_t *reports = json_array(), *events = json_array();
	for (size_t i = 0; i < c->nitems; i++) {
		const struct case_item *it = &c->items[i];
		if (it->is_event) {
			json_array_append_new(
				events,
				json_pack("{s:s, s:s, s:o, s:s, s:o, s:s, s:o}", "type", it->kind,
					  "at", it->at, "reportId", cases_opt(it->report_id),
					  "subject", it->subject, "subjectName",
					  cases_opt(it->subject_name), "clientId", it->client_id,
					  "clientName", cases_opt(it->client_name)));
		} else {
			json_array_append_new(
				reports,
				json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:o, s:s, s:o}",
					  "reportId", it->id, "issue", it->kind, "description",
					  it->description ? json_string(it->description)
							  : json_null(),
					  "statusBefore", it->status_before, "statusAfter",
					  it->status_after, "recordedAt", it->at, "reportedBy",
					  it->subject, "reportedByName",
					  cases_opt(it->subject_name), "clientId", it->client_id,
					  "clientName", cases_opt(it->client_name)));
		}
	}
	/* Beside each code or id, its name where one is registered (null where none is). */
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o}",
			 "caseId", c->case_id, "bikeId", c->bike_id, "region", c->region,
			 "regionName", cases_opt(c->region_name), "state", c->state, "openedAt",
			 c->opened_at, "openedBy", c->opened_by, "openedByName",
			 cases_opt(c->opened_by_name), "openedVia", c->opened_via, "openedViaName",
			 cases_opt(c->opened_via_name), "closedAt", cases_opt(c->closed_at),
			 "reports", reports, "events", events);
}

static enum resource_status cases_read_template(struct mcp_ctx *ctx, const char *uri,
						const char *value, json_t **result,
						struct mcp_error *err)
{
	struct adapter_call call;
	adapter_read_entry(ctx, uri, value, &call);
	struct case_file c;
	enum fleet_status st = cases_read(ctx->req->actor, value, &call.entry, &c);
	if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL) {
		adapter_domain_error(st, err);
		return RESOURCE_FAILED;
	}
	/* Forbidden, unknown and out of perimeter read alike: no existence oracle. */
	if (st != FLEET_OK)
		return RESOURCE_NOT_FOUND;
	json_t *body = cases_json(&c);
	cases_free(&c);
	char *text = jsonw_dump(body);
	json_decref(body);
	*result = resources_text_result(uri, "application/json", text, CASES_TTL_MS, true);
	free(text);
	return RESOURCE_OK;
}

static const struct resource_template_desc cases_templates[] = {{
	.uri_template = CASES_URI_PREFIX "{caseId}",
	.name = "investigation-case",
	.title = "Investigation case",
	.description = "An investigation case (caseId, e.g. IC-1001) with its damage reports and "
		       "events. Fleet operators see every case of their regions; others the cases "
		       "they opened or reported into.",
	.mime_type = "application/json",
	.prefix = CASES_URI_PREFIX,
	.var = "caseId",
	.suffix = "",
	.read = cases_read_template,
	ADAPTER_SCOPE_READ,
	.governance = &cases_governance,
	.ext = &adapter_timeline_link,
}};

const struct mcp_capability capability_cases = {
	.name = "cases",
	.templates = cases_templates,
	.ntemplates = MCP_COUNT(cases_templates),
};
