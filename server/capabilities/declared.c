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
#include "server/protocol/reqstate.h"
#include "server/protocol/resources.h"
#include "server/protocol/tasks.h"
#include "server/protocol/tools.h"

/* Most rows one read answers with (a list's; an object's are its first). */
#define DECLARED_MAX_ROWS 10000
#define DECLARED_CONFIRM_KEY "confirm" /* our key in inputRequests / inputResponses */
/* A task lives a day (tasks/get answers the same on every instance till then). */
#define DECLARED_TASK_TTL_MS (24LL * 3600 * 1000)

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

/* A read's rows as its document: the first row's object, or {list: [objects]}. */
static json_t *declared_document(const struct declared_read *r, char *const *rows, size_t n)
{
	size_t w = r->query.ncolumns;
	if (!r->query.list)
		return declared_object(r->fields, w, rows);
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, declared_object(r->fields, w, rows + i * w));
	return json_pack("{s:o}", r->list, list);
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

static int declared_read_call(struct mcp_ctx *ctx, const struct declared_row *row, json_t *args,
			      json_t **result, struct mcp_error *err)
{
	const struct declared_read *r = row->read;
	const char *key = row->key ? json_string_value(json_object_get(args, row->key)) : NULL;
	struct adapter_call call;
	adapter_call_entry(ctx, args, &call);
	char **rows;
	size_t n;
	enum fleet_status st = declared_run(ctx, r, key, key ? &call.entry : NULL, &rows, &n);
	if (st == FLEET_UNAVAILABLE) {
		declared_free(r, rows, n);
		return adapter_unavailable(err);
	}
	if (st == FLEET_OK) {
		*result = adapter_structured(declared_document(r, rows, n));
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
	declared_free(r, rows, n);
	return 0;
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
	json_t *doc = declared_document(r, rows, n);
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

/* input_required with one form elicitation showing the tool, the effect the database stated
 * and the identity, and a requestState sealed for exactly this caller and call. */
static json_t *declared_ask(const struct declared_call *c, const char *effect)
{
	const struct fleet_actor *actor = c->ctx->req->actor;
	char digest[65];
	char *message =
		mem_printf("Confirm %s: %s. You act as %s through %s.", c->ctx->tool->name,
			   effect ? effect : c->ctx->tool->title, actor->subject, actor->client_id);
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
	free(message);
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

json_t *declared_shown(const struct declared_write *w, const char *result)
{
	json_t *in = result ? json_loads(result, JSON_REJECT_DUPLICATES, NULL) : NULL;
	json_t *out = json_is_object(in) ? json_object() : NULL;
	const char *why = out ? NULL : "not an object";
	const char *key;
	json_t *v;
	json_object_foreach (in, key, v) {
		const struct declared_field *f = NULL;
		for (size_t i = 0; i < w->nfields && !f; i++)
			if (strcmp(w->fields[i].column, key) == 0)
				f = &w->fields[i];
		bool fits = f && (json_is_null(v)               ? f->nullable || !f->name
				  : f->json == DECLARED_STRING  ? json_is_string(v)
				  : f->json == DECLARED_INTEGER ? json_is_integer(v)
				  : f->json == DECLARED_BOOLEAN ? json_is_boolean(v)
								: true);
		if (!fits && !why)
			why = key;
		else if (f && f->name)
			json_object_set(out, f->name, v);
	}
	for (size_t i = 0; out && i < w->nfields; i++)
		if (w->fields[i].name && !json_object_get(out, w->fields[i].name)) {
			if (!w->fields[i].nullable && !why)
				why = w->fields[i].column;
			json_object_set_new(out, w->fields[i].name, json_null());
		}
	json_decref(in);
	if (why) {
		log_error("%s: its result is not what its declaration says (%s): %.200s",
			  w->query.function, why, result ? result : "(none)");
		json_decref(out);
		return NULL;
	}
	return out;
}

/* f as the Tasks extension's task, its result shown as w shows it (NULL: none). */
static void declared_task_as(const struct case_task *f, const struct declared_write *w,
			     struct mcp_task *t)
{
	*t = (struct mcp_task){.created_ms = f->created_ms,
			       .updated_ms = f->updated_ms,
			       .ttl_ms = f->ttl_ms,
			       .poll_ms = f->poll_ms};
	snprintf(t->id, sizeof t->id, "%s", f->id);
	snprintf(t->message, sizeof t->message, "%s", f->message);
	t->status = f->status == CASE_TASK_COMPLETED   ? MCP_TASK_COMPLETED
		    : f->status == CASE_TASK_CANCELLED ? MCP_TASK_CANCELLED
						       : MCP_TASK_WORKING;
	if (f->status != CASE_TASK_COMPLETED)
		return;
	json_t *sc = w && !f->is_error ? declared_shown(w, f->result) : NULL;
	t->result = sc ? adapter_structured(sc) : tools_result(f->message, NULL, true);
}

void declared_task(const struct case_task *f, const struct mcp_capability *const *caps,
		   size_t ncaps, struct mcp_task *t)
{
	const struct declared_write *w = NULL;
	for (size_t i = 0; i < ncaps && !w; i++)
		for (size_t k = 0; k < caps[i]->ntools && !w; k++)
			if (caps[i]->tools[k].fn == declared_tool &&
			    strcmp(caps[i]->tools[k].name, f->tool) == 0)
				w = ((const struct declared_row *)caps[i]->tools[k].spec)->write;
	declared_task_as(f, w, t);
}

/* A write that ended ok or replayed: its result as the tool shows it, or the task it opened. */
static int declared_done(struct mcp_ctx *ctx, const struct declared_write *w,
			 struct writes_result *r, json_t **result, struct mcp_error *err)
{
	json_t *shown = declared_shown(w, r->result);
	if (!shown)
		return adapter_domain_error(FLEET_INTERNAL, err);
	if (!r->tasked) {
		*result = adapter_structured(shown);
		return 0;
	}
	json_decref(shown);
	struct mcp_task t;
	declared_task_as(&r->task, w, &t);
	int rc = mcp_task_created(ctx, &t, result, err);
	mcp_task_clear(&t);
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
	char *text = jsonw_dump(args), task_id[MCP_TASK_ID_MAX + 1];
	struct writes_request req = {.tool = ctx->tool->name,
				     .args = text,
				     .key = key,
				     .digest = c.audit.digest,
				     .request_id = c.audit.reqid,
				     .confirmed = confirmed,
				     .target = c.audit.entry.target};
	if (mcp_task_offered(ctx)) { /* a step that waits opens it, in the write's transaction */
		mcp_task_id_new(task_id);
		req.task_id = task_id;
		req.task_ttl_ms = DECLARED_TASK_TTL_MS;
	}
	struct writes_result r;
	enum fleet_status st = writes_run(&w->query, ctx->req->actor, &req, &r);
	free(text);
	int rc;
	if (st != FLEET_OK)
		rc = declared_refused(&c, st, &r, result, err);
	else if (strcmp(r.outcome, "confirmation_required") == 0)
		rc = declared_confirm(&c, &r, result, err);
	else
		rc = declared_done(ctx, w, &r, result, err);
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
