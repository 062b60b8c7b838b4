/* report_damaged_bike: arguments to the domain, the domain's answer to a CallToolResult, and the
 * confirmation round trip (MCP 2026-07-28 section 8) for clients that cannot be trusted to ask
 * the user themselves. Nothing is remembered between the two round trips but what the sealed
 * requestState carries; an accepted state is used as an implicit idempotency key, so replaying
 * it returns the first result and writes nothing. */
#include <stdio.h>
#include <string.h>

#include "adapter.h"
#include "common/log.h"
#include "common/mem.h"
#include "domain/audit.h"
#include "domain/damage_reports.h"
#include "gen/schemas.h"
#include "server/protocol/reqstate.h"
#include "server/protocol/tools.h"

#define TOOL_CONFIRM_KEY "confirm" /* our key in inputRequests / inputResponses */

static const struct mcp_governance damage_report_governance = {
	.version = "1.1.0",
	ADAPTER_GOV_STABLE,
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

/* One call being handled: its arguments and what the audit rows need. */
struct tool_call {
	struct mcp_ctx *ctx;
	json_t *args; /* borrowed */
	struct adapter_call audit;
	const char *bike_id;
};

static void tool_audit(const struct tool_call *c, const char *outcome, const char *detail)
{
	struct audit_entry e = c->audit.entry;
	e.outcome = outcome;
	e.detail = detail;
	if (audit_record(c->ctx->req->actor, &e) != FLEET_OK)
		log_msg(LOG_WARN, c->ctx->req->reqid, "audit row missing for %s", outcome);
}

static json_t *tool_error(const char *text)
{
	return tools_result(text, NULL, true);
}

/* Why a report was refused, in the words of its first failing condition (domain/damage_reports.h).
 */
static const char *tool_forbidden_reason(const struct report_result *r, char *buf, size_t cap)
{
	switch (r->problem) {
	case REPORT_PROBLEM_NO_SCOPE: return "your access token lacks the fleet:report scope";
	case REPORT_PROBLEM_MACHINE: return "a machine client never reports, only a person does";
	case REPORT_PROBLEM_NOT_KNOWN:
		return "you or this application are not registered, or no longer active";
	case REPORT_PROBLEM_ROLE:
		snprintf(buf, cap,
			 "your role is %s, and reporting needs customer_care or "
			 "fleet_operator",
			 r->role);
		return buf;
	case REPORT_PROBLEM_NOT_HUMAN:
		return "you are registered as a machine, and only a person acting in person "
		       "reports";
	default: return "this application is not allowed to report";
	}
}

/* The words for a refused report; unknown and out-of-perimeter bikes (and cases) read alike. */
static json_t *tool_report_error(enum fleet_status st, const struct report_result *r,
				 const char *bike_id, const char *case_id)
{
	char text[512], why[160];
	switch (st) {
	case FLEET_NOT_FOUND:
		snprintf(
			text, sizeof text,
			"Bike %s was not found among the bikes you can access. Check the id on the "
			"frame (VL- and 4 to 6 digits). Nothing was reported.",
			bike_id);
		break;
	case FLEET_FORBIDDEN: /* the condition that failed, nothing else */
		snprintf(text, sizeof text,
			 "You are not permitted to report damage: %s. Nothing was "
			 "reported.",
			 tool_forbidden_reason(r, why, sizeof why));
		break;
	case FLEET_INVALID:
		if (r->problem == REPORT_PROBLEM_CASE_CLOSED)
			snprintf(text, sizeof text,
				 "Case %s is closed. Report again without caseId to open a new "
				 "case for bike %s. Nothing was reported.",
				 case_id, bike_id);
		else if (r->problem == REPORT_PROBLEM_CASE_OTHER_BIKE)
			snprintf(text, sizeof text,
				 "Case %s is about another bike, not %s. Report again without "
				 "caseId (the report joins this bike's open case). Nothing was "
				 "reported.",
				 case_id, bike_id);
		else if (r->problem == REPORT_PROBLEM_CASE_NOT_FOUND)
			snprintf(
				text, sizeof text,
				"Case %s was not found among the open cases you can access. Report "
				"again without caseId (the report joins this bike's open case). "
				"Nothing was reported.",
				case_id);
		else
			snprintf(text, sizeof text,
				 "The arguments are not valid: check issue, the description (at "
				 "most 2000 characters) and idempotencyKey (1 to 200 characters). "
				 "Nothing was reported.");
		break;
	case FLEET_CONFLICT:
		if (r->problem == REPORT_PROBLEM_KEY_REUSED)
			snprintf(text, sizeof text,
				 "This idempotencyKey was already used with other arguments. Use a "
				 "new key for a new report, or repeat the first call unchanged to "
				 "get its result. Nothing was reported.");
		else
			snprintf(
				text, sizeof text,
				"Another change to this bike happened at the same time. Try again. "
				"Nothing was reported.");
		break;
	default:
		snprintf(text, sizeof text,
			 "The report could not be completed (%s). With an idempotencyKey a retry "
			 "is safe.",
			 fleet_status_name(st));
		break;
	}
	return tool_error(text);
}

/* True when the request declared form-mode elicitation (an empty object means form). */
static bool tool_can_elicit(const struct mcp_ctx *ctx)
{
	json_t *el = json_object_get(ctx->client_caps, "elicitation");
	return ctx->modern && json_is_object(el) &&
	       (json_object_size(el) == 0 || json_object_get(el, "form"));
}

/* The digest a requestState is bound to: the tool name and its exact arguments. */
static void tool_call_digest(const struct tool_call *c, char out[65])
{
	json_t *call = json_pack("{s:s, s:O}", "name", c->ctx->tool->name, "arguments", c->args);
	reqstate_digest(call, out);
	json_decref(call);
}

/* input_required with one form elicitation showing the tool, the bike, the effect and the
 * identity, and a requestState sealed for exactly this caller and call. */
static json_t *tool_ask_confirmation(const struct tool_call *c, const struct report_request *req,
				     const struct report_result *r)
{
	const struct fleet_actor *actor = c->ctx->req->actor;
	char call_digest[65];
	/* The database decided the would-be status (report_result.status): compare, never
	 * re-derive its rule. */
	bool stays = strcmp(r->status, r->status_before) == 0;
	char *message = mem_printf(
		"Confirm %s: report \"%s\" on bike %s (region %s, currently %s). Effect: a damage "
		"report is filed, %s %s, and %s%s. You act as %s through %s.",
		c->ctx->tool->name, req->issue, r->bike_id, r->region, r->status_before,
		stays ? "the bike stays" : "the bike becomes", r->status,
		*r->open_case_id ? "the report is added to open investigation case "
				 : "a new investigation case is opened",
		r->open_case_id, actor->subject, actor->client_id);
	tool_call_digest(c, call_digest);
	json_t *payload = json_pack("{s:s, s:s}", "tool", c->ctx->tool->name, "bike", r->bike_id);
	char *state = reqstate_seal(actor, "tools/call", call_digest, payload,
				    adapter_settings(c->ctx)->confirm_ttl_s, NULL);
	json_decref(payload);
	json_t *schema = json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}", "type", "object",
				   "properties", TOOL_CONFIRM_KEY, "type", "boolean", "title",
				   "Report this damage now", "description",
				   "Check the bike id and the effect above before you confirm.",
				   "default", 0, "required", TOOL_CONFIRM_KEY);
	json_t *result = json_pack("{s:s, s:{s:{s:s, s:{s:s, s:s, s:o}}}, s:s}", "resultType",
				   "input_required", "inputRequests", TOOL_CONFIRM_KEY, "method",
				   "elicitation/create", "params", "mode", "form", "message",
				   message, "requestedSchema", schema, "requestState", state);
	free(state);
	free(message);
	return result;
}

/* The outcome of the user's answer to our elicitation. */
enum tool_answer { TOOL_ANSWER_NONE, TOOL_ANSWER_ACCEPT, TOOL_ANSWER_REFUSE, TOOL_ANSWER_BAD };

static enum tool_answer tool_read_answer(json_t *responses)
{
	json_t *ans = json_object_get(responses, TOOL_CONFIRM_KEY);
	if (!ans)
		return TOOL_ANSWER_NONE;
	const char *action = json_string_value(json_object_get(ans, "action"));
	if (!json_is_object(ans) || !action)
		return TOOL_ANSWER_BAD;
	if (strcmp(action, "decline") == 0 || strcmp(action, "cancel") == 0)
		return TOOL_ANSWER_REFUSE;
	if (strcmp(action, "accept") != 0)
		return TOOL_ANSWER_BAD;
	json_t *content = json_object_get(ans, "content");
	if (content && !json_is_object(content))
		return TOOL_ANSWER_BAD;
	/* Accepting the form with the box left unticked is not a confirmation. */
	return json_is_true(json_object_get(content, TOOL_CONFIRM_KEY)) ? TOOL_ANSWER_ACCEPT
									: TOOL_ANSWER_REFUSE;
}

/* Handles requestState / inputResponses of a retry. Returns 1 to go on (with *confirmed and
 * implicit_key set), 0 when *result is final, -1 with err filled. */
static int tool_confirmation_retry(struct tool_call *c, json_t **result, struct mcp_error *err,
				   bool *confirmed, char implicit_key[REQSTATE_NONCE_HEX + 16])
{
	json_t *params = c->ctx->params;
	json_t *state = json_object_get(params, "requestState");
	json_t *responses = json_object_get(params, "inputResponses");
	if (!state && !responses)
		return 1;
	if (!json_is_string(state) || (responses && !json_is_object(responses))) {
		tool_audit(c, "rejected", "malformed requestState or inputResponses");
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"inputResponses must be an object and come with the requestState "
				"they answer",
				NULL);
	}
	char call_digest[65], nonce[REQSTATE_NONCE_HEX + 1];
	tool_call_digest(c, call_digest);
	json_t *payload = NULL;
	enum reqstate_status rs = reqstate_open(json_string_value(state), c->ctx->req->actor,
						"tools/call", call_digest, &payload, nonce);
	json_decref(payload);
	if (rs != REQSTATE_OK) {
		tool_audit(c, "rejected", reqstate_status_text(rs));
		return mcp_fail(err, MCP_INVALID_PARAMS, reqstate_status_text(rs), NULL);
	}
	switch (tool_read_answer(responses)) {
	case TOOL_ANSWER_NONE: return 1; /* ask again */
	case TOOL_ANSWER_BAD:
		tool_audit(c, "rejected", "malformed inputResponses.confirm");
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"inputResponses.confirm must be an elicitation result "
				"{action: accept|decline|cancel, content?}",
				NULL);
	case TOOL_ANSWER_REFUSE:
		tool_audit(c, "declined", NULL);
		*result = tool_error("Nothing was reported: the confirmation was declined or "
				     "cancelled. Ask the user before trying again.");
		return 0;
	case TOOL_ANSWER_ACCEPT: break;
	}
	*confirmed = true;
	snprintf(implicit_key, REQSTATE_NONCE_HEX + 16, "confirmation/%s", nonce);
	return 1;
}

static int damage_report_call(struct mcp_ctx *ctx, json_t *args, json_t **result,
			      struct mcp_error *err)
{
	struct tool_call c = {.ctx = ctx, .args = args};
	c.bike_id = json_string_value(json_object_get(args, "bikeId"));
	adapter_call_entry(ctx, args, &c.audit);
	struct report_request req = {
		.tool = ctx->tool->name,
		.bike_id = c.bike_id,
		.issue = json_string_value(json_object_get(args, "issue")),
		.description = json_string_value(json_object_get(args, "description")),
		.case_id = json_string_value(json_object_get(args, "caseId")),
		.idempotency_key = json_string_value(json_object_get(args, "idempotencyKey")),
		.args_digest = c.audit.digest,
		.request_id = c.audit.reqid,
	};
	char implicit_key[REQSTATE_NONCE_HEX + 16];
	int go = tool_confirmation_retry(&c, result, err, &req.confirmed, implicit_key);
	if (go <= 0)
		return go;
	if (req.confirmed && !req.idempotency_key)
		req.idempotency_key = implicit_key; /* the accepted state writes at most once */
	struct report_result r;
	enum fleet_status st = report_damage(ctx->req->actor, &req, &r);
	if (st == FLEET_OK && r.needs_confirmation) {
		if (!ctx->modern) {
			*result = tool_error(
				"This application must have the user confirm every report on the "
				"server's side, which needs an MCP 2026-07-28 client with form "
				"elicitation. Nothing was reported.");
			return 0;
		}
		if (!tool_can_elicit(ctx))
			return mcp_fail(
				err, MCP_MISSING_CAPABILITY,
				"Missing required client capability: this application must "
				"confirm reports through elicitation",
				json_pack("{s:{s:{}}}", "requiredCapabilities", "elicitation"));
		*result = tool_ask_confirmation(&c, &req, &r);
		return 0;
	}
	if (st != FLEET_OK) {
		/* Outcomes the database decided carry their audit row already; these did not. */
		if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL)
			tool_audit(&c, "error", fleet_status_name(st));
		else if (st == FLEET_FORBIDDEN && !(ctx->req->actor->scopes & FLEET_SCOPE_REPORT))
			tool_audit(&c, "denied", "scope fleet:report missing");
		else if (st == FLEET_FORBIDDEN && ctx->req->actor->machine)
			tool_audit(&c, "denied", "a machine client never reports");
		else if (st == FLEET_CONFLICT && r.problem != REPORT_PROBLEM_KEY_REUSED)
			tool_audit(&c, "conflict", "unique violation");
		else if (st == FLEET_INVALID && r.problem == REPORT_PROBLEM_NONE)
			tool_audit(&c, "invalid", "refused before the database");
		if (st == FLEET_UNAVAILABLE) {
			adapter_unavailable(err);
			err->message =
				"The fleet database is unavailable right now, and the report "
				"may not have been filed. Try again in a minute; with the "
				"same idempotencyKey the retry cannot file it twice.";
			return -1;
		}
		if (st == FLEET_FORBIDDEN)
			ctx->outcome =
				"denied"; /* a refusal, not a failure (access line, metrics) */
		*result = tool_report_error(st, &r, req.bike_id, req.case_id ? req.case_id : "");
		return 0;
	}
	*result = adapter_structured(json_pack("{s:s, s:s, s:s, s:s, s:s}", "bikeId", r.bike_id,
					       "status", r.status, "reportId", r.report_id,
					       "caseId", r.case_id, "recordedAt", r.recorded_at));
	return 0;
}

static const struct tool_desc damage_report_tools[] = {{
	.name = "report_damaged_bike",
	.title = "Report a damaged bike",
	.description = "Report a damaged bike. In one transaction this files a damage report "
		       "(reportId, e.g. "
		       "DR-287180438001), makes the bike unavailable unless it is already out "
		       "of service (in_repair, "
		       "lost, "
		       "retired), and opens an investigation case for the bike or adds the report "
		       "to its open "
		       "case "
		       "(caseId). This changes state: call it once per real report. Only calls "
		       "that carry an "
		       "idempotencyKey are idempotent: repeating a call with the same key returns "
		       "the first "
		       "result "
		       "and writes nothing; without a key every call files a new report. Pass "
		       "caseId only to name "
		       "the bike's open case you already know (a fleet operator may name any open "
		       "case of their "
		       "regions; others a case they opened or reported into).",
	.input_schema = schema_report_damaged_bike_input,
	.output_schema = schema_report_damaged_bike_output,
	.read_only = false,
	.destructive = false,
	.idempotent = false, /* only calls with an idempotencyKey are: see the description */
	.scope = FLEET_SCOPE_REPORT,
	.scope_name = "fleet:report",
	.fn = damage_report_call,
	.audit = {.target = "bikeId", .self = true},
	.example = "{\"bikeId\":\"VL-2048\",\"issue\":\"flat_tire\"}",
	.governance = &damage_report_governance,
	.ext = &adapter_card_link,
}};

const struct mcp_capability capability_damage_report = {
	.name = "damage_report",
	.tools = damage_report_tools,
	.ntools = MCP_COUNT(damage_report_tools),
};
