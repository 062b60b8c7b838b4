/* Tools: the descriptor table, listing, argument validation and the adapters to the domain. */
#include "tools.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/audit.h"
#include "notify.h"
#include "pager.h"
#include "reqstate.h"
#include "schema.h"
#include "server/capabilities/damage_report.h"

/* ---- get_bike_status ---------------------------------------------------------------- */

static const char get_bike_status_in[] =
	"{\"type\":\"object\","
	"\"properties\":{\"bikeId\":{\"type\":\"string\",\"pattern\":\"^VL-[0-9]{4,6}$\","
	"\"description\":\"The bike's id as printed on its frame, e.g. VL-2048.\"}},"
	"\"required\":[\"bikeId\"],\"additionalProperties\":false}";

static const char get_bike_status_out[] =
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

/* The same words for unknown and out-of-perimeter bikes: no existence oracle. */
#define TOOLS_NOT_FOUND_FMT                                                                        \
	"Bike %s was not found among the bikes you can access. Check the id on the frame (VL- "    \
	"and 4 to 6 digits)."

json_t *tools_bike_status_json(const struct fleet_bike_status *b)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:o}", "bikeId", b->bike_id, "status",
			 b->status, "statusLabel", b->status_label, "region", b->region, "station",
			 *b->station ? json_string(b->station) : json_null(), "batteryPct",
			 b->battery_pct < 0 ? json_null() : json_integer(b->battery_pct),
			 "lastSeenAt", b->last_seen_at, "openCaseId",
			 *b->open_case_id ? json_string(b->open_case_id) : json_null());
}

/* Maps a domain failure to a tool result a person (or a model) can act on. */
static json_t *tools_domain_error(enum fleet_status st, const char *bike_id)
{
	char text[320];
	switch (st) {
	case FLEET_NOT_FOUND: snprintf(text, sizeof text, TOOLS_NOT_FOUND_FMT, bike_id); break;
	case FLEET_FORBIDDEN:
		snprintf(text, sizeof text,
			 "You are not permitted to do this with this application. Ask an "
			 "administrator "
			 "for the role or client access it needs.");
		break;
	default:
		snprintf(text, sizeof text, "The request could not be completed (%s).",
			 fleet_status_name(st));
		break;
	}
	return tools_result(text, NULL, true);
}

static int tool_get_bike_status(struct mcp_ctx *ctx, json_t *args, json_t **result,
				struct mcp_error *err)
{
	const char *bike_id = json_string_value(json_object_get(args, "bikeId"));
	struct fleet_bike_status b;
	char digest[65], reqid[128];
	reqstate_digest(args, digest);
	tool_request_id(ctx, reqid, sizeof reqid);
	enum fleet_status st =
		bikes_status_audited(ctx->req->actor, bike_id, digest, reqid, &b);
	if (st == FLEET_UNAVAILABLE)
		return mcp_unavailable(ctx, err);
	if (st != FLEET_OK) {
		*result = tools_domain_error(st, bike_id);
		return 0;
	}
	json_t *sc = tools_bike_status_json(&b);
	char *text = json_dumps(sc, JSON_COMPACT);
	*result = tools_result(text, sc, false);
	free(text);
	return 0;
}

/* ---- the registry ------------------------------------------------------------------- */

static const struct tool_desc tools_registry[] = {
	{
		.name = "get_bike_status",
		.title = "Bike status",
		.description = "Current status of one bike: status code and label, region and "
			       "station, battery "
			       "level, when it was last seen, and its open investigation case if "
			       "any. Only bikes "
			       "in your regions are visible; others read as not found.",
		.input_schema = get_bike_status_in,
		.output_schema = get_bike_status_out,
		.read_only = true,
		.destructive = false,
		.idempotent = true,
		.scope = FLEET_SCOPE_READ,
		.scope_name = "fleet:read",
		.fn = tool_get_bike_status,
		.self_audit = true, /* the read writes its audit row in the same round trip */
	},
	{
		.name = "report_damaged_bike",
		.title = "Report a damaged bike",
		.description = tool_report_description,
		.input_schema = tool_report_in,
		.output_schema = tool_report_out,
		.read_only = false,
		.destructive = false,
		.idempotent =
			false, /* only calls with an idempotencyKey are: see the description */
		.scope = FLEET_SCOPE_REPORT,
		.scope_name = "fleet:report",
		.fn = tool_report_damaged_bike,
		.self_audit = true,
	},
};

#define TOOLS_COUNT (sizeof tools_registry / sizeof tools_registry[0])

/* Rows appended by tools_set_extra() (the test-only conformance server's fixtures). */
static const struct tool_desc *tools_extra;
static size_t tools_nextra;

/* Parsed schemas of every row, registry first (tools_out[i] is NULL without outputSchema). */
static json_t **tools_in;
static json_t **tools_out;

void tools_set_extra(const struct tool_desc *extra, size_t n)
{
	tools_extra = extra;
	tools_nextra = n;
}

static size_t tools_count(void)
{
	return TOOLS_COUNT + tools_nextra;
}

static const struct tool_desc *tools_at(size_t i)
{
	return i < TOOLS_COUNT ? &tools_registry[i] : &tools_extra[i - TOOLS_COUNT];
}

int tools_init(void)
{
	tools_in = mem_calloc(tools_count(), sizeof *tools_in);
	tools_out = mem_calloc(tools_count(), sizeof *tools_out);
	for (size_t i = 0; i < tools_count(); i++) {
		const struct tool_desc *t = tools_at(i);
		json_error_t e;
		tools_in[i] = json_loads(t->input_schema, JSON_REJECT_DUPLICATES, &e);
		tools_out[i] = t->output_schema
				       ? json_loads(t->output_schema, JSON_REJECT_DUPLICATES, &e)
				       : NULL;
		if (!tools_in[i] || (t->output_schema && !tools_out[i]) ||
		    schema_prepare(tools_in[i]) != 0) {
			log_error("tool %s: invalid schema", t->name);
			return -1;
		}
	}
	return 0;
}

void tools_cleanup(void)
{
	for (size_t i = 0; tools_in && i < tools_count(); i++) {
		json_decref(tools_in[i]);
		json_decref(tools_out[i]);
	}
	schema_cleanup(); /* the compiled patterns borrow strings of the schemas freed above */
	free(tools_in);
	free(tools_out);
	tools_in = tools_out = NULL;
}

const struct tool_desc *tools_table(size_t *count)
{
	*count = TOOLS_COUNT;
	return tools_registry;
}

const json_t *tools_input_schema(size_t i)
{
	return i < tools_count() ? tools_in[i] : NULL;
}

const json_t *tools_output_schema(size_t i)
{
	return i < tools_count() ? tools_out[i] : NULL;
}

json_t *tools_result(const char *text, json_t *structured, bool is_error)
{
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text,
			      "isError", is_error);
	if (structured)
		json_object_set_new(r, "structuredContent", structured);
	return r;
}

/* A tool as the negotiated revision knows it (title and outputSchema from 2025-06-18 on). */
static json_t *tools_describe(const struct mcp_ctx *ctx, size_t i)
{
	const struct tool_desc *t = tools_at(i);
	json_t *tool = json_pack("{s:s, s:s, s:O}", "name", t->name, "description", t->description,
				 "inputSchema", tools_in[i]);
	json_t *ann = json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title, "readOnlyHint",
				t->read_only, "destructiveHint", t->destructive, "idempotentHint",
				t->idempotent, "openWorldHint", 0);
	json_object_set_new(tool, "annotations", ann);
	if (mcp_version_at_least(ctx, "2025-06-18")) {
		json_object_set_new(tool, "title", json_string(t->title));
		if (tools_out[i])
			json_object_set(tool, "outputSchema", tools_out[i]);
	}
	return tool;
}

int tools_caller_scopes(struct mcp_ctx *ctx, unsigned *may, struct mcp_error *err)
{
	/* For a token's principal: scopes ∩ role ∩ client application as PostgreSQL states them;
	 * for the operator's configured local identity, its scopes (calls still apply role,
	 * client and perimeter in the domain). */
	*may = ctx->req->actor->scopes;
	enum fleet_status st =
		ctx->req->per_principal ? rights_effective_scopes(ctx->req->actor, may) : FLEET_OK;
	return st == FLEET_OK ? 0 : mcp_domain_error(ctx, st, err);
}

int tools_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	unsigned may = 0;
	if (tools_caller_scopes(ctx, &may, err) != 0)
		return -1;
	json_t *all = json_array();
	for (size_t i = 0; i < tools_count(); i++)
		if (!tools_at(i)->scope || (tools_at(i)->scope & may))
			json_array_append_new(all, tools_describe(ctx, i));
	/* With tokens the list depends on the caller: private. */
	return pager_page(ctx, params, all, "tools", 3600000, ctx->req->per_principal, result, err);
}

/* Leaves the audit row of one tools/call (who, which tool and target, a digest of the
 * arguments, the outcome, the request id); never the arguments themselves, never a token. */
static bool tools_auditing;

void tools_set_audit(bool on)
{
	tools_auditing = on;
}

/* Tells the client how its call ended (notifications/message, logger "bikaroo.tools"; sent
 * only when the request's log level admits it, notify.h): the facts of its audit row, never
 * the arguments; bikeId and detail only when there are some. Anything but a result or a
 * question is a warning. */
static void tools_log(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		      const char *detail)
{
	bool fine = strcmp(outcome, "ok") == 0 || strcmp(outcome, "input_required") == 0;
	enum notify_level level = fine ? NOTIFY_INFO : NOTIFY_WARNING;
	if (!notify_wants(ctx, level))
		return; /* the common case: nothing asked, nothing built */
	json_t *bike = json_object_get(args, "bikeId");
	json_t *data = json_pack("{s:s, s:s, s:O*, s:s, s:s*}", "event", "tools/call", "tool", tool,
				 "bikeId", json_is_string(bike) ? bike : NULL, "outcome", outcome,
				 "detail", detail);
	notify_log(ctx, level, "bikaroo.tools", data);
	json_decref(data);
}

static void tools_audit(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
			const char *detail)
{
	tools_log(ctx, tool, args, outcome, detail);
	if (!tools_auditing)
		return;
	char digest[65], reqid[128];
	json_t *target = json_object_get(args, "bikeId");
	reqstate_digest(args ? args : json_null(), digest);
	tool_request_id(ctx, reqid, sizeof reqid);
	struct audit_entry e = {.tool = tool,
				.target = json_string_value(target),
				.args_digest = digest,
				.outcome = outcome,
				.detail = detail,
				.request_id = reqid};
	if (audit_record(ctx->req->actor, &e) != FLEET_OK)
		log_msg(LOG_WARN, ctx->req->reqid, "audit row missing for %s", tool);
}

int tools_call(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	if (!name) {
		tools_audit(ctx, "(none)", args, "invalid", "no tool name");
		return mcp_fail(err, MCP_INVALID_PARAMS, "tools/call needs a string 'name'", NULL);
	}
	size_t i;
	for (i = 0; i < tools_count(); i++)
		if (strcmp(tools_at(i)->name, name) == 0)
			break;
	if (i == tools_count()) {
		tools_audit(ctx, name, args, "invalid", "unknown tool");
		return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown tool",
				json_pack("{s:s}", "name", name));
	}
	const struct tool_desc *t = tools_at(i);
	if (args && !json_is_object(args)) {
		tools_audit(ctx, name, args, "invalid", "arguments is not an object");
		return mcp_fail(err, MCP_INVALID_PARAMS, "tools/call 'arguments' must be an object",
				NULL);
	}
	if (t->scope && !(ctx->req->actor->scopes & t->scope)) {
		/* A new token with the scope can cure this: the transport answers 403
		 * insufficient_scope (HTTP) or an error naming the scope. */
		tools_audit(ctx, name, args, "denied", t->scope_name);
		ctx->missing_scope = t->scope_name;
		return mcp_fail(err, MCP_INVALID_PARAMS, "Insufficient scope",
				json_pack("{s:s}", "requiredScope", t->scope_name));
	}
	json_t *empty = NULL;
	if (!args)
		args = empty = json_object();
	char msg[320];
	int rc = 0;
	if (!schema_validate(tools_in[i], args, msg, sizeof msg)) {
		tools_audit(ctx, name, args, "invalid", msg);
		*result = tools_result(msg, NULL, true);
	} else {
		rc = t->fn(ctx, args, result, err);
		const char *outcome = rc != 0                                             ? "error"
				      : json_is_true(json_object_get(*result, "isError")) ? "failed"
				      : json_object_get(*result, "inputRequests") ? "input_required"
										  : "ok";
		if (t->self_audit) /* its rows are written where the outcome is decided */
			tools_log(ctx, name, args, outcome, NULL);
		else
			tools_audit(ctx, name, args, outcome, NULL);
	}
	/* structuredContent exists from 2025-06-18 on; older clients read the text block. */
	if (rc == 0 && !mcp_version_at_least(ctx, "2025-06-18"))
		json_object_del(*result, "structuredContent");
	json_decref(empty);
	return rc;
}
