/* The catalogue of what Bikaroo serves: one row per tool, resource, template and prompt, with
 * its governance (version, owner, domain, risk, data, roles, systems, confirmation, audit,
 * lifecycle), the way curl keeps its protocol handler table outside the transfer engine. Adding
 * a capability: a file in capabilities/ for its behaviour, a domain function, its row here,
 * its row in docs/capabilities.md's table, and its contract snapshot (tests/contracts). */
#include "catalog.h"

#include <stdlib.h>
#include <string.h>

#include "bike_status.h"
#include "cases.h"
#include "change_feed.h"
#include "common/jsonw.h"
#include "damage_report.h"
#include "domain/bikes.h"
#include "server/protocol/resources.h"
#include "status_codes.h"
#include "ui_views.h"

#define CATALOG_OWNER "fleet-operations-platform"
#define CATALOG_DOMAIN "fleet"
#define CATALOG_DOC_TTL_MS 3600000L

static const char catalog_instructions[] =
	"Bikaroo fleet operations. Use get_bike_status to look up one bike by its id (VL- and 4 to "
	"6 digits). You only see bikes in the caller's regions; a bike outside them reads as not "
	"found, exactly like an unknown bike. For a damage report, follow the prompt "
	"investigate-damaged-bike and the resource bikaroo://procedures/damaged-bike; "
	"bikaroo://fleet/status-codes explains every status code. Use report_damaged_bike once "
	"per real damage report (it makes the bike unavailable and opens or extends its "
	"investigation case); send an idempotencyKey so that a retry cannot file the report twice.";

/* ---- governance ------------------------------------------------------------------------- */

#define CATALOG_READERS "viewer,customer_care,fleet_operator"
#define CATALOG_STABLE .owner = CATALOG_OWNER, .domain = CATALOG_DOMAIN, .lifecycle = "stable"
#define CATALOG_READ_ONLY .roles = CATALOG_READERS, .confirmation = "none (read-only)"

static const struct mcp_governance gov_bike_status = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "low",
	.data = "internal: fleet operations data of the caller's regions, no personal data",
	CATALOG_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "one audit row per call: subject, client, tool, bikeId, argument digest, "
		 "outcome, request id",
};

static const struct mcp_governance gov_damage_report = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "high",
	.data = "internal: fleet operations data; the free-text description may hold personal "
		"data a rider gave",
	.roles = "customer_care,fleet_operator",
	.systems = "postgresql:fleet",
	.confirmation = "the host confirms with the user; client applications registered with "
			"requires_confirmation confirm on the server's side (elicitation)",
	.audit = "one audit row per call, in the report's own transaction: subject, client, tool, "
		 "bikeId, argument digest, outcome, request id",
};

static const struct mcp_governance gov_status_codes = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "none",
	.data = "public reference data",
	CATALOG_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "none (reference data)",
};

static const struct mcp_governance gov_procedure = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "none",
	.data = "internal: staff procedure",
	CATALOG_READ_ONLY,
	.systems = "none (a document shipped with the server)",
	.audit = "none",
};

static const struct mcp_governance gov_bike = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "low",
	.data = "internal: fleet operations data of the caller's regions, no personal data",
	CATALOG_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "none (resource reads are not audited; the tool's calls are)",
};

static const struct mcp_governance gov_case = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "low",
	.data = "internal: case history with the reporters' subjects and free-text descriptions "
		"(may hold personal data)",
	CATALOG_READ_ONLY,
	.systems = "postgresql:fleet",
	.audit = "none (resource reads are not audited)",
};

static const struct mcp_governance gov_catalog = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "none",
	.data = "public: descriptions of this server's capabilities",
	CATALOG_READ_ONLY,
	.systems = "none",
	.audit = "none",
};

static const struct mcp_governance gov_investigate = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "low",
	.data = "internal: staff procedure; the symptom argument is inserted as literal text",
	.roles = CATALOG_READERS,
	.systems = "none (a template shipped with the server)",
	.confirmation = "none (it only guides; report_damaged_bike has its own)",
	.audit = "none (the tool calls it leads to are audited)",
};

static const struct mcp_governance gov_ui_view = {
	.version = "1.0.0",
	CATALOG_STABLE,
	.risk = "none",
	.data = "none of its own: it shows what the tool result it is given carries",
	CATALOG_READ_ONLY,
	.systems = "none (a document shipped with the server)",
	.audit = "none (the tool calls it makes through the host are audited)",
};

/* ---- the tables ------------------------------------------------------------------------- */

static const struct tool_desc catalog_tools[] = {
	{
		.name = "get_bike_status",
		.title = "Bike status",
		.description = bike_status_description,
		.input_schema = bike_status_in,
		.output_schema = bike_status_out,
		.read_only = true,
		.destructive = false,
		.idempotent = true,
		.scope = FLEET_SCOPE_READ,
		.scope_name = "fleet:read",
		.fn = bike_status_call,
		.self_audit = true, /* the read writes its audit row (bikes_status_audited) */
		.governance = &gov_bike_status,
		.ext = &ui_views_card_link,
	},
	{
		.name = "report_damaged_bike",
		.title = "Report a damaged bike",
		.description = damage_report_description,
		.input_schema = damage_report_in,
		.output_schema = damage_report_out,
		.read_only = false,
		.destructive = false,
		.idempotent =
			false, /* only calls with an idempotencyKey are: see the description */
		.scope = FLEET_SCOPE_REPORT,
		.scope_name = "fleet:report",
		.fn = damage_report_call,
		.self_audit = true,
		.governance = &gov_damage_report,
		.ext = &ui_views_card_link,
	},
};

static const struct resource_desc catalog_resources[] = {
	{
		.uri = "bikaroo://fleet/status-codes",
		.name = "status-codes",
		.title = "Bike status codes",
		.description =
			"Every bike status code with its label, its meaning and whether a bike "
			"in that status can be rented (JSON).",
		.mime_type = "application/json",
		.read = status_codes_resource,
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_status_codes,
	},
	{
		.uri = "bikaroo://procedures/damaged-bike",
		.name = "damaged-bike-procedure",
		.title = "Procedure: damaged bike",
		.description = "What staff do when a bike is reported damaged: safety first, check "
			       "the bike, report it, follow the case (Markdown).",
		.mime_type = "text/markdown",
		.file = "damaged-bike.md",
		.ttl_ms = CATALOG_DOC_TTL_MS,
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_procedure,
	},
	{
		.uri = CATALOG_URI,
		.name = "capability-catalog",
		.title = "Capability catalogue",
		.description = "The capabilities you may use on this server, each with its "
			       "governance (owner, risk, data handled, roles, confirmation, audit, "
			       "lifecycle) and its contract version (JSON).",
		.mime_type = "application/json",
		.read = catalog_read,
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_catalog,
	},
	{
		.uri = UI_VIEWS_CARD_URI,
		.name = "bike-card",
		.title = "Bike card",
		.description =
			"A view of one bike (status, region, station, battery, last seen, open "
			"case) with a form to report damage, for hosts that render MCP Apps.",
		.mime_type = UI_VIEWS_MIME_TYPE,
		.file = UI_VIEWS_CARD_FILE,
		.ttl_ms = CATALOG_DOC_TTL_MS,
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_ui_view,
		.ext = &ui_views_document,
	},
	{
		.uri = UI_VIEWS_TIMELINE_URI,
		.name = "case-timeline",
		.title = "Case timeline",
		.description = "A view of one investigation case: its damage reports and events in "
			       "time order, for hosts that render MCP Apps.",
		.mime_type = UI_VIEWS_MIME_TYPE,
		.file = UI_VIEWS_TIMELINE_FILE,
		.ttl_ms = CATALOG_DOC_TTL_MS,
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_ui_view,
		.ext = &ui_views_document,
	},
};

static const struct resource_template_desc catalog_templates[] = {
	{
		.uri_template = "bikaroo://fleet/bikes/{bikeId}",
		.name = "bike",
		.title = "Bike status",
		.description =
			"The current status of one bike in your regions (the same data as the "
			"get_bike_status tool), as JSON.",
		.mime_type = "application/json",
		.prefix = "bikaroo://fleet/bikes/",
		.var = "bikeId",
		.suffix = "",
		.read = bike_status_read,
		.complete = bike_status_complete,
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_bike,
	},
	{
		.uri_template = CASES_URI_PREFIX "{caseId}",
		.name = "investigation-case",
		.title = "Investigation case",
		.description =
			"An investigation case (caseId, e.g. IC-1001) with its damage reports "
			"and events. Fleet operators see every case of their regions; others "
			"the cases they opened or reported into.",
		.mime_type = "application/json",
		.prefix = CASES_URI_PREFIX,
		.var = "caseId",
		.suffix = "",
		.read = cases_read_template,
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_case,
		.ext = &ui_views_timeline_link,
	},
};

static const struct prompt_desc catalog_prompts[] = {
	{
		.name = "investigate-damaged-bike",
		.title = "Investigate a damaged bike",
		.description =
			"Guides you through the damaged-bike procedure for one bike: check its "
			"status, make it safe, report the damage and follow the case.",
		.file = "investigate-damaged-bike.md",
		.nargs = 2,
		.args =
			{
				{
					.name = "bikeId",
					.title = "Bike id",
					.description =
						"The bike's id as printed on its frame, e.g. "
						"VL-2048.",
					.required = true,
					.max_len = 16,
					.valid = bikes_id_valid,
					.invalid_message =
						"Invalid argument bikeId: expected VL- "
						"followed by 4 to 6 digits, e.g. VL-2048",
					.complete = bike_status_complete,
				},
				{
					.name = "symptom",
					.title = "Symptom",
					.description =
						"What the rider or agent observed, in their own "
						"words (optional, at most 1000 characters).",
					.required = false,
					.max_len = 1000,
				},
			},
		.scope = FLEET_SCOPE_READ,
		.governance = &gov_investigate,
	},
};

#define CATALOG_N(t) (sizeof t / sizeof t[0])

void catalog_describe(struct mcp_server *out, const struct adapter_settings *set)
{
	*out = (struct mcp_server){
		.name = "bikaroo-fleet-mcp",
		.title = "Bikaroo Fleet",
		.version = "0.2.0",
		.instructions = catalog_instructions,
		.tools = catalog_tools,
		.ntools = CATALOG_N(catalog_tools),
		.resources = catalog_resources,
		.nresources = CATALOG_N(catalog_resources),
		.templates = catalog_templates,
		.ntemplates = CATALOG_N(catalog_templates),
		.prompts = catalog_prompts,
		.nprompts = CATALOG_N(catalog_prompts),
		.target_arg = "bikeId",
		.tools_logger = "bikaroo.tools",
		.governance_key = CATALOG_GOVERNANCE_KEY,
		.extensions = ui_views_extensions,
		.caller_scopes = adapter_caller_scopes,
		.audit = adapter_audit,
		.changes = &change_feed,
		.app = set,
	};
}

/* ---- bikaroo://catalog ------------------------------------------------------------------ */

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

enum resource_status catalog_read(struct mcp_ctx *ctx, const char *uri, const char *value,
				  json_t **result, struct mcp_error *err)
{
	(void)value;
	unsigned may = 0;
	if (mcp_caller_scopes(ctx, &may, err) != 0)
		return RESOURCE_FAILED;
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
