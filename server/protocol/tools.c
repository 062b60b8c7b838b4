/* Tools: the generic registry over the server description's tool table: listing, argument
 * validation against each tool's inputSchema, the call, and its audit and log line. */
#include "tools.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "answers.h"
#include "budget.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/mem.h"
#include "notify.h"
#include "pager.h"
#include "ratelimit.h"
#include "schema.h"
#include "service.h"
#include "tasks.h"

/* Parsed schemas of every row (out[i] is NULL without outputSchema) and their patterns. */
struct tools_loaded {
	json_t **in;
	json_t **out;
	struct schema_set *patterns;
};

int tools_load(struct mcp_service *svc)
{
	const struct mcp_server *s = svc->server;
	struct tools_loaded *l = mem_calloc(1, sizeof *l);
	svc->tools = l;
	l->in = mem_calloc(s->ntools + 1, sizeof *l->in);
	l->out = mem_calloc(s->ntools + 1, sizeof *l->out);
	l->patterns = schema_set_new();
	for (size_t i = 0; i < s->ntools; i++) {
		const struct tool_desc *t = &s->tools[i];
		json_error_t e;
		char msg[256] = "";
		l->in[i] = json_loads(t->input_schema, JSON_REJECT_DUPLICATES, &e);
		l->out[i] = t->output_schema
				    ? json_loads(t->output_schema, JSON_REJECT_DUPLICATES, &e)
				    : NULL;
		if (!l->in[i] || (t->output_schema && !l->out[i]) ||
		    (!t->schema_listed_only && !schema_check(l->in[i], msg, sizeof msg)) ||
		    (l->out[i] && !schema_check(l->out[i], msg, sizeof msg)) ||
		    schema_set_add(l->patterns, l->in[i]) != 0) {
			log_error("tool %s: invalid schema %s", t->name, msg);
			return -1;
		}
	}
	return 0;
}

void tools_unload(struct mcp_service *svc)
{
	struct tools_loaded *l = svc->tools;
	if (!l)
		return;
	for (size_t i = 0; i < svc->server->ntools; i++) {
		json_decref(l->in[i]);
		json_decref(l->out[i]);
	}
	schema_set_free(l->patterns);
	free(l->in);
	free(l->out);
	free(l);
	svc->tools = NULL;
}

const json_t *tools_input_schema(const struct mcp_service *svc, size_t i)
{
	return i < svc->server->ntools ? svc->tools->in[i] : NULL;
}

const json_t *tools_output_schema(const struct mcp_service *svc, size_t i)
{
	return i < svc->server->ntools ? svc->tools->out[i] : NULL;
}

json_t *tools_result(const char *text, json_t *structured, bool is_error)
{
	json_t *r = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text,
			      "isError", is_error);
	if (structured)
		json_object_set_new(r, "structuredContent", structured);
	return r;
}

void tools_result_text(struct mcp_ctx *ctx, const char *doc, size_t n)
{
	struct mcp_answer *ans = ctx->answer;
	assert(ans && !ans->written.p); /* dispatched, written once */
	struct mem_buf *b = &ans->written;
	static const char head[] = "{\"content\":[{\"type\":\"text\",\"text\":";
	static const char tail[] = "}],\"isError\":false";
	static const char structured[] = ",\"structuredContent\":";
	mem_buf_put(b, head, sizeof head - 1);
	jsonw_string(b, doc, n);
	mem_buf_put(b, tail, sizeof tail - 1);
	if (mcp_version_at_least(ctx, "2025-06-18")) { /* as tools_call strips it for the others */
		mem_buf_put(b, structured, sizeof structured - 1);
		mem_buf_put(b, doc, n);
	}
	answers_shape_text(ctx, b);
	ans->text = b->p;
	ans->len = b->len;
}

/* A tool as the negotiated revision knows it (title and outputSchema from 2025-06-18 on). */
static json_t *tools_describe(const struct mcp_ctx *ctx, size_t i)
{
	const struct tool_desc *t = &ctx->server->tools[i];
	json_t *tool = json_pack("{s:s, s:s, s:O}", "name", t->name, "description", t->description,
				 "inputSchema", tools_input_schema(ctx->service, i));
	json_t *ann = json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title, "readOnlyHint",
				t->read_only, "destructiveHint", t->destructive, "idempotentHint",
				t->idempotent, "openWorldHint", 0);
	json_object_set_new(tool, "annotations", ann);
	if (mcp_version_at_least(ctx, "2025-06-18")) {
		json_object_set_new(tool, "title", json_string(t->title));
		const json_t *out = tools_output_schema(ctx->service, i);
		if (out)
			json_object_set(tool, "outputSchema", (json_t *)out);
	}
	mcp_describe_governance(ctx, ctx->server->governance_key, tool, t->governance);
	mcp_describe_ext(ctx, tool, t->ext);
	return tool;
}

/* Whether the list for who is kept as text (answers_known): its key says everything the
 * list's text depends on, the caller only through the rows it may see (a change of rights
 * changes them, so the key), and the rows' extension parts the client declared. */
static bool tools_list_known(struct mcp_ctx *ctx, const struct mcp_caller *who, json_t *params)
{
	const struct mcp_server *s = ctx->server;
	json_t *cursor = json_object_get(params, "cursor");
	if (s->ntools > 64 || (cursor && !json_is_null(cursor) && !json_is_string(cursor)))
		return false; /* built each time */
	unsigned long long seen = 0, declared = 0;
	for (size_t i = 0; i < s->ntools; i++) {
		const struct tool_desc *t = &s->tools[i];
		if (MCP_MAY(who, t) && mcp_ext_offered(ctx, t->ext))
			seen |= 1ull << i;
		if (t->ext && mcp_ext_declared(ctx, t->ext))
			declared |= 1ull << i;
	}
	/* Longer than a key may be (a client's long cursor): not kept (answers_known). */
	char key[ANSWERS_KEY_MAX + 1];
	snprintf(key, sizeof key, "tools/list %s %d %d %llx %llx %s", ctx->version, ctx->modern,
		 ctx->req->per_principal, seen, declared,
		 json_is_string(cursor) ? json_string_value(cursor) : "");
	return answers_known(ctx, key);
}

int tools_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	struct mcp_caller who;
	if (mcp_caller(ctx, &who, err) != 0)
		return -1;
	if (tools_list_known(ctx, &who, params)) {
		*result = NULL;
		return 0;
	}
	const struct mcp_server *s = ctx->server;
	json_t *all = json_array();
	for (size_t i = 0; i < s->ntools; i++)
		if (MCP_MAY(&who, &s->tools[i]) && mcp_ext_offered(ctx, s->tools[i].ext))
			json_array_append_new(all, tools_describe(ctx, i));
	/* With tokens the list depends on the caller: private. */
	return pager_page(ctx, params, all, "tools", 3600000, ctx->req->per_principal, result, err);
}

/* Tells the client how its call ended (notifications/message, logger the server's tools_logger;
 * sent only when the request's log level admits it, notify.h): the facts of its audit row,
 * never the arguments; the target argument (the tool's audit.target) and detail only when there
 * are some. Anything but a result or a question is a warning. */
static void tools_log(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		      const char *detail)
{
	bool fine = strcmp(outcome, "ok") == 0 || strcmp(outcome, "input_required") == 0;
	enum notify_level level = fine ? NOTIFY_INFO : NOTIFY_WARNING;
	if (!notify_wants(ctx, level))
		return; /* the common case: nothing asked, nothing built */
	const char *key = ctx->tool ? ctx->tool->audit.target : NULL;
	json_t *target = key ? json_object_get(args, key) : NULL;
	json_t *data = json_pack("{s:s, s:s}", "event", "tools/call", "tool", tool);
	if (json_is_string(target))
		json_object_set(data, key, target);
	json_object_set_new(data, "outcome", json_string(outcome));
	if (detail)
		json_object_set_new(data, "detail", json_string(detail));
	notify_log(ctx, level, ctx->server->tools_logger, data);
	json_decref(data);
}

static void tools_audit(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
			const char *detail)
{
	tools_log(ctx, tool, args, outcome, detail);
	ctx->outcome = outcome;
	if (ctx->server->audit)
		ctx->server->audit(ctx, tool, args, outcome, detail);
}

int tools_call(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	const struct mcp_server *s = ctx->server;
	size_t i;
	for (i = 0; name && i < s->ntools; i++)
		if (strcmp(s->tools[i].name, name) == 0)
			break;
	/* The volume limit comes first: a refused call costs no audit row, no database work. */
	bool write = name && i < s->ntools && !s->tools[i].read_only;
	if (mcp_budget_take(ctx, write, "tools/call", err) != 0)
		return -1;
	if (!name) {
		tools_audit(ctx, "(none)", args, "invalid", "no tool name");
		return mcp_fail(err, MCP_INVALID_PARAMS, "tools/call needs a string 'name'", NULL);
	}
	if (i == s->ntools || !mcp_ext_offered(ctx, s->tools[i].ext)) {
		tools_audit(ctx, name, args, "invalid", "unknown tool");
		return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown tool",
				json_pack("{s:s}", "name", name));
	}
	const struct tool_desc *t = &s->tools[i];
	ctx->tool = t;
	ctx->spec = t->spec;
	ctx->label = t->name;
	if (args && !json_is_object(args)) {
		tools_audit(ctx, name, args, "invalid", "arguments is not an object");
		return mcp_fail(err, MCP_INVALID_PARAMS, "tools/call 'arguments' must be an object",
				NULL);
	}
	if (t->scope && !(ctx->req->actor->scopes & t->scope)) {
		/* A new token with the scope can cure this: the transport answers 403
		 * insufficient_scope (HTTP) or an error naming the scope. */
		tools_audit(ctx, name, args, "denied", t->scope_name);
		err->missing_scope = t->scope_name;
		return mcp_fail(err, MCP_INVALID_PARAMS, "Insufficient scope",
				json_pack("{s:s}", "requiredScope", t->scope_name));
	}
	if (t->tasks == MCP_TASKS_REQUIRED && !mcp_task_offered(ctx)) {
		/* It is served only as a task: refused before its handler runs. */
		tools_audit(ctx, name, args, "invalid", "the tasks extension was not declared");
		return mcp_tasks_missing(err);
	}
	json_t *empty = NULL;
	if (!args)
		args = empty = json_object();
	char msg[320];
	int rc = 0;
	if (!t->schema_listed_only &&
	    !schema_validate(ctx->service->tools->patterns, tools_input_schema(ctx->service, i),
			     args, msg, sizeof msg)) {
		tools_audit(ctx, name, args, "invalid", msg);
		*result = tools_result(msg, NULL, true);
	} else {
		rc = t->fn(ctx, args, result, err);
		const char *outcome =
			rc != 0 ? "error"
			: json_is_true(json_object_get(*result, "isError"))
				? (ctx->outcome ? ctx->outcome : "failed") /* the tool's word */
			: json_object_get(*result, "inputRequests") ? "input_required"
								    : "ok";
		ctx->outcome = outcome;
		if (t->audit.self) /* its rows are written where the outcome is decided */
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
