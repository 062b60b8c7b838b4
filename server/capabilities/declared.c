/* The generic handlers of declared reads and writes (declared.h): a call's key from its
 * arguments (or the template's variable), the read or write run as the caller, the rows shown
 * as the declaration's JSON, refusals in the declaration's words; for a write, the
 * confirmation its function asks for (MCP 2026-07-28 section 8: input_required with a form
 * elicitation, nothing remembered between the round trips but what the sealed requestState
 * carries; an accepted state is the call's idempotency key when it has none, so that replaying
 * it writes at most once). */
#include "declared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/mem.h"
#include "server/protocol/pager.h"
#include "server/protocol/reqstate.h"
#include "server/protocol/resources.h"
#include "server/protocol/tasks.h"
#include "server/protocol/tools.h"

/* Most rows one read answers with (a list's; an object's are its first). */
#define DECLARED_MAX_ROWS 10000
#define DECLARED_CONFIRM_KEY "confirm" /* our key in inputRequests / inputResponses */

/* ---- rows as JSON ------------------------------------------------------------------------- */

static json_t *declared_value(const struct declared_field *f, const char *v)
{
	if (!v)
		return json_null();
	switch (f->json) {
	case DECLARED_INTEGER: return json_integer(strtoll(v, NULL, 10));
	case DECLARED_BOOLEAN: return json_boolean(strcmp(v, "t") == 0);
	case DECLARED_JSON: {
		json_t *j = json_loads(v, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
		return j ? j : json_null();
	}
	case DECLARED_STRING: break;
	}
	return json_string(v);
}

/* One row (n column texts) as the object of its shown columns, in declared order. */
static json_t *declared_object(const struct declared_field *fields, size_t n, char *const *row)
{
	json_t *o = json_object();
	for (size_t i = 0; i < n; i++)
		if (fields[i].name)
			json_object_set_new(o, fields[i].name, declared_value(&fields[i], row[i]));
	return o;
}

/* A read's rows as its document: the first row's object, or {list: [objects]}; a list in
 * pages shows at most its page, and when there are more rows, the cursor of the next page
 * (sealed for ctx's caller, tool and args; NULL for a whole list). */
static json_t *declared_document(const struct mcp_ctx *ctx, const struct declared_read *r,
				 char *const *rows, size_t n, json_t *args)
{
	size_t w = r->query.ncolumns;
	if (!r->query.list)
		return declared_object(r->fields, w, rows);
	bool more = r->page_size && n > r->page_size;
	if (more)
		n = r->page_size;
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, declared_object(r->fields, w, rows + i * w));
	json_t *doc = json_pack("{s:o}", r->list, list);
	if (more) {
		const char *place = rows[(n - 1) * w + (size_t)r->page_after];
		char *cursor = pager_cursor_seal(ctx, args, place ? place : "");
		json_object_set_new(doc, "nextCursor", json_string(cursor));
		free(cursor);
	}
	return doc;
}

/* ---- refusals in the declaration's words -------------------------------------------------- */

/* The text declared for outcome, {name} replaced by the argument's value, {key} by key and {why}
 * by why (new); fallback when none is declared. */
static char *declared_words(const struct declared_refusal *refusals, const char *outcome,
			    json_t *args, const char *key, const char *why, const char *fallback)
{
	const char *text = fallback;
	for (const struct declared_refusal *r = refusals; r && r->outcome; r++)
		if (strcmp(r->outcome, outcome) == 0)
			text = r->text;
	size_t cap = strlen(text) + 1;
	char *out = mem_alloc(cap), *o = out;
	for (const char *p = text; *p;) {
		const char *end = *p == '{' ? strchr(p, '}') : NULL;
		if (!end) {
			*o++ = *p++;
			continue;
		}
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
		const char *v = strcmp(name, "key") == 0 ? key
				: strcmp(name, "why") == 0
					? why
					: json_string_value(json_object_get(args, name));
		size_t len = v ? strlen(v) : 0, at = (size_t)(o - out);
		cap += len;
		out = mem_realloc(out, cap);
		o = out + at;
		memcpy(o, v ? v : "", len);
		o += len;
		p = end + 1;
	}
	*o = '\0';
	return out;
}

/* A tool error result with the words declared for outcome. */
static json_t *declared_refusal(const struct declared_refusal *refusals, const char *outcome,
				json_t *args, const char *key, const char *why,
				const char *fallback)
{
	char *text = declared_words(refusals, outcome, args, key, why, fallback);
	json_t *r = tools_result(text, NULL, true);
	free(text);
	return r;
}

/* ---- reads -------------------------------------------------------------------------------- */

/* Runs r for key as ctx's caller (audit: the call's entry, or NULL); rows are new. */
static enum fleet_status declared_run(struct mcp_ctx *ctx, const struct declared_read *r,
				      const char *key, const struct audit_entry *audit,
				      char ***rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	return reads_run_all(&r->query, ctx->req->actor, key, audit, DECLARED_MAX_ROWS,
			     (void **)rows, n);
}

static void declared_free(const struct declared_read *r, char **rows, size_t n)
{
	if (rows)
		reads_free_rows(&r->query, rows, n);
	free(rows);
}

/* The key of a call of a read in pages (new JSON text, declared.h): its arguments but the cursor,
 * the place its cursor carries, one row more than a page. NULL when the cursor is not one of
 * this list's. */
static char *declared_page_query(const struct mcp_ctx *ctx, const struct declared_read *r,
				 json_t *args)
{
	char *after;
	if (pager_cursor_open(ctx, args, &after) != 0)
		return NULL;
	json_t *list = json_copy(args);
	json_object_del(list, "cursor");
	json_t *q = json_pack("{s:o, s:s?, s:I}", "arguments", list, "after", after, "limit",
			      (json_int_t)r->page_size + 1);
	char *text = json_dumps(q, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(q);
	free(after);
	return text;
}

static int declared_read_call(struct mcp_ctx *ctx, const struct declared_row *row, json_t *args,
			      json_t **result, struct mcp_error *err)
{
	const struct declared_read *r = row->read;
	const char *key = row->key ? json_string_value(json_object_get(args, row->key)) : NULL;
	char *query = NULL, **rows = NULL;
	size_t n = 0;
	int rc = 0;
	struct adapter_call call;
	adapter_call_entry(ctx, args, &call);
	if (r->page_size && !(key = query = declared_page_query(ctx, r, args))) {
		/* Refused before any read: its audit row is written here. */
		call.entry.outcome = "invalid";
		call.entry.detail = "cursor";
		if (audit_record(ctx->req->actor, &call.entry) != FLEET_OK) {
			rc = adapter_unavailable(err); /* no answer without its audit row */
			goto out;
		}
		ctx->outcome = "invalid";
		*result = declared_refusal(r->refusals, "invalid_cursor", args, NULL, NULL,
					   "This cursor is not one for this list: list again "
					   "without it.");
		goto out;
	}
	enum fleet_status st = declared_run(ctx, r, key, key ? &call.entry : NULL, &rows, &n);
	if (st == FLEET_UNAVAILABLE) {
		rc = adapter_unavailable(err);
	} else if (st == FLEET_OK) {
		*result = adapter_structured(declared_document(ctx, r, rows, n, args));
	} else {
		if (st == FLEET_FORBIDDEN)
			ctx->outcome =
				"denied"; /* a refusal, not a failure (access line, metrics) */
		char fallback[96];
		snprintf(fallback, sizeof fallback, "The request could not be completed (%s).",
			 fleet_status_name(st));
		*result = declared_refusal(r->refusals, fleet_status_name(st), args, key, NULL,
					   fallback);
	}
out:
	declared_free(r, rows, n);
	free(query);
	return rc;
}

enum resource_status declared_resource(struct mcp_ctx *ctx, const char *uri, const char *value,
				       json_t **result, struct mcp_error *err)
{
	const struct declared_row *row = ctx->spec;
	const struct declared_read *r = row->read;
	struct adapter_call call;
	if (value)
		adapter_read_entry(ctx, uri, value, &call);
	char **rows;
	size_t n;
	enum fleet_status st = declared_run(ctx, r, value, value ? &call.entry : NULL, &rows, &n);
	if (st != FLEET_OK) {
		declared_free(r, rows, n);
		return adapter_read_failure(ctx, st, err);
	}
	json_t *doc = declared_document(ctx, r, rows, n, NULL);
	declared_free(r, rows, n);
	char *text = jsonw_dump(doc);
	json_decref(doc);
	*result = resources_text_result(uri, row->mime_type, text, row->ttl_ms, row->per_user);
	free(text);
	return RESOURCE_OK;
}

/* ---- writes ------------------------------------------------------------------------------- */

/* One write call being handled. */
struct declared_call {
	struct mcp_ctx *ctx;
	const struct declared_write *w;
	json_t *args; /* borrowed */
	struct adapter_call audit;
};

/* The audit row of an outcome the database did not decide (it records the others). */
static void declared_audit(const struct declared_call *c, const char *outcome, const char *detail)
{
	struct audit_entry e = c->audit.entry;
	e.outcome = outcome;
	e.detail = detail;
	if (audit_record(c->ctx->req->actor, &e) != FLEET_OK)
		log_msg(LOG_WARN, c->ctx->req->reqid, "audit row missing for %s", outcome);
}

/* "a or b", "a, b or c" from a comma-separated list, into buf. */
static void declared_roles_words(const char *roles, char *buf, size_t cap)
{
	*buf = '\0';
	size_t n = 1, i = 0;
	for (const char *p = roles; *p; p++)
		n += *p == ',';
	for (const char *p = roles; *p; i++) {
		size_t len = strcspn(p, ",");
		snprintf(buf + strlen(buf), cap - strlen(buf), "%s%.*s",
			 i == 0       ? ""
			 : i + 1 == n ? " or "
				      : ", ",
			 (int)len, p);
		p += len + (p[len] == ',');
	}
}

/* Why the write was refused, in words (the first condition that failed). */
static const char *declared_why(const struct declared_call *c, const struct writes_result *r,
				char *buf, size_t cap)
{
	const struct writes_query *q = &c->w->query;
	char roles[160];
	switch (r->refusal) {
	case WRITES_REFUSAL_SCOPE:
		snprintf(buf, cap, "your access token lacks the %s scope",
			 c->ctx->tool->scope_name);
		return buf;
	case WRITES_REFUSAL_MACHINE:
		snprintf(buf, cap, "%s is open to people only, never to a machine client",
			 c->w->action);
		return buf;
	case WRITES_REFUSAL_NOT_KNOWN:
		return "you or this application are not registered, or no longer active";
	case WRITES_REFUSAL_ROLE:
		declared_roles_words(q->roles ? q->roles : "", roles, sizeof roles);
		snprintf(buf, cap, "your role is %s, and %s needs %s", r->rights.role, c->w->action,
			 roles);
		return buf;
	case WRITES_REFUSAL_NOT_PERSON:
		snprintf(buf, cap,
			 "you are registered as a machine, and %s is open to people acting in "
			 "person only",
			 c->w->action);
		return buf;
	default: break;
	}
	snprintf(buf, cap, "this application is not authorised for %s", c->w->action);
	return buf;
}

/* True when the request declared form-mode elicitation (an empty object means form). */
static bool declared_can_elicit(const struct mcp_ctx *ctx)
{
	json_t *el = json_object_get(ctx->client_caps, "elicitation");
	return ctx->modern && json_is_object(el) &&
	       (json_object_size(el) == 0 || json_object_get(el, "form"));
}

/* The digest a requestState is bound to: the tool name and its exact arguments. */
static void declared_call_digest(const struct declared_call *c, char out[65])
{
	json_t *call = json_pack("{s:s, s:O}", "name", c->ctx->tool->name, "arguments", c->args);
	reqstate_digest(call, out);
	json_decref(call);
}

/* input_required with one form elicitation asking the question the database wrote (the step,
 * its objects by name and what follows, in the user's words), under the declaration's title and
 * description, and a requestState sealed for exactly this caller and call. */
static json_t *declared_ask(const struct declared_call *c, const char *question)
{
	const struct fleet_actor *actor = c->ctx->req->actor;
	char digest[65];
	const char *message = question ? question : c->ctx->tool->title;
	declared_call_digest(c, digest);
	json_t *payload = json_pack("{s:s}", "tool", c->ctx->tool->name);
	char *state = reqstate_seal(actor, "tools/call", digest, payload,
				    adapter_settings(c->ctx)->confirm_ttl_s, NULL);
	json_decref(payload);
	json_t *schema = json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}", "type", "object",
				   "properties", DECLARED_CONFIRM_KEY, "type", "boolean", "title",
				   c->w->confirm_title, "description", c->w->confirm_description,
				   "default", 0, "required", DECLARED_CONFIRM_KEY);
	json_t *result =
		json_pack("{s:s, s:{s:{s:s, s:{s:s, s:s, s:o}}}, s:s}", "resultType",
			  "input_required", "inputRequests", DECLARED_CONFIRM_KEY, "method",
			  "elicitation/create", "params", "mode", "form", "message", message,
			  "requestedSchema", schema, "requestState", state);
	free(state);
	return result;
}

/* The outcome of the user's answer to our elicitation. */
enum declared_answer { ANSWER_NONE, ANSWER_ACCEPT, ANSWER_REFUSE, ANSWER_BAD };

static enum declared_answer declared_read_answer(json_t *responses)
{
	json_t *ans = json_object_get(responses, DECLARED_CONFIRM_KEY);
	if (!ans)
		return ANSWER_NONE;
	const char *action = json_string_value(json_object_get(ans, "action"));
	if (!json_is_object(ans) || !action)
		return ANSWER_BAD;
	if (strcmp(action, "decline") == 0 || strcmp(action, "cancel") == 0)
		return ANSWER_REFUSE;
	if (strcmp(action, "accept") != 0)
		return ANSWER_BAD;
	json_t *content = json_object_get(ans, "content");
	if (content && !json_is_object(content))
		return ANSWER_BAD;
	/* Accepting the form with the box left unticked is not a confirmation. */
	return json_is_true(json_object_get(content, DECLARED_CONFIRM_KEY)) ? ANSWER_ACCEPT
									    : ANSWER_REFUSE;
}

/* Handles requestState / inputResponses of a retry. Returns 1 to go on (with *confirmed and
 * implicit_key set), 0 when *result is final, -1 with err filled. */
static int declared_retry(struct declared_call *c, json_t **result, struct mcp_error *err,
			  bool *confirmed, char implicit_key[REQSTATE_NONCE_HEX + 16])
{
	json_t *params = c->ctx->params;
	json_t *state = json_object_get(params, "requestState");
	json_t *responses = json_object_get(params, "inputResponses");
	if (!state && !responses)
		return 1;
	if (!json_is_string(state) || (responses && !json_is_object(responses))) {
		declared_audit(c, "rejected", "malformed requestState or inputResponses");
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"inputResponses must be an object and come with the requestState "
				"they answer",
				NULL);
	}
	char digest[65], nonce[REQSTATE_NONCE_HEX + 1];
	declared_call_digest(c, digest);
	json_t *payload = NULL;
	enum reqstate_status rs = reqstate_open(json_string_value(state), c->ctx->req->actor,
						"tools/call", digest, &payload, nonce);
	json_decref(payload);
	if (rs != REQSTATE_OK) {
		declared_audit(c, "rejected", reqstate_status_text(rs));
		return mcp_fail(err, MCP_INVALID_PARAMS, reqstate_status_text(rs), NULL);
	}
	switch (declared_read_answer(responses)) {
	case ANSWER_NONE: return 1; /* ask again */
	case ANSWER_BAD:
		declared_audit(c, "rejected", "malformed inputResponses.confirm");
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"inputResponses.confirm must be an elicitation result "
				"{action: accept|decline|cancel, content?}",
				NULL);
	case ANSWER_REFUSE:
		declared_audit(c, "declined", NULL);
		*result = declared_refusal(c->w->refusals, "declined", c->args, NULL, NULL,
					   "Nothing was done: the confirmation was declined or "
					   "cancelled. Ask the user before trying again.");
		return 0;
	case ANSWER_ACCEPT: break;
	}
	*confirmed = true;
	snprintf(implicit_key, REQSTATE_NONCE_HEX + 16, "confirmation/%s", nonce);
	return 1;
}

/* The function asked for the user's confirmation: the question, or why it cannot be asked. */
static int declared_confirm(struct declared_call *c, const struct writes_result *r, json_t **result,
			    struct mcp_error *err)
{
	if (!c->ctx->modern) {
		*result = declared_refusal(
			c->w->refusals, "confirmation_unsupported", c->args, NULL, NULL,
			"This application must have the user confirm this on the server's side, "
			"which needs an MCP 2026-07-28 client with form elicitation. Nothing was "
			"done.");
		return 0;
	}
	if (!declared_can_elicit(c->ctx))
		return mcp_fail(err, MCP_MISSING_CAPABILITY,
				"Missing required client capability: this application must "
				"confirm this call through elicitation",
				json_pack("{s:{s:{}}}", "requiredCapabilities", "elicitation"));
	*result = declared_ask(c, r->effect);
	return 0;
}

/* A write that did not end with a result: its audit row where the database left none, and the
 * answer in the declaration's words. */
static int declared_refused(struct declared_call *c, enum fleet_status st,
			    const struct writes_result *r, json_t **result, struct mcp_error *err)
{
	if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL)
		declared_audit(c, "error", fleet_status_name(st));
	else if (st == FLEET_FORBIDDEN && r->refusal == WRITES_REFUSAL_SCOPE)
		declared_audit(c, "denied", c->ctx->tool->scope_name);
	else if (st == FLEET_FORBIDDEN && r->refusal == WRITES_REFUSAL_MACHINE)
		declared_audit(c, "denied", "a machine client");
	else if (st == FLEET_CONFLICT && strcmp(r->outcome, "conflict") == 0)
		declared_audit(c, "conflict", "unique violation");
	if (st == FLEET_UNAVAILABLE) {
		adapter_unavailable(err);
		err->message = "The fleet database is unavailable right now, and the call may "
			       "have been done. Try again in a minute with the same idempotency "
			       "key.";
		for (const struct declared_refusal *d = c->w->refusals; d->outcome; d++)
			if (strcmp(d->outcome, "unavailable") == 0)
				err->message = d->text; /* static: the generated table's */
		return -1;
	}
	if (st == FLEET_FORBIDDEN)
		c->ctx->outcome = "denied"; /* a refusal, not a failure (access line, metrics) */
	char why[256], fallback[128];
	const char *outcome = st == FLEET_FORBIDDEN   ? "forbidden"
			      : st == FLEET_NOT_FOUND ? "not_found"
			      : st == FLEET_INTERNAL  ? "internal"
						      : r->outcome;
	snprintf(fallback, sizeof fallback,
		 "The request could not be completed (%s). Nothing was done.", outcome);
	*result = declared_refusal(
		c->w->refusals, outcome, c->args, NULL,
		st == FLEET_FORBIDDEN ? declared_why(c, r, why, sizeof why) : NULL, fallback);
	return 0;
}

/* Whether a write that ended ok answers with a task: its declaration has one, the step it left
 * waits for someone else, and the request may be answered with a task. */
static bool declared_tasked(const struct mcp_ctx *ctx, const struct declared_write *w,
			    const struct writes_result *r)
{
	if (!w->task_kind || strcmp(r->outcome, "ok") != 0 || !mcp_task_offered(ctx))
		return false;
	const char *when = w->task_when >= 0 ? r->values[w->task_when] : NULL;
	return w->task_when < 0 || (when && strcmp(when, w->task_when_value) == 0);
}

/* The task of a write whose step waits: created (durable) for the caller, answered. */
static int declared_task(struct mcp_ctx *ctx, const struct declared_write *w,
			 const struct writes_result *r, json_t **result, struct mcp_error *err)
{
	json_t *work =
		json_pack("{s:s, s:s?}", "kind", w->task_kind, "caseId", r->values[w->task_case]);
	int rc = mcp_task_start(ctx, work, result, err);
	json_decref(work);
	return rc;
}

static int declared_write_call(struct mcp_ctx *ctx, const struct declared_write *w, json_t *args,
			       json_t **result, struct mcp_error *err)
{
	struct declared_call c = {.ctx = ctx, .w = w, .args = args};
	adapter_call_entry(ctx, args, &c.audit);
	bool confirmed = false;
	char implicit_key[REQSTATE_NONCE_HEX + 16];
	int go = declared_retry(&c, result, err, &confirmed, implicit_key);
	if (go <= 0)
		return go;
	const char *key =
		w->key_argument ? json_string_value(json_object_get(args, w->key_argument)) : NULL;
	if (confirmed && !key)
		key = implicit_key; /* the accepted state writes at most once */
	char *text = jsonw_dump(args);
	struct writes_request req = {.tool = ctx->tool->name,
				     .args = text,
				     .key = key,
				     .digest = c.audit.digest,
				     .request_id = c.audit.reqid,
				     .confirmed = confirmed};
	struct writes_result r;
	enum fleet_status st = writes_run(&w->query, ctx->req->actor, &req, &r);
	free(text);
	int rc;
	if (st != FLEET_OK)
		rc = declared_refused(&c, st, &r, result, err);
	else if (strcmp(r.outcome, "confirmation_required") == 0)
		rc = declared_confirm(&c, &r, result, err);
	else if (declared_tasked(ctx, w, &r))
		rc = declared_task(ctx, w, &r, result, err);
	else {
		*result =
			adapter_structured(declared_object(w->fields, w->query.ncolumns, r.values));
		rc = 0;
	}
	writes_result_free(&r);
	return rc;
}

int declared_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	const struct declared_row *row = ctx->spec;
	if (row->write)
		return declared_write_call(ctx, row->write, args, result, err);
	return declared_read_call(ctx, row, args, result, err);
}
