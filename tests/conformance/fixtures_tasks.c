/* The fixture tools of the official suite's tasks scenarios (io.modelcontextprotocol/tasks), as
 * their descriptions name them: greet (never a task), slow_compute, failing_job (only as a task),
 * protocol_error_job, confirm_delete, multi_input (tasks that ask for input) and
 * test_tool_with_task (input gathered over MRTR first, then a task). A call whose request
 * declared the extension gets a task (taskstore.h runs its job); any other gets the ordinary
 * answer, computed on the spot, or -32021 from the core for a tool that is only ever a task. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fixtures.h"
#include "server/protocol/mrtr.h"
#include "server/protocol/tasks.h"
#include "server/protocol/tools.h"
#include "taskstore.h"

static const char conf_greet_in[] =
	"{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":200}},"
	"\"required\":[\"name\"]}";
static const char conf_slow_in[] =
	"{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"integer\",\"minimum\":0,"
	"\"maximum\":60},\"label\":{\"type\":\"string\",\"maxLength\":200}},"
	"\"required\":[\"seconds\"]}";
static const char conf_file_in[] =
	"{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":\"string\",\"maxLength\":"
	"200}},\"required\":[\"filename\"]}";
static const char conf_none_in[] = "{\"type\":\"object\"}";

static const char conf_confirm_schema[] =
	"{\"type\":\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\"}},"
	"\"required\":[\"confirm\"]}";
static const char conf_name_schema[] =
	"{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
	"\"required\":[\"name\"]}";

/* A text CallToolResult (not an error) of printf's fmt and what follows. */
__attribute__((format(printf, 1, 2))) static json_t *conf_said(const char *fmt, ...)
{
	char text[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	return tools_result(text, NULL, false);
}

/* The string field of an accepted elicitation's content among answers, or NULL. */
static const char *conf_answer(json_t *answers, const char *key, const char *field)
{
	json_t *r = json_object_get(answers, key);
	const char *action = json_string_value(json_object_get(r, "action"));
	if (!action || strcmp(action, "accept") != 0)
		return NULL;
	return json_string_value(json_object_get(json_object_get(r, "content"), field));
}

/* Whether the elicitation key among answers was accepted with content.confirm true. */
static bool conf_confirmed(json_t *answers, const char *key)
{
	json_t *r = json_object_get(answers, key);
	const char *action = json_string_value(json_object_get(r, "action"));
	return action && strcmp(action, "accept") == 0 &&
	       json_is_true(json_object_get(json_object_get(r, "content"), "confirm"));
}

/* ---- how each job ends (taskstore.h, also the ordinary answers) ---------------------------- */

static json_t *conf_slow_result(json_t *work)
{
	const char *label = json_string_value(json_object_get(work, "label"));
	return conf_said("Computed %s in %lld s.", label ? label : "(no label)",
			 (long long)json_integer_value(json_object_get(work, "seconds")));
}

static json_t *conf_confirm_result(json_t *work, json_t *answers)
{
	return conf_said("%s %s.", conf_confirmed(answers, "confirm_delete") ? "Deleted" : "Kept",
			 json_string_value(json_object_get(work, "filename")));
}

static json_t *conf_multi_result(json_t *answers)
{
	const char *name = conf_answer(answers, "multi_name", "name");
	return conf_said("Both inputs received: %s, %s.", name ? name : "no name",
			 conf_confirmed(answers, "multi_confirm") ? "confirmed" : "not confirmed");
}

static void conf_finish(json_t *work, json_t *answers, json_t **result, json_t **error)
{
	const char *job = json_string_value(json_object_get(work, "job"));
	job = job ? job : "";
	if (strcmp(job, "slow") == 0)
		*result = conf_slow_result(work);
	else if (strcmp(job, "failing") == 0)
		*result = tools_result("failing_job failed, as it always does.", NULL, true);
	else if (strcmp(job, "confirm") == 0)
		*result = conf_confirm_result(work, answers);
	else if (strcmp(job, "multi") == 0)
		*result = conf_multi_result(answers);
	else if (strcmp(job, "greeting") == 0)
		*result = conf_said("Hello, %s!", json_string_value(json_object_get(work, "name")));
	else /* protocol_error, and anything unknown */
		*error = json_pack("{s:i, s:s}", "code", MCP_INTERNAL_ERROR, "message",
				   "Internal error: the job crashed");
}

taskstore_finish_fn conf_task_finish(void)
{
	return conf_finish;
}

/* ---- the tools ----------------------------------------------------------------------------- */

static int conf_greet(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)err;
	*result = conf_said("Hello, %s!", json_string_value(json_object_get(args, "name")));
	return 0;
}

static int conf_slow_compute(struct mcp_ctx *ctx, json_t *args, json_t **result,
			     struct mcp_error *err)
{
	json_t *seconds = json_object_get(args, "seconds"), *label = json_object_get(args, "label");
	json_t *work = json_pack("{s:s, s:O, s:I}", "job", "slow", "seconds", seconds, "runMs",
				 json_integer_value(seconds) * 1000);
	if (json_is_string(label))
		json_object_set(work, "label", label);
	int rc = 0;
	if (mcp_task_offered(ctx)) {
		rc = mcp_task_start(ctx, work, result, err);
	} else {
		struct timespec ts = {.tv_sec = (time_t)json_integer_value(seconds)};
		nanosleep(&ts, NULL); /* the same work, the caller waiting for it */
		*result = conf_slow_result(work);
	}
	json_decref(work);
	return rc;
}

static int conf_failing_job(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	(void)args;
	json_t *work = json_pack("{s:s, s:i}", "job", "failing", "runMs", 1000);
	int rc = mcp_task_start(ctx, work, result, err); /* the core refused the others */
	json_decref(work);
	return rc;
}

static int conf_protocol_error_job(struct mcp_ctx *ctx, json_t *args, json_t **result,
				   struct mcp_error *err)
{
	(void)args;
	if (!mcp_task_offered(ctx))
		return mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error: the job crashed", NULL);
	json_t *work = json_pack("{s:s, s:i}", "job", "protocol_error", "runMs", 200);
	int rc = mcp_task_start(ctx, work, result, err);
	json_decref(work);
	return rc;
}

/* A job (work, stolen) that asks (an object of input requests, stolen) once running, then
 * finishes. As a task:
 * the questions come through tasks/get; otherwise through MRTR on tools/call, and finish() gives
 * the answer once every one is answered. */
static int conf_asking_job(struct mcp_ctx *ctx, json_t *work, json_t *ask, json_t **result,
			   struct mcp_error *err)
{
	int rc = 0;
	if (!mrtr_can_ask(ctx, "elicitation/create")) {
		rc = mrtr_missing(err, "elicitation");
	} else if (mcp_task_offered(ctx)) {
		json_object_set(work, "ask", ask);
		json_object_set_new(work, "askAfterMs", json_integer(100));
		json_object_set_new(work, "runMs", json_integer(100));
		rc = mcp_task_start(ctx, work, result, err);
	} else {
		json_t *want = json_object(), *answers = json_object(), *q;
		const char *key;
		json_object_foreach (ask, key, q) {
			json_t *a = mrtr_response(ctx, key);
			json_object_set(a ? answers : want, key, a ? a : q);
		}
		if (json_object_size(want)) {
			rc = mrtr_ask(ctx, want, NULL, MRTR_STATE_TTL_S, result, err);
		} else {
			json_t *error = NULL;
			conf_finish(work, answers, result, &error);
			json_decref(want);
		}
		json_decref(answers);
	}
	json_decref(ask);
	json_decref(work);
	return rc;
}

static int conf_confirm_delete(struct mcp_ctx *ctx, json_t *args, json_t **result,
			       struct mcp_error *err)
{
	const char *file = json_string_value(json_object_get(args, "filename"));
	char question[300];
	snprintf(question, sizeof question, "Delete %s?", file);
	return conf_asking_job(
		ctx, json_pack("{s:s, s:s}", "job", "confirm", "filename", file),
		json_pack("{s:o}", "confirm_delete", mrtr_elicit(question, conf_confirm_schema)),
		result, err);
}

static int conf_multi_input(struct mcp_ctx *ctx, json_t *args, json_t **result,
			    struct mcp_error *err)
{
	(void)args;
	return conf_asking_job(
		ctx, json_pack("{s:s}", "job", "multi"),
		json_pack("{s:o, s:o}", "multi_name", mrtr_elicit("Your name?", conf_name_schema),
			  "multi_confirm", mrtr_elicit("Go ahead?", conf_confirm_schema)),
		result, err);
}

/* Input first, over MRTR on tools/call (settled before any task exists), then a task whose
 * result carries the name gathered. */
static int conf_tool_with_task(struct mcp_ctx *ctx, json_t *args, json_t **result,
			       struct mcp_error *err)
{
	(void)args;
	const char *name = NULL;
	json_t *state = mrtr_state(ctx);
	const char *step = json_string_value(json_object_get(state, "step"));
	if (step && strcmp(step, "user_name") == 0)
		name = json_string_value(json_object_get(
			json_object_get(mrtr_response(ctx, "user_name"), "content"), "name"));
	if (!name) {
		json_t *st = json_pack("{s:s}", "step", "user_name");
		int rc = mrtr_ask(ctx,
				  json_pack("{s:o}", "user_name",
					    mrtr_elicit("What is your name?", conf_name_schema)),
				  st, MRTR_STATE_TTL_S, result, err);
		json_decref(st);
		return rc;
	}
	json_t *work = json_pack("{s:s, s:s, s:i}", "job", "greeting", "name", name, "runMs", 200);
	int rc = mcp_task_start(ctx, work, result, err);
	json_decref(work);
	return rc;
}

#define CONF_TASK_TOOL(n, t, d, in, f, ro, support)                                                \
	{                                                                                          \
		.name = n, .title = t, .description = d, .input_schema = in, .read_only = ro,      \
		.idempotent = ro, .fn = f, .tasks = support                                        \
	}

static const struct tool_desc conf_task_rows[] = {
	CONF_TASK_TOOL("greet", "Greet", "Says hello to name at once; never a task.", conf_greet_in,
		       conf_greet, true, MCP_TASKS_NEVER),
	CONF_TASK_TOOL("slow_compute", "Slow compute",
		       "Works for the given seconds, then says what it computed; a task when the "
		       "client accepts tasks.",
		       conf_slow_in, conf_slow_compute, true, MCP_TASKS_OPTIONAL),
	CONF_TASK_TOOL("failing_job", "Failing job",
		       "Only ever a task: after about a second it ends with a tool error.",
		       conf_none_in, conf_failing_job, true, MCP_TASKS_REQUIRED),
	CONF_TASK_TOOL("protocol_error_job", "Protocol error job",
		       "Crashes: a failed task, or a JSON-RPC error without tasks.", conf_none_in,
		       conf_protocol_error_job, true, MCP_TASKS_OPTIONAL),
	CONF_TASK_TOOL("confirm_delete", "Confirm delete",
		       "Asks the user to confirm deleting filename, then says what it did.",
		       conf_file_in, conf_confirm_delete, false, MCP_TASKS_OPTIONAL),
	CONF_TASK_TOOL("multi_input", "Multiple inputs",
		       "Asks for a name and a confirmation at once, then says what it got.",
		       conf_none_in, conf_multi_input, true, MCP_TASKS_OPTIONAL),
	CONF_TASK_TOOL("test_tool_with_task", "Input, then a task",
		       "Asks for the user's name (MRTR), then greets them from a task.",
		       conf_none_in, conf_tool_with_task, true, MCP_TASKS_REQUIRED),
};

const struct tool_desc *conf_task_tools(size_t *n)
{
	*n = sizeof conf_task_rows / sizeof conf_task_rows[0];
	return conf_task_rows;
}
