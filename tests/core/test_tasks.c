/* The Tasks extension (io.modelcontextprotocol/tasks) in the protocol core, over a provider of
 * the test's own: advertised only with a provider; a task answered only to a request that
 * declared the extension; -32021 where the spec says; the DetailedTask of every status; another
 * caller's task answered exactly as an unknown one, and so one out of the token's scope (the
 * scope of the tool that created it), both audited; the Mcp-Name rule; task ids in listen
 * filters; the 2025-11-25 task methods gone. */
#include <check.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "fixture.h"
#include "server/protocol/subscriptions.h"
#include "server/protocol/tasks.h"
#include "server/protocol/tools.h"
#include "tests/check_main.h"

#define TASKS "\"" MCP_TASKS_EXTENSION "\""
#define DECLARED "{\"extensions\":{" TASKS ":{}}}"

static struct fleet_actor marie = {"marie", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				   ""};
static struct fleet_actor paul = {"paul", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				  ""};
static struct fleet_actor marie_elsewhere = {"marie", "another-app", FLEET_SCOPE_READ, false, 0,
					     ""};
/* marie's token with the scope of the tool "report" too. */
static struct fleet_actor marie_full = {
	"marie", "customer-care-assistant", FLEET_SCOPE_READ | FLEET_SCOPE_REPORT, false, 0, ""};

/* ---- the test's provider: a few tasks in fixed states, and what it was asked ---------------- */

#define NTASKS 16
static struct {
	struct mcp_task t;
	const struct fleet_actor *owner;
} store[NTASKS];
static size_t nstore;
static int creates, handled;
static json_t *last_work, *last_responses;
static char last_tool[64];

static bool owns(const struct fleet_actor *a, const struct fleet_actor *b)
{
	return strcmp(a->subject, b->subject) == 0 && strcmp(a->client_id, b->client_id) == 0;
}

static struct mcp_task *find(const struct fleet_actor *who, const char *id)
{
	for (size_t i = 0; i < nstore; i++)
		if (strcmp(store[i].t.id, id) == 0)
			return owns(store[i].owner, who) ? &store[i].t : NULL;
	return NULL;
}

static struct mcp_task *put(const char *id, const struct fleet_actor *owner,
			    enum mcp_task_status st)
{
	struct mcp_task *t = &store[nstore].t;
	store[nstore++].owner = owner;
	*t = (struct mcp_task){.status = st,
			       .created_ms = 1764412200123LL,
			       .updated_ms = 1764412260000LL,
			       .ttl_ms = 60000,
			       .poll_ms = 500};
	snprintf(t->id, sizeof t->id, "%s", id);
	snprintf(t->tool, sizeof t->tool, "optional");
	return t;
}

static enum mcp_task_rc p_create(const struct mcp_task_provider *p, const struct fleet_actor *who,
				 const char *tool, json_t *work, struct mcp_task *out,
				 struct mcp_error *err)
{
	(void)p, (void)err;
	creates++;
	snprintf(last_tool, sizeof last_tool, "%s", tool);
	json_decref(last_work);
	last_work = json_deep_copy(work);
	char id[MCP_TASK_ID_MAX + 1];
	mcp_task_id_new(id);
	struct mcp_task *t = put(id, who, MCP_TASK_WORKING);
	snprintf(t->tool, sizeof t->tool, "%s", tool);
	snprintf(t->message, sizeof t->message, "started");
	*out = *t;
	return MCP_TASK_OK;
}

static enum mcp_task_rc p_get(const struct mcp_task_provider *p, const struct fleet_actor *who,
			      const char *id, struct mcp_task *out, struct mcp_error *err)
{
	(void)p, (void)err;
	struct mcp_task *t = find(who, id);
	if (!t)
		return MCP_TASK_NOT_FOUND;
	*out = *t;
	out->input_requests = json_deep_copy(t->input_requests);
	out->result = json_deep_copy(t->result);
	out->error = json_deep_copy(t->error);
	return MCP_TASK_OK;
}

static enum mcp_task_rc p_update(const struct mcp_task_provider *p, const struct fleet_actor *who,
				 const char *id, json_t *responses, struct mcp_error *err)
{
	(void)p, (void)err;
	if (!find(who, id))
		return MCP_TASK_NOT_FOUND;
	json_decref(last_responses);
	last_responses = json_deep_copy(responses);
	return MCP_TASK_OK;
}

static enum mcp_task_rc p_cancel(const struct mcp_task_provider *p, const struct fleet_actor *who,
				 const char *id, struct mcp_error *err)
{
	(void)p, (void)err;
	struct mcp_task *t = find(who, id);
	if (!t)
		return MCP_TASK_NOT_FOUND;
	if (t->status == MCP_TASK_WORKING || t->status == MCP_TASK_INPUT_REQUIRED)
		t->status = MCP_TASK_CANCELLED;
	return MCP_TASK_OK;
}

static const struct mcp_task_provider provider = {p_create, p_get, p_update, p_cancel, NULL};

/* ---- tools ---------------------------------------------------------------------------------- */

/* A task when it may be, else its answer on the spot. */
static int maybe_task(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	handled++;
	if (mcp_task_offered(ctx))
		return mcp_task_start(ctx, args, result, err);
	*result = tools_result("done at once", NULL, false);
	return 0;
}

/* Tools that may never be tasks answering with one anyway (bugs the core catches): one forges
 * the result, one asks the core to start a task. */
static int rogue(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)args, (void)err;
	*result = json_pack("{s:s, s:s, s:s}", "resultType", "task", "taskId", "forged", "status",
			    "working");
	return 0;
}

static int eager(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	return mcp_task_start(ctx, args, result, err);
}

static const char any[] = "{\"type\":\"object\"}";
static const struct tool_desc rows[] = {
	{.name = "optional",
	 .title = "O",
	 .description = "o",
	 .input_schema = any,
	 .fn = maybe_task,
	 .tasks = MCP_TASKS_OPTIONAL},
	{.name = "required",
	 .title = "R",
	 .description = "r",
	 .input_schema = any,
	 .fn = maybe_task,
	 .tasks = MCP_TASKS_REQUIRED},
	{.name = "never", .title = "N", .description = "n", .input_schema = any, .fn = maybe_task},
	{.name = "rogue", .title = "X", .description = "x", .input_schema = any, .fn = rogue},
	{.name = "eager", .title = "E", .description = "e", .input_schema = any, .fn = eager},
	{.name = "report",
	 .title = "W",
	 .description = "a write",
	 .input_schema = any,
	 .fn = maybe_task,
	 .tasks = MCP_TASKS_OPTIONAL,
	 .scope = FLEET_SCOPE_REPORT,
	 .scope_name = "fleet:report"},
};

/* The audit rows the core asked for: "METHOD OUTCOME DETAIL TASKID" lines. */
static char audited[1024];
static void audit(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		  const char *detail)
{
	(void)ctx;
	size_t n = strlen(audited);
	snprintf(audited + n, sizeof audited - n, "%s %s %s %s\n", tool, outcome,
		 detail ? detail : "-", json_string_value(json_object_get(args, "taskId")));
}

static struct mcp_server server, plain;
static struct mcp_service *svc, *plain_svc;

static void setup(void)
{
	nstore = 0;
	creates = handled = 0;
	server = (struct mcp_server){.name = "tasks-test",
				     .version = "1",
				     .tools = rows,
				     .ntools = MCP_COUNT(rows),
				     .audit = audit,
				     .tasks = &provider};
	audited[0] = '\0';
	svc = core_load(&server);
	plain_svc = core_server(&plain, NULL, 0, NULL, 0);
	put("t-working", &marie, MCP_TASK_WORKING)->ttl_ms = -1;
	put("t-input", &marie, MCP_TASK_INPUT_REQUIRED)->input_requests =
		json_pack("{s:{s:s, s:{s:s}}}", "confirm-1", "method", "elicitation/create",
			  "params", "message", "Sure?");
	put("t-done", &marie, MCP_TASK_COMPLETED)->result =
		json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", "no fault",
			  "isError", 1);
	put("t-failed", &marie, MCP_TASK_FAILED)->error =
		json_pack("{s:i, s:s}", "code", -32603, "message", "crashed");
	put("t-cancelled", &marie, MCP_TASK_CANCELLED);
	put("t-paul", &paul, MCP_TASK_WORKING);
	snprintf(put("t-report", &marie, MCP_TASK_WORKING)->tool, MCP_TASK_TOOL_MAX, "report");
	snprintf(put("t-orphan", &marie, MCP_TASK_WORKING)->tool, MCP_TASK_TOOL_MAX, "retired");
}

static void teardown(void)
{
	mcp_service_free(svc);
	mcp_service_free(plain_svc);
	for (size_t i = 0; i < nstore; i++)
		mcp_task_clear(&store[i].t);
	json_decref(last_work);
	json_decref(last_responses);
	last_work = last_responses = NULL;
}

/* One modern request over HTTP: params (a JSON object's members, may be empty) and caps; the
 * Mcp-Name header h_name (NULL: none). Returns the whole response (new) and the HTTP status. */
static json_t *rpc(const struct mcp_service *s, const struct fleet_actor *a, const char *method,
		   const char *params, const char *caps, const char *h_name, int *status)
{
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
		method, params, *params ? "," : "", caps);
	struct mcp_request req = {.transport = MCP_TRANSPORT_HTTP,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = "2026-07-28",
				  .h_method = method,
				  .h_name = h_name,
				  .actor = a,
				  .reqid = "tasks"};
	struct mcp_response out;
	mcp_handle(s, &req, &out);
	*status = out.http_status;
	json_t *j = json_loads(out.body, 0, NULL);
	mcp_response_free(&out);
	free(body);
	return j;
}

/* tasks/METHOD on id as a, declared, with the matching Mcp-Name; the result or the error. */
static json_t *task_rpc(const struct fleet_actor *a, const char *method, const char *id,
			const char *more, int *status)
{
	char *params = mem_printf("\"taskId\":\"%s\"%s", id, more);
	json_t *r = rpc(svc, a, method, params, DECLARED, id, status);
	free(params);
	return r;
}

/* tools/call name with caps (no arguments), its Mcp-Name set. */
static json_t *call_tool(const char *name, const char *caps, int *status)
{
	char *params = mem_printf("\"name\":\"%s\"", name);
	json_t *r = rpc(svc, &marie, "tools/call", params, caps, name, status);
	free(params);
	return r;
}

static json_t *result_of(json_t *r)
{
	return json_object_get(r, "result");
}

static int code_of(json_t *r)
{
	return (int)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Whether r is the -32021 naming the extension, answered with HTTP 400. */
static bool needs_tasks(json_t *r, int status)
{
	json_t *need = json_object_get(json_object_get(json_object_get(r, "error"), "data"),
				       "requiredCapabilities");
	return status == 400 && code_of(r) == -32021 &&
	       json_is_object(
		       json_object_get(json_object_get(need, "extensions"), MCP_TASKS_EXTENSION));
}

static bool iso8601_ms(const char *s)
{
	regex_t re;
	ck_assert_int_eq(regcomp(&re,
				 "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\."
				 "[0-9]{3}Z$",
				 REG_EXTENDED | REG_NOSUB),
			 0);
	bool ok = s && regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

START_TEST(discover_advertises_the_extension_only_with_a_provider)
{
	int st;
	json_t *r = rpc(svc, &marie, "server/discover", "", "{}", NULL, &st);
	json_t *ext = json_object_get(json_object_get(result_of(r), "capabilities"), "extensions");
	ck_assert(json_is_object(json_object_get(ext, MCP_TASKS_EXTENSION)));
	ck_assert_uint_eq(json_object_size(json_object_get(ext, MCP_TASKS_EXTENSION)), 0);
	ck_assert_ptr_null(json_object_get(json_object_get(result_of(r), "capabilities"), "tasks"));
	json_decref(r);
	r = rpc(plain_svc, &marie, "server/discover", "", "{}", NULL, &st);
	ck_assert_ptr_null(
		json_object_get(json_object_get(result_of(r), "capabilities"), "extensions"));
	json_decref(r);
	/* Without a provider the methods do not exist, declared or not. */
	r = rpc(plain_svc, &marie, "tasks/get", "\"taskId\":\"t-working\"", DECLARED, "t-working",
		&st);
	ck_assert_int_eq(st, 404);
	ck_assert_int_eq(code_of(r), -32601);
	json_decref(r);
}
END_TEST

START_TEST(the_2025_task_methods_are_gone)
{
	const char *const gone[] = {"tasks/result", "tasks/list"};
	for (size_t i = 0; i < 2; i++) {
		int st;
		json_t *r = rpc(svc, &marie, gone[i], "\"taskId\":\"t-done\"", DECLARED, NULL, &st);
		ck_assert_int_eq(st, 404);
		ck_assert_int_eq(code_of(r), -32601);
		json_decref(r);
	}
	/* And no 2025-era request reaches the task methods. */
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/get\",\"params\":{"
			   "\"taskId\":\"t-done\"}}";
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &marie,
				  .reqid = "tasks",
				  .session_version = "2025-11-25"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	json_t *r = json_loads(out.body, 0, NULL);
	ck_assert_int_eq(code_of(r), -32601);
	json_decref(r);
	mcp_response_free(&out);
	/* Over HTTP too, in-band with 200 as for any method a 2025-era request does not have
	 * (docs/using.md: a 404 there would read as a session gone). */
	const char *const methods[] = {"tasks/get", "tasks/cancel"};
	for (size_t i = 0; i < 2; i++) {
		char *b = mem_printf("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"%s\",\"params\":{"
				     "\"taskId\":\"t-done\"}}",
				     methods[i]);
		struct mcp_request h = {.transport = MCP_TRANSPORT_HTTP,
					.body = b,
					.body_len = strlen(b),
					.h_protocol_version = "2025-11-25",
					.actor = &marie,
					.reqid = "tasks"};
		mcp_handle(svc, &h, &out);
		r = json_loads(out.body, 0, NULL);
		ck_assert_int_eq(out.http_status, 200);
		ck_assert_int_eq(code_of(r), -32601);
		json_decref(r);
		mcp_response_free(&out);
		free(b);
	}
}
END_TEST

START_TEST(task_methods_need_the_extension_declared_on_this_request)
{
	const char *const methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
	const char *const undeclared[] = {"{}", "{\"elicitation\":{}}", "{\"extensions\":{}}",
					  "{\"extensions\":{" TASKS ":true}}"};
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < 4; k++) {
			int st;
			json_t *r = rpc(svc, &marie, methods[i],
					"\"taskId\":\"t-working\",\"inputResponses\":{}",
					undeclared[k], "t-working", &st);
			ck_assert(needs_tasks(r, st));
			json_decref(r);
		}
}
END_TEST

START_TEST(a_tool_answers_a_task_only_to_a_request_that_declared_it)
{
	int st;
	json_t *r = rpc(svc, &marie, "tools/call", "\"name\":\"optional\",\"arguments\":{\"n\":3}",
			DECLARED, "optional", &st);
	json_t *res = result_of(r);
	ck_assert_int_eq(st, 200);
	ck_assert_str_eq(str(res, "resultType"), "task");
	ck_assert_str_eq(str(res, "status"), "working");
	ck_assert_str_eq(str(res, "statusMessage"), "started");
	ck_assert_uint_eq(strlen(str(res, "taskId")), 36);
	ck_assert(iso8601_ms(str(res, "createdAt")));
	ck_assert(iso8601_ms(str(res, "lastUpdatedAt")));
	ck_assert_int_eq(json_integer_value(json_object_get(res, "ttlMs")), 60000);
	ck_assert_int_eq(json_integer_value(json_object_get(res, "pollIntervalMs")), 500);
	const char *const absent[] = {"content",      "result", "error", "inputRequests",
				      "requestState", "task",   "ttl",   "pollInterval"};
	for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
		ck_assert_msg(!json_object_get(res, absent[i]), "%s is there", absent[i]);
	/* The provider created it for this caller, this tool, this work; it is durable. */
	ck_assert_int_eq(creates, 1);
	ck_assert_str_eq(last_tool, "optional");
	ck_assert_int_eq(json_integer_value(json_object_get(last_work, "n")), 3);
	int st2;
	json_t *g = task_rpc(&marie, "tasks/get", str(res, "taskId"), "", &st2);
	ck_assert_str_eq(str(result_of(g), "status"), "working");
	json_decref(g);
	json_decref(r);
	/* Undeclared (or declared by an earlier request only): the ordinary answer. */
	r = call_tool("optional", "{\"elicitation\":{}}", &st);
	ck_assert_str_eq(str(result_of(r), "resultType"), "complete");
	ck_assert_ptr_null(json_object_get(result_of(r), "taskId"));
	ck_assert_int_eq(creates, 1);
	json_decref(r);
	/* A tool that is never a task stays one even for a declaring request. */
	r = call_tool("never", DECLARED, &st);
	ck_assert_str_eq(str(result_of(r), "resultType"), "complete");
	ck_assert_int_eq(creates, 1);
	json_decref(r);
}
END_TEST

START_TEST(a_tool_served_only_as_a_task_is_refused_before_its_handler)
{
	int st;
	json_t *r = call_tool("required", "{}", &st);
	ck_assert(needs_tasks(r, st));
	ck_assert_int_eq(handled, 0);
	json_decref(r);
	r = call_tool("required", DECLARED, &st);
	ck_assert_str_eq(str(result_of(r), "resultType"), "task");
	ck_assert_int_eq(handled, 1);
	json_decref(r);
}
END_TEST

START_TEST(a_task_where_none_may_be_is_an_internal_error)
{
	const char *const tools[] = {"rogue", "eager"};
	for (size_t i = 0; i < 2; i++) {
		int st;
		json_t *r = call_tool(tools[i], DECLARED, &st);
		ck_assert_int_eq(code_of(r), -32603);
		ck_assert_ptr_null(result_of(r));
		json_decref(r);
	}
	ck_assert_int_eq(creates, 0);
}
END_TEST

START_TEST(tasks_get_details_each_status)
{
	int st;
	json_t *r = task_rpc(&marie, "tasks/get", "t-working", "", &st);
	json_t *res = result_of(r);
	ck_assert_int_eq(st, 200);
	ck_assert_str_eq(str(res, "resultType"), "complete");
	ck_assert_str_eq(str(res, "taskId"), "t-working");
	ck_assert_str_eq(str(res, "status"), "working");
	ck_assert_str_eq(str(res, "createdAt"), "2025-11-29T10:30:00.123Z");
	ck_assert_str_eq(str(res, "lastUpdatedAt"), "2025-11-29T10:31:00.000Z");
	ck_assert(json_is_null(json_object_get(res, "ttlMs"))); /* unlimited */
	ck_assert_ptr_null(json_object_get(res, "result"));
	ck_assert_ptr_null(json_object_get(res, "error"));
	ck_assert_ptr_null(json_object_get(res, "inputRequests"));
	ck_assert_ptr_null(json_object_get(res, "cacheScope"));
	json_decref(r);

	r = task_rpc(&marie, "tasks/get", "t-input", "", &st);
	res = result_of(r);
	ck_assert_str_eq(str(res, "status"), "input_required");
	ck_assert(json_equal(json_object_get(res, "inputRequests"), store[1].t.input_requests));
	json_decref(r);

	r = task_rpc(&marie, "tasks/get", "t-done", "", &st);
	res = result_of(r);
	ck_assert_str_eq(str(res, "status"), "completed");
	/* The provider's CallToolResult (isError too), complete as a direct answer is: a
	 * 2026-07-28 client refuses a result without its resultType. */
	json_t *want = json_deep_copy(store[2].t.result);
	json_object_set_new(want, "resultType", json_string("complete"));
	ck_assert(json_equal(json_object_get(res, "result"), want));
	json_decref(want);
	ck_assert_ptr_null(json_object_get(res, "error"));
	json_decref(r);

	r = task_rpc(&marie, "tasks/get", "t-failed", "", &st);
	res = result_of(r);
	ck_assert_str_eq(str(res, "status"), "failed");
	ck_assert(json_equal(json_object_get(res, "error"), store[3].t.error));
	ck_assert_ptr_null(json_object_get(res, "result"));
	json_decref(r);

	r = task_rpc(&marie, "tasks/get", "t-cancelled", "", &st);
	res = result_of(r);
	ck_assert_str_eq(str(res, "status"), "cancelled");
	ck_assert_ptr_null(json_object_get(res, "result"));
	json_decref(r);
}
END_TEST

START_TEST(another_callers_task_is_answered_as_an_unknown_one)
{
	char longid[MCP_TASK_ID_MAX + 2];
	memset(longid, 'a', sizeof longid - 1);
	longid[sizeof longid - 1] = '\0';
	const char *const methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
	for (size_t i = 0; i < 3; i++) {
		const char *more = i == 1 ? ",\"inputResponses\":{}" : "";
		int st_unknown, st;
		json_t *unknown = task_rpc(&marie, methods[i], "no-such-task", more, &st_unknown);
		ck_assert_int_eq(code_of(unknown), -32602);
		json_t *e = json_object_get(unknown, "error");
		/* paul's task; marie's own task through another client application; a long id */
		json_t *r = task_rpc(&marie, methods[i], "t-paul", more, &st);
		ck_assert(json_equal(json_object_get(r, "error"), e));
		ck_assert_int_eq(st, st_unknown);
		json_decref(r);
		r = task_rpc(&marie_elsewhere, methods[i], "t-working", more, &st);
		ck_assert(json_equal(json_object_get(r, "error"), e));
		json_decref(r);
		r = task_rpc(&marie, methods[i], longid, more, &st);
		ck_assert(json_equal(json_object_get(r, "error"), e));
		json_decref(r);
		json_decref(unknown);
	}
	ck_assert_int_eq(store[5].t.status, MCP_TASK_WORKING); /* paul's, untouched */
}
END_TEST

/* A task asks for the scope of the tool whose call created it: a token without it is answered
 * exactly as for an unknown id (same error, same status), nothing is done, and each refusal is
 * audited as a refused read; a task of a tool no longer served is nobody's. */
START_TEST(a_task_out_of_the_tokens_scope_is_answered_as_an_unknown_one)
{
	const char *const methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
	for (size_t i = 0; i < 3; i++) {
		const char *more = i == 1 ? ",\"inputResponses\":{}" : "";
		int st_unknown, st;
		audited[0] = '\0';
		json_t *unknown = task_rpc(&marie, methods[i], "no-such-task", more, &st_unknown);
		json_t *e = json_object_get(unknown, "error");
		ck_assert_int_eq(code_of(unknown), -32602);
		json_t *r = task_rpc(&marie, methods[i], "t-report", more, &st);
		ck_assert_msg(json_equal(json_object_get(r, "error"), e), "%s", methods[i]);
		ck_assert_int_eq(st, st_unknown);
		json_decref(r);
		r = task_rpc(&marie_full, methods[i], "t-orphan", more, &st);
		ck_assert(json_equal(json_object_get(r, "error"), e));
		json_decref(r);
		char want[512];
		snprintf(want, sizeof want,
			 "%s not_found - no-such-task\n%s denied fleet:report t-report\n"
			 "%s denied - t-orphan\n",
			 methods[i], methods[i], methods[i]);
		ck_assert_str_eq(audited, want);
		json_decref(unknown);
	}
	ck_assert_int_eq(store[6].t.status, MCP_TASK_WORKING); /* not cancelled */
	ck_assert_ptr_null(last_responses);                    /* not handed over */
	/* With the scope, the same task is there. */
	int st;
	json_t *r = task_rpc(&marie_full, "tasks/get", "t-report", "", &st);
	ck_assert_str_eq(str(result_of(r), "status"), "working");
	json_decref(r);
	r = task_rpc(&marie_full, "tasks/cancel", "t-report", "", &st);
	ck_assert_ptr_nonnull(result_of(r));
	json_decref(r);
	ck_assert_int_eq(store[6].t.status, MCP_TASK_CANCELLED);
}
END_TEST

START_TEST(mcp_name_carries_the_task_id)
{
	int st;
	json_t *r = rpc(svc, &marie, "tasks/get", "\"taskId\":\"t-done\"", DECLARED, NULL, &st);
	ck_assert_int_eq(st, 400);
	ck_assert_int_eq(code_of(r), -32020);
	json_decref(r);
	r = rpc(svc, &marie, "tasks/cancel", "\"taskId\":\"t-done\"", DECLARED, "t-working", &st);
	ck_assert_int_eq(st, 400);
	ck_assert_int_eq(code_of(r), -32020);
	json_decref(r);
	r = rpc(svc, &marie, "tasks/get", "\"taskId\":\"t-done\"", DECLARED, " t-done ", &st);
	ck_assert_int_eq(st, 200);
	json_decref(r);
}
END_TEST

START_TEST(update_and_cancel_acknowledge_with_nothing_else)
{
	int st;
	json_t *r = task_rpc(&marie, "tasks/update", "t-input",
			     ",\"inputResponses\":{\"confirm-1\":{\"action\":\"accept\"}}", &st);
	ck_assert_int_eq(st, 200);
	json_t *res = result_of(r);
	json_object_del(res, "_meta");
	ck_assert_uint_eq(json_object_size(res), 1);
	ck_assert_str_eq(str(res, "resultType"), "complete");
	ck_assert_ptr_nonnull(json_object_get(last_responses, "confirm-1"));
	json_decref(r);
	const char *const bad[] = {"", ",\"inputResponses\":[]", ",\"inputResponses\":{\"k\":1}"};
	for (size_t i = 0; i < 3; i++) {
		r = task_rpc(&marie, "tasks/update", "t-input", bad[i], &st);
		ck_assert_int_eq(code_of(r), -32602);
		json_decref(r);
	}
	r = rpc(svc, &marie, "tasks/get", "\"taskId\":7", DECLARED, NULL, &st);
	ck_assert_int_eq(code_of(r), -32602);
	json_decref(r);
	r = task_rpc(&marie, "tasks/cancel", "t-working", "", &st);
	res = result_of(r);
	json_object_del(res, "_meta");
	ck_assert_uint_eq(json_object_size(res), 1);
	ck_assert_int_eq(store[0].t.status, MCP_TASK_CANCELLED);
	json_decref(r);
	/* A terminal task: the same acknowledgement, the task as it was. */
	r = task_rpc(&marie, "tasks/cancel", "t-done", "", &st);
	ck_assert_str_eq(str(result_of(r), "resultType"), "complete");
	ck_assert_int_eq(store[2].t.status, MCP_TASK_COMPLETED);
	json_decref(r);
}
END_TEST

/* ---- task ids in listen filters ------------------------------------------------------------- */

static json_t *acked;

static enum mcp_listen_status fake_open(void *ctx, const struct fleet_actor *actor,
					const json_t *id, const json_t *ack,
					const char *const *uris, size_t n)
{
	(void)ctx, (void)actor, (void)id, (void)uris, (void)n;
	json_decref(acked);
	acked = json_deep_copy(json_object_get(json_object_get(ack, "params"), "notifications"));
	return MCP_LISTEN_OK;
}

static const struct mcp_listen fake_listen = {fake_open, NULL};

/* subscriptions/listen over stdio (a transport holding streams) with filter and caps. */
static json_t *listen_with(const struct mcp_service *s, const char *filter, const char *caps)
{
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":\"l-1\",\"method\":\"subscriptions/listen\","
		"\"params\":{\"notifications\":%s,\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
		filter, caps);
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &marie,
				  .reqid = "tasks",
				  .listen = &fake_listen};
	struct mcp_response out;
	json_decref(acked);
	acked = NULL;
	mcp_handle(s, &req, &out);
	json_t *r = out.body ? json_loads(out.body, 0, NULL) : NULL;
	mcp_response_free(&out);
	free(body);
	return r;
}

START_TEST(listen_follows_only_the_callers_own_tasks)
{
	json_t *r = listen_with(svc,
				"{\"taskIds\":[\"t-working\",\"t-paul\",\"nope\",\"t-working\",7,"
				"\"t-report\",\"t-done\"]}",
				DECLARED);
	ck_assert_ptr_null(r); /* the stream is the answer */
	json_t *ids = json_object_get(acked, "taskIds");
	ck_assert_uint_eq(json_array_size(ids), 2);
	ck_assert_str_eq(json_string_value(json_array_get(ids, 0)), "t-working");
	ck_assert_str_eq(json_string_value(json_array_get(ids, 1)), "t-done");
	/* t-report is out of the token's scope: left out, audited as the unknown ones are. */
	ck_assert_str_eq(audited, "subscriptions/listen not_found - t-paul\n"
				  "subscriptions/listen not_found - nope\n"
				  "subscriptions/listen denied fleet:report t-report\n");
	/* Nothing the caller may hear of: no taskIds in the acknowledgement. */
	r = listen_with(svc, "{\"taskIds\":[\"t-paul\"]}", DECLARED);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(acked);
	ck_assert_ptr_null(json_object_get(acked, "taskIds"));
	/* Not declared on this request: -32021, nothing opened. */
	r = listen_with(svc, "{\"taskIds\":[\"t-working\"]}", "{}");
	ck_assert_int_eq(code_of(r), -32021);
	ck_assert_ptr_null(acked);
	json_decref(r);
	r = listen_with(svc, "{\"taskIds\":\"t-working\"}", DECLARED);
	ck_assert_int_eq(code_of(r), -32602);
	json_decref(r);
	/* A server without tasks drops the filter, as any it cannot deliver. */
	r = listen_with(plain_svc, "{\"taskIds\":[\"t-working\"]}", "{}");
	ck_assert_ptr_null(r);
	ck_assert_ptr_null(json_object_get(acked, "taskIds"));
	json_decref(acked);
	acked = NULL;
}
END_TEST

START_TEST(task_support_without_a_provider_is_refused_at_load)
{
	struct mcp_service_config cfg = {.resources_dir = "resources", .prompts_dir = "prompts"};
	struct mcp_server s = {.name = "t", .version = "1", .tools = rows, .ntools = 1};
	ck_assert_ptr_null(mcp_service_new(&s, &cfg));
	struct mcp_server s2 = {.name = "t", .version = "1", .extensions = "{" TASKS ":{}}"};
	ck_assert_ptr_null(mcp_service_new(&s2, &cfg));
}
END_TEST

CHECK_SUITE(tasks)
{
	Suite *s = suite_create("tasks");
	TCase *tc = tcase_create("tasks");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, discover_advertises_the_extension_only_with_a_provider);
	tcase_add_test(tc, the_2025_task_methods_are_gone);
	tcase_add_test(tc, task_methods_need_the_extension_declared_on_this_request);
	tcase_add_test(tc, a_tool_answers_a_task_only_to_a_request_that_declared_it);
	tcase_add_test(tc, a_tool_served_only_as_a_task_is_refused_before_its_handler);
	tcase_add_test(tc, a_task_where_none_may_be_is_an_internal_error);
	tcase_add_test(tc, tasks_get_details_each_status);
	tcase_add_test(tc, another_callers_task_is_answered_as_an_unknown_one);
	tcase_add_test(tc, a_task_out_of_the_tokens_scope_is_answered_as_an_unknown_one);
	tcase_add_test(tc, mcp_name_carries_the_task_id);
	tcase_add_test(tc, update_and_cancel_acknowledge_with_nothing_else);
	tcase_add_test(tc, listen_follows_only_the_callers_own_tasks);
	tcase_add_test(tc, task_support_without_a_provider_is_refused_at_load);
	suite_add_tcase(s, tc);
	return s;
}
