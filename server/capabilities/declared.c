/* The generic handlers of declared reads and writes (declared.h): a call's key from its
 * arguments (or the template's variable), the read or write run as the caller, refusals in the
 * declaration's words (the only words: the build gives every outcome its text); for a write,
 * the confirmation its function asks for, through the protocol core (mrtr.h: a form elicitation,
 * its requestState sealed and opened there; an accepted state's nonce is the call's idempotency
 * key when it has none, so that replaying it writes at most once). */
#include "declared.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/mem.h"
#include "server/protocol/mrtr.h"
#include "server/protocol/pager.h"
#include "server/protocol/resources.h"
#include "server/protocol/tasks.h"
#include "server/protocol/tools.h"

#define DECLARED_MAX_ROWS 10000        /* the most rows of one read (an object is its first) */
#define DECLARED_CONFIRM_KEY "confirm" /* our key in inputRequests / inputResponses */
/* A task lives a day (tasks/get answers the same on every instance till then). */
#define DECLARED_TASK_TTL_MS (24LL * 3600 * 1000)

/* ---- refusals in the declaration's words -------------------------------------------------- */

/* The words declared for outcome, or for "other" (the build gives every table both). */
static const char *declared_text(const struct declared_refusal *refusals, const char *outcome)
{
	const char *other = NULL;
	for (const struct declared_refusal *r = refusals; r->outcome; r++) {
		if (strcmp(r->outcome, outcome) == 0)
			return r->text;
		if (strcmp(r->outcome, "other") == 0)
			other = r->text;
	}
	assert(other);
	return other;
}

/* text with each {NAME} replaced by the value vars pairs with NAME (pairs of name and value,
 * NULL-ended; a NULL value is empty), else by the argument NAME's (new). */
static char *declared_fill(const char *text, json_t *args, const char *const *vars)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	for (const char *p = text, *end; *p; p = end + 1) {
		if (!(end = *p == '{' ? strchr(p, '}') : NULL)) {
			fputc(*p, f);
			end = p;
			continue;
		}
		char name[64];
		snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
		const char *const *var = vars;
		while (*var && strcmp(*var, name) != 0)
			var += 2;
		const char *v = *var ? var[1] : json_string_value(json_object_get(args, name));
		fputs(v ? v : "", f);
	}
	if (fclose(f) != 0)
		abort(); /* out of memory, as mem_alloc would */
	return out;
}

/* A tool error result with the words declared for outcome, filled from args and vars, and
 * structured (stolen, or NULL) as its structuredContent. */
static json_t *declared_refusal(const struct declared_refusal *refusals, const char *outcome,
				json_t *args, const char *const *vars, json_t *structured)
{
	char *text = declared_fill(declared_text(refusals, outcome), args, vars);
	json_t *r = tools_result(text, structured, true);
	free(text);
	return r;
}

/* ---- reads -------------------------------------------------------------------------------- */

/* Runs r for key as ctx's caller (audit: the call's entry, or NULL); rows are new. */
static enum fleet_status declared_run(struct mcp_ctx *ctx, const struct declared_read *r,
				      const char *key, const struct audit_entry *audit,
				      char ***rows, size_t *n)
{
	return reads_run_all(&r->query, ctx->req->actor, key, audit, DECLARED_MAX_ROWS,
			     (void **)rows, n);
}

static void declared_free(const struct declared_read *r, char **rows, size_t n)
{
	reads_free_rows(&r->query, rows, n);
	free(rows);
}

static int declared_read_call(struct mcp_ctx *ctx, const struct declared_row *row, json_t *args,
			      json_t **result, struct mcp_error *err)
{
	const struct declared_read *r = row->read;
	const char *key = row->key ? json_string_value(json_object_get(args, row->key)) : NULL;
	char *query = NULL, **rows = NULL;
	size_t n = 0;
	int rc = 0;
	*result = NULL;
	struct adapter_call call;
	adapter_call_entry(ctx, args, &call);
	const char *outcome = "invalid_cursor";
	if (r->page_size && !(key = query = pager_cursor_query(ctx, args, r->page_size + 1))) {
		/* Refused before any read: its audit row is written here. */
		call.entry.outcome = ctx->outcome = "invalid";
		call.entry.detail = "cursor";
		if (audit_record(ctx->req->actor, &call.entry) != FLEET_OK)
			rc = adapter_unavailable(err); /* no answer without its audit row */
		goto out;
	}
	enum fleet_status st = declared_run(ctx, r, key, key ? &call.entry : NULL, &rows, &n);
	if (st == FLEET_UNAVAILABLE) {
		rc = adapter_unavailable(err);
		goto out;
	}
	if (st == FLEET_OK) { /* its result written once, as text: no result, no outcome */
		struct mem_buf doc = {0};
		adapter_document(&doc, ctx, r, rows, n, args);
		tools_result_text(ctx, doc.p, doc.len);
		free(doc.p);
		outcome = NULL;
		goto out;
	}
	if (st == FLEET_FORBIDDEN)
		ctx->outcome = "denied"; /* a refusal, not a failure (access line, metrics) */
	outcome = fleet_status_name(st);
out:
	if (!rc && !*result && outcome)
		*result = declared_refusal(r->refusals, outcome, args,
					   (const char *[]){"key", key, "outcome", outcome, NULL},
					   NULL);
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
	if (st != FLEET_OK) /* no rows: reads_run_all keeps none of a failed read */
		return adapter_read_failure(ctx, st, err);
	struct mem_buf doc = {0};
	adapter_document(&doc, ctx, r, rows, n, NULL);
	declared_free(r, rows, n);
	*result = resources_text_result(uri, row->mime_type, doc.p, row->ttl_ms, row->per_user);
	free(doc.p);
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

/* The audit row of an answer that ends the call before the write is run. */
static void declared_audit(const struct declared_call *c, const char *outcome, const char *detail)
{
	struct audit_entry e = c->audit.entry;
	e.outcome = outcome;
	e.detail = detail;
	if (audit_record(c->ctx->req->actor, &e) != FLEET_OK)
		log_msg(LOG_WARN, c->ctx->req->reqid, "audit row missing for %s", outcome);
}

/* The retry of a call we asked about: the core has opened its requestState (sealed for this
 * caller and these exact arguments, not expired); this is the user's answer. Returns 1 to go on
 * (*confirmed when yes), 0 when *result is final, -1 with err filled. */
static int declared_answer(struct declared_call *c, json_t **result, struct mcp_error *err,
			   bool *confirmed)
{
	switch (mrtr_confirmed(c->ctx, DECLARED_CONFIRM_KEY)) {
	case MRTR_UNANSWERED: return 1; /* a first call, or a retry without the answer: ask */
	case MRTR_YES: *confirmed = true; return 1;
	case MRTR_NO:
		declared_audit(c, "declined", NULL);
		*result = declared_refusal(c->w->refusals, "declined", c->args,
					   (const char *[]){NULL}, NULL);
		return 0;
	case MRTR_MALFORMED: break;
	}
	declared_audit(c, "rejected", "malformed inputResponses.confirm");
	return mcp_fail(err, MCP_INVALID_PARAMS,
			"inputResponses.confirm must be an elicitation result {action: "
			"accept|decline|cancel, content?}, sent with the requestState that asked",
			NULL);
}

/* The function asked for the user's confirmation: input_required with one form asking the
 * question the database wrote (the step, its objects by name and what follows, in the user's
 * words; the tool's title when it wrote none) under the declaration's title and description,
 * its requestState sealed by the core for this caller and call with the version of what the
 * question names, valid as long as the server's confirmations are; or why it cannot be asked
 * (the core answers -32021 to a client without form elicitation). */
static int declared_confirm(struct declared_call *c, const struct writes_result *r, json_t **result,
			    struct mcp_error *err)
{
	struct mcp_ctx *ctx = c->ctx;
	if (!ctx->modern) {
		*result = declared_refusal(c->w->refusals, "confirmation_unsupported", c->args,
					   (const char *[]){NULL}, NULL);
		return 0;
	}
	json_t *ask =
		mrtr_confirmation(DECLARED_CONFIRM_KEY, r->effect ? r->effect : ctx->tool->title,
				  c->w->confirm_title, c->w->confirm_description);
	json_t *state = json_pack("{s:s, s:s?}", "tool", ctx->tool->name, "version", r->version);
	int rc = mrtr_ask(ctx, json_pack("{s:o}", DECLARED_CONFIRM_KEY, ask), state,
			  adapter_settings(ctx)->confirm_ttl_s, result, err);
	json_decref(state);
	return rc;
}

/* The words of why a write was refused (FLEET_FORBIDDEN): the first condition that failed. */
static const char *const declared_reasons[] = {
	[WRITES_REFUSAL_NONE] = "why_client",     [WRITES_REFUSAL_SCOPE] = "why_scope",
	[WRITES_REFUSAL_MACHINE] = "why_machine", [WRITES_REFUSAL_NOT_KNOWN] = "why_not_known",
	[WRITES_REFUSAL_ROLE] = "why_role",       [WRITES_REFUSAL_NOT_PERSON] = "why_not_person",
	[WRITES_REFUSAL_CLIENT] = "why_client",
};

/* A write that did not end with a result, in the declaration's words: for people, who read no
 * step code or tool name; a refusal of the function's own carries, as its structuredContent,
 * what it names as it stands (the case's step and the tools that take the next one), for the
 * program that called. */
static int declared_refused(struct declared_call *c, enum fleet_status st,
			    const struct writes_result *r, json_t **result, struct mcp_error *err)
{
	const struct declared_refusal *words = c->w->refusals;
	if (st == FLEET_UNAVAILABLE) { /* the message is static: the generated table's */
		adapter_unavailable(err);
		err->message = declared_text(words, "unavailable");
		return -1;
	}
	/* The function's own words for its refusals and conflicts; the status's for the rest. */
	const char *outcome =
		st == FLEET_INVALID || st == FLEET_CONFLICT ? r->outcome : fleet_status_name(st);
	char roles[256] = "";
	for (const char *p = c->w->query.roles; p && *p; p += strcspn(p, ","), p += *p == ',')
		snprintf(roles + strlen(roles), sizeof roles - strlen(roles), "%s%.*s",
			 *roles ? ", " : "", (int)strcspn(p, ","), p);
	const char *vars[] = {"outcome", outcome,      "scope", c->ctx->tool->scope_name,
			      "action",  c->w->action, "role",  r->rights.role,
			      "roles",   roles,        "why",   NULL,
			      NULL};
	char *why = NULL;
	if (st == FLEET_FORBIDDEN) {
		c->ctx->outcome = "denied"; /* a refusal, not a failure (access line, metrics) */
		why = declared_fill(declared_text(words, declared_reasons[r->refusal]), c->args,
				    vars);
		vars[sizeof vars / sizeof vars[0] - 2] = why;
	}
	/* A result that breaks its declaration is logged, never shown; the words still are. */
	json_t *facts = st == FLEET_INVALID && r->result ? adapter_result(c->w, r->result) : NULL;
	*result = declared_refusal(words, outcome, c->args, vars, facts);
	free(why);
	return 0;
}

/* A write that ended ok or replayed: its result as the tool shows it, or the task it opened. */
static int declared_done(struct mcp_ctx *ctx, const struct declared_write *w,
			 struct writes_result *r, json_t **result, struct mcp_error *err)
{
	json_t *shown = adapter_result(w, r->result);
	if (!shown)
		return adapter_domain_error(FLEET_INTERNAL, err);
	if (!r->tasked) {
		*result = adapter_structured(shown);
		return 0;
	}
	json_decref(shown);
	struct mcp_task t;
	adapter_task(&r->task, &t);
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
	int go = declared_answer(&c, result, err, &confirmed);
	if (go <= 0)
		return go;
	const char *key =
		w->key_argument ? json_string_value(json_object_get(args, w->key_argument)) : NULL;
	char implicit_key[REQSTATE_NONCE_HEX + 16], task_id[MCP_TASK_ID_MAX + 1];
	if (confirmed && !key) { /* the accepted question writes at most once */
		snprintf(implicit_key, sizeof implicit_key, "confirmation/%s", mrtr_nonce(ctx));
		key = implicit_key;
	}
	char *text = jsonw_dump(args);
	struct writes_request req = {
		.tool = ctx->tool->name,
		.args = text,
		.key = key,
		.digest = c.audit.digest,
		.request_id = c.audit.reqid,
		.confirmed = confirmed,
		.version = json_string_value(json_object_get(mrtr_state(ctx), "version")),
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
