/* The Tasks extension in the protocol core (see tasks.h): the declaration checks, the task
 * methods, the result shapes and the task ids of listen filters, over the application's task
 * provider. */
#include "tasks.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "budget.h"
#include "common/log.h"
#include "service.h"

static const char *const tasks_status_names[] = {"working", "input_required", "completed", "failed",
						 "cancelled"};

void mcp_task_clear(struct mcp_task *t)
{
	json_decref(t->input_requests);
	json_decref(t->result);
	json_decref(t->error);
	t->input_requests = t->result = t->error = NULL;
}

long long mcp_task_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mcp_task_id_new(char out[MCP_TASK_ID_MAX + 1])
{
	unsigned char r[16];
	if (RAND_bytes(r, sizeof r) != 1)
		abort(); /* no entropy: no id may be handed out, guessable ones least of all */
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40); /* version 4 */
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80); /* RFC 9562 variant */
	static const char hex[] = "0123456789abcdef";
	char *p = out;
	for (size_t i = 0; i < sizeof r; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[r[i] >> 4];
		*p++ = hex[r[i] & 15];
	}
	*p = '\0';
}

/* An ISO 8601 UTC timestamp with milliseconds (new string). */
static json_t *tasks_time(long long ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char buf[40];
	gmtime_r(&s, &tm);
	size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof buf - n, ".%03dZ", (int)(ms % 1000));
	return json_string(buf);
}

/* The Task fields every shape shares (new). */
static json_t *tasks_fields(const struct mcp_task *t)
{
	const char *status = (size_t)t->status < sizeof tasks_status_names / sizeof(char *)
				     ? tasks_status_names[t->status]
				     : "failed";
	json_t *o =
		json_pack("{s:s, s:s, s:o, s:o}", "taskId", t->id, "status", status, "createdAt",
			  tasks_time(t->created_ms), "lastUpdatedAt", tasks_time(t->updated_ms));
	if (t->message[0])
		json_object_set_new(o, "statusMessage", json_string(t->message));
	json_object_set_new(o, "ttlMs", t->ttl_ms < 0 ? json_null() : json_integer(t->ttl_ms));
	if (t->poll_ms > 0)
		json_object_set_new(o, "pollIntervalMs", json_integer(t->poll_ms));
	return o;
}

json_t *mcp_task_detail(const struct mcp_task *t)
{
	json_t *o = tasks_fields(t);
	switch (t->status) {
	case MCP_TASK_INPUT_REQUIRED:
		json_object_set_new(o, "inputRequests",
				    t->input_requests ? json_deep_copy(t->input_requests)
						      : json_object());
		break;
	case MCP_TASK_COMPLETED: {
		/* The call's result as a 2026-07-28 client takes it from tools/call: a complete
		 * CallToolResult, which carries its resultType (the dispatcher adds it to direct
		 * answers; a task's result never passes through it). */
		json_t *r = t->result ? json_deep_copy(t->result)
				      : json_pack("{s:[], s:b}", "content", "isError", 0);
		json_object_set_new(r, "resultType", json_string("complete"));
		json_object_set_new(o, "result", r);
		break;
	}
	case MCP_TASK_FAILED:
		json_object_set_new(o, "error",
				    t->error ? json_deep_copy(t->error)
					     : json_pack("{s:i, s:s}", "code", MCP_INTERNAL_ERROR,
							 "message", "Internal error"));
		break;
	default: break;
	}
	return o;
}

/* ---- the client's declaration ---------------------------------------------------------------- */

/* Whether this request (its own clientCapabilities, 2026-07-28) declared the extension. */
static bool tasks_declared(const struct mcp_ctx *ctx)
{
	return ctx->modern &&
	       json_is_object(json_object_get(ctx->client_extensions, MCP_TASKS_EXTENSION));
}

int mcp_tasks_missing(struct mcp_error *err)
{
	return mcp_fail(err, MCP_MISSING_CAPABILITY,
			"Missing required client capability: this request needs the "
			"io.modelcontextprotocol/tasks extension",
			json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions",
				  MCP_TASKS_EXTENSION));
}

bool mcp_task_offered(const struct mcp_ctx *ctx)
{
	return ctx->server->tasks && ctx->tool && ctx->tool->tasks != MCP_TASKS_NEVER &&
	       ctx->method && strcmp(ctx->method, "tools/call") == 0 && tasks_declared(ctx);
}

/* -32603 for a handler that answers with a task where none may be (our bug, logged). */
static int tasks_bug(const struct mcp_ctx *ctx, const char *what, struct mcp_error *err)
{
	log_msg(LOG_ERROR, ctx->req->reqid, "bug: %s from %s", what,
		ctx->method ? ctx->method : "(none)");
	return mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error", NULL);
}

int mcp_task_created(struct mcp_ctx *ctx, const struct mcp_task *t, json_t **result,
		     struct mcp_error *err)
{
	if (!mcp_task_offered(ctx))
		return tasks_bug(ctx, "a task where none may be answered", err);
	json_t *r = tasks_fields(t);
	json_object_set_new(r, "resultType", json_string("task"));
	*result = r;
	return 0;
}

int mcp_task_start(struct mcp_ctx *ctx, json_t *work, json_t **result, struct mcp_error *err)
{
	if (!mcp_task_offered(ctx) || !ctx->server->tasks->create)
		return tasks_bug(ctx, "a task where none may be started", err);
	const struct mcp_task_provider *p = ctx->server->tasks;
	struct mcp_task t = {0};
	if (p->create(p, ctx->req->actor, ctx->tool->name, work, &t, err) != MCP_TASK_OK)
		return -1;
	int rc = mcp_task_created(ctx, &t, result, err);
	mcp_task_clear(&t);
	return rc;
}

int tasks_check_result(const struct mcp_ctx *ctx, json_t *result, struct mcp_error *err)
{
	const char *rt = json_string_value(json_object_get(result, "resultType"));
	if (!rt || strcmp(rt, "task") != 0 || mcp_task_offered(ctx))
		return 0;
	return tasks_bug(ctx, "a task result", err);
}

/* ---- loading --------------------------------------------------------------------------------- */

int tasks_load(struct mcp_service *svc)
{
	const struct mcp_server *s = svc->server;
	for (size_t i = 0; i < s->ntools && !s->tasks; i++)
		if (s->tools[i].tasks != MCP_TASKS_NEVER) {
			log_error("tool %s declares task support, but the server description has "
				  "no task provider",
				  s->tools[i].name);
			return -1;
		}
	if (!s->tasks) {
		if (json_object_get(svc->extensions, MCP_TASKS_EXTENSION)) {
			log_error("server description: %s is listed among the extensions, but "
				  "there is no task provider",
				  MCP_TASKS_EXTENSION);
			return -1;
		}
		return 0;
	}
	if (!s->tasks->get || !s->tasks->update || !s->tasks->cancel) {
		log_error("server description: the task provider lacks a callback");
		return -1;
	}
	if (!svc->extensions)
		svc->extensions = json_object();
	json_object_set_new(svc->extensions, MCP_TASKS_EXTENSION, json_object());
	return 0;
}

/* ---- the methods ----------------------------------------------------------------------------- */

/* What every task method checks first: the declaration (-32021), the taskId (-32602), the
 * caller's budget (a read for tasks/get, a write otherwise). 0 with *id, or -1 with err. */
static int tasks_begin(struct mcp_ctx *ctx, json_t *params, bool write, const char **id,
		       struct mcp_error *err)
{
	if (!tasks_declared(ctx))
		return mcp_tasks_missing(err);
	json_t *jid = json_object_get(params, "taskId");
	if (!json_is_string(jid)) {
		ctx->outcome = "invalid";
		return mcp_fail(err, MCP_INVALID_PARAMS, "taskId must be a string", NULL);
	}
	if (mcp_budget_take(ctx, write, ctx->method, err) != 0)
		return -1;
	*id = json_string_value(jid);
	return 0;
}

/* The answer to a provider's rc: 0 for MCP_TASK_OK; the same -32602 for a task never issued,
 * expired, another's or out of the token's scope (nothing tells them apart); -1 with the
 * provider's err otherwise. */
static int tasks_answer(struct mcp_ctx *ctx, enum mcp_task_rc rc, struct mcp_error *err)
{
	if (rc == MCP_TASK_OK)
		return 0;
	if (rc == MCP_TASK_NOT_FOUND) {
		ctx->outcome = "not_found";
		return mcp_fail(err, MCP_INVALID_PARAMS, "Task not found", NULL);
	}
	if (!err->message) /* a provider that failed without saying why */
		return mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error", NULL);
	return -1;
}

/* A provider never sees an id longer than it may hand out: such an id is unknown. */
static bool tasks_id_fits(const char *id)
{
	return strlen(id) <= MCP_TASK_ID_MAX;
}

/* The scope a request needs for task t: that of the tool whose call created it (reading the task
 * is reading that tool's result; cancelling or answering it, that tool's write). NULL when the
 * token carries it; else the scope's name ("" for a tool no longer served: nobody's task). */
static const char *tasks_missing_scope(const struct mcp_ctx *ctx, const struct mcp_task *t)
{
	const struct mcp_server *s = ctx->server;
	for (size_t i = 0; i < s->ntools; i++)
		if (strcmp(s->tools[i].name, t->tool) == 0)
			return !s->tools[i].scope || (ctx->req->actor->scopes & s->tools[i].scope)
				       ? NULL
				       : s->tools[i].scope_name;
	return "";
}

/* Task id as the caller may see it, into *t: the provider's read, then the token's scope for
 * the tool that made it. A task refused for its scope is MCP_TASK_NOT_FOUND after the same read
 * as an unknown one, and both leave an audit row as a refused read does (the method, the task
 * id's digest; "denied" naming the scope, or "not_found"). */
static enum mcp_task_rc tasks_read(struct mcp_ctx *ctx, const char *id, struct mcp_task *t,
				   struct mcp_error *err)
{
	const struct mcp_task_provider *p = ctx->server->tasks;
	enum mcp_task_rc rc =
		tasks_id_fits(id) ? p->get(p, ctx->req->actor, id, t, err) : MCP_TASK_NOT_FOUND;
	const char *scope = rc == MCP_TASK_OK ? tasks_missing_scope(ctx, t) : NULL;
	if (scope) {
		mcp_task_clear(t);
		rc = MCP_TASK_NOT_FOUND;
	}
	if (rc == MCP_TASK_NOT_FOUND && ctx->server->audit) {
		json_t *args = json_pack("{s:s}", "taskId", id);
		ctx->server->audit(ctx, ctx->method, args, scope ? "denied" : "not_found",
				   scope && *scope ? scope : NULL);
		json_decref(args);
	}
	return rc;
}

int tasks_get(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	const char *id;
	if (tasks_begin(ctx, params, false, &id, err) != 0)
		return -1;
	struct mcp_task t = {0};
	if (tasks_answer(ctx, tasks_read(ctx, id, &t, err), err) != 0)
		return -1;
	*result = mcp_task_detail(&t);
	mcp_task_clear(&t);
	return 0;
}

int tasks_update(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	const char *id;
	if (tasks_begin(ctx, params, true, &id, err) != 0)
		return -1;
	json_t *responses = json_object_get(params, "inputResponses");
	if (!responses || mcp_input_responses_check(responses, err) != 0) {
		ctx->outcome = "invalid";
		return responses ? -1
				 : mcp_fail(err, MCP_INVALID_PARAMS,
					    "tasks/update needs an inputResponses object", NULL);
	}
	const struct mcp_task_provider *p = ctx->server->tasks;
	struct mcp_task t = {0};
	enum mcp_task_rc rc = tasks_read(ctx, id, &t, err);
	mcp_task_clear(&t);
	if (rc == MCP_TASK_OK)
		rc = p->update(p, ctx->req->actor, id, responses, err);
	if (tasks_answer(ctx, rc, err) != 0)
		return -1;
	*result = json_object(); /* an acknowledgement: the task's state is for tasks/get */
	return 0;
}

int tasks_cancel(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	const char *id;
	if (tasks_begin(ctx, params, true, &id, err) != 0)
		return -1;
	const struct mcp_task_provider *p = ctx->server->tasks;
	struct mcp_task t = {0};
	enum mcp_task_rc rc = tasks_read(ctx, id, &t, err);
	mcp_task_clear(&t);
	if (rc == MCP_TASK_OK)
		rc = p->cancel(p, ctx->req->actor, id, err);
	if (tasks_answer(ctx, rc, err) != 0)
		return -1;
	*result = json_object();
	return 0;
}

/* ---- listen filters -------------------------------------------------------------------------- */

int tasks_listen(struct mcp_ctx *ctx, json_t *filter, json_t **honoured, struct mcp_error *err)
{
	*honoured = NULL;
	json_t *ids = json_object_get(filter, "taskIds");
	const struct mcp_task_provider *p = ctx->server->tasks;
	if (!ids || !p)
		return 0; /* without a provider, dropped from the acknowledgement like any filter */
	if (!json_is_array(ids))
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"notifications.taskIds must be an array of task ids", NULL);
	if (!tasks_declared(ctx))
		return mcp_tasks_missing(err);
	if (json_array_size(ids) > MCP_TASKS_LISTEN_MAX)
		return mcp_fail(err, MCP_INVALID_PARAMS, "Too many taskIds",
				json_pack("{s:i}", "max", MCP_TASKS_LISTEN_MAX));
	json_t *yes = json_array();
	size_t i, k;
	json_t *id, *seen;
	json_array_foreach (ids, i, id) {
		bool dup = false;
		json_array_foreach (yes, k, seen)
			dup = dup || json_equal(seen, id);
		if (!json_is_string(id) || dup || !tasks_id_fits(json_string_value(id)))
			continue;
		/* Each task honoured is a read of it: the caller's budget, the provider's check,
		 * the token's scope; one refused is left out as an unknown one is. */
		struct mcp_task t = {0};
		enum mcp_task_rc rc = MCP_TASK_ERROR;
		if (mcp_budget_take(ctx, false, "subscriptions/listen", err) == 0)
			rc = tasks_read(ctx, json_string_value(id), &t, err);
		mcp_task_clear(&t);
		if (rc == MCP_TASK_ERROR) {
			json_decref(yes);
			return tasks_answer(ctx, rc, err);
		}
		if (rc == MCP_TASK_OK)
			json_array_append(yes, id);
	}
	*honoured = yes;
	return 0;
}
