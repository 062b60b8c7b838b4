/* MRTR and request-scoped notifications through mcp_handle(): what a client relies on when a
 * request needs its input (input_required, sealed requestState, validated retries, -32021) or
 * asked for progress and log messages; and the SSE framing HTTP sends them in. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "fixture.h"
#include "server/protocol/mrtr.h"
#include "server/protocol/notify.h"
#include "server/protocol/reqstate.h"
#include "server/transport/sse.h"
#include "server/protocol/tools.h"
#include "tests/check_main.h"

static struct fleet_actor marie = {"marie", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				   ""};
static struct fleet_actor paul = {"paul", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				  ""};

/* A tool that asks for a confirmation (elicitation) with a requestState, then completes. */
static int ask_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args;
	json_t *r = mrtr_response(ctx, "confirm");
	if (r && mrtr_state(ctx)) {
		*result = tools_result("confirmed", NULL, false);
		return 0;
	}
	json_t *state = json_pack("{s:s}", "step", "confirm");
	int rc = mrtr_ask(ctx,
			  json_pack("{s:o}", "confirm",
				    mrtr_elicit("Confirm?", "{\"type\":\"object\",\"properties\":{"
							    "\"ok\":{\"type\":\"boolean\"}}}")),
			  state, result, err);
	json_decref(state);
	return rc;
}

/* A tool that reports progress and logs at info and at error. */
static int chatty_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)args, (void)err;
	json_t *d = json_string("working");
	notify_progress(ctx, 0, 2, NULL);
	notify_progress(ctx, 0, 2, NULL); /* not increasing: not sent */
	notify_log(ctx, NOTIFY_INFO, "unit", d);
	notify_log(ctx, NOTIFY_ERROR, "unit", d);
	notify_progress(ctx, 2, 2, "done");
	json_decref(d);
	*result = tools_result("done", NULL, false);
	return 0;
}

static const char any_args[] = "{\"type\":\"object\"}";
static const struct tool_desc extra[] = {
	{.name = "ask",
	 .title = "Ask",
	 .description = "asks",
	 .input_schema = any_args,
	 .fn = ask_tool},
	{.name = "chatty",
	 .title = "Chatty",
	 .description = "talks",
	 .input_schema = any_args,
	 .fn = chatty_tool},
};

/* A method that may not answer input_required, answering it anyway (a bug the core catches). */
static int bad_method(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)params, (void)err;
	*result = json_pack("{s:s, s:{}}", "resultType", "input_required", "inputRequests");
	return 0;
}

static const struct mcp_method extra_methods[] = {
	{"test/bad", MCP_ERA_MODERN, NULL, bad_method, false},
};

static struct mcp_server server;
static struct mcp_service *svc;

static void setup(void)
{
	ck_assert_int_eq(reqstate_init("a unit-test secret long enough for the hmac key"), 0);
	svc = core_server(&server, extra, 2, extra_methods, 1);
}

static void teardown(void)
{
	mcp_service_free(svc);
}

struct sink {
	json_t *msgs;
};

static void sink_emit(void *c, const json_t *msg)
{
	json_array_append_new(((struct sink *)c)->msgs, json_deep_copy(msg));
}

/* Calls tool name with extra params (a JSON object text without braces, may be empty) and caps,
 * as actor a; returns the response, the HTTP status and what was emitted (when sink). */
static json_t *call(const struct fleet_actor *a, const char *name, const char *extra_params,
		    const char *caps, const char *meta_extra, int *status, struct sink *sink)
{
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/"
		"call\",\"params\":{\"name\":\"%s\","
		"\"arguments\":{}%s%s,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
		"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":%s%s}}}",
		name, *extra_params ? "," : "", extra_params, caps, meta_extra);
	struct mcp_request req = {.transport = MCP_TRANSPORT_HTTP,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = "2026-07-28",
				  .h_method = "tools/call",
				  .h_name = name,
				  .actor = a,
				  .reqid = "unit",
				  .emit = sink ? sink_emit : NULL,
				  .emit_ctx = sink};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	*status = out.http_status;
	json_error_t e;
	json_t *j = out.body ? json_loads(out.body, 0, &e) : NULL;
	mcp_response_free(&out);
	free(body);
	return j;
}

static int err_code(json_t *r)
{
	return (int)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
}

#define ELICIT "{\"elicitation\":{}}"

START_TEST(input_required_then_complete_with_the_sealed_state)
{
	int st;
	json_t *r = call(&marie, "ask", "", ELICIT, "", &st, NULL);
	ck_assert_int_eq(st, 200);
	json_t *res = json_object_get(r, "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "resultType")), "input_required");
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(res, "inputRequests"), "confirm"),
				 "method")),
			 "elicitation/create");
	ck_assert_ptr_null(json_object_get(res, "ttlMs"));
	ck_assert_ptr_null(json_object_get(res, "cacheScope"));
	const char *state = json_string_value(json_object_get(res, "requestState"));
	ck_assert_ptr_nonnull(state);
	char *retry = mem_printf("\"inputResponses\":{\"confirm\":{\"action\":\"accept\","
				 "\"content\":{\"ok\":true}}},\"requestState\":\"%s\"",
				 state);
	json_t *r2 = call(&marie, "ask", retry, ELICIT, "", &st, NULL);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(r2, "result"), "resultType")),
		"complete");
	json_decref(r2);
	/* The same state presented for another request (another tool) is refused. */
	r2 = call(&marie, "chatty", retry, ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r2), -32602);
	json_decref(r2);
	/* The same state presented by another caller is refused. */
	r2 = call(&paul, "ask", retry, ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r2), -32602);
	json_decref(r2);
	free(retry);
	/* A tampered state is refused, not treated as absent. */
	retry = mem_printf("\"inputResponses\":{\"confirm\":{\"action\":\"accept\"}},"
			   "\"requestState\":\"%s-TAMPERED\"",
			   state);
	r2 = call(&marie, "ask", retry, ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r2), -32602);
	ck_assert_int_eq(st, 200);
	json_decref(r2);
	free(retry);
	json_decref(r);
}
END_TEST

START_TEST(malformed_input_responses_are_invalid_params)
{
	int st;
	json_t *r = call(&marie, "ask", "\"inputResponses\":null", ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r), -32602);
	json_decref(r);
	r = call(&marie, "ask", "\"inputResponses\":{\"confirm\":12345}", ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r), -32602);
	json_decref(r);
	r = call(&marie, "ask", "\"requestState\":42", ELICIT, "", &st, NULL);
	ck_assert_int_eq(err_code(r), -32602);
	json_decref(r);
}
END_TEST

START_TEST(undeclared_capability_is_32021_with_an_object)
{
	int st;
	json_t *r = call(&marie, "ask", "", "{\"sampling\":{}}", "", &st, NULL);
	ck_assert_int_eq(st, 400);
	ck_assert_int_eq(err_code(r), -32021);
	json_t *need = json_object_get(json_object_get(json_object_get(r, "error"), "data"),
				       "requiredCapabilities");
	ck_assert(json_is_object(json_object_get(need, "elicitation")));
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 7);
	json_decref(r);
}
END_TEST

START_TEST(legacy_clients_are_not_asked)
{
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
			   "\"name\":\"ask\",\"arguments\":{}}}";
	struct mcp_request req = {.transport = MCP_TRANSPORT_HTTP,
				  .body = body,
				  .body_len = strlen(body),
				  .h_protocol_version = "2025-11-25",
				  .actor = &marie,
				  .reqid = "unit"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	json_error_t e;
	json_t *r = json_loads(out.body, 0, &e);
	json_t *res = json_object_get(r, "result");
	ck_assert(json_is_true(json_object_get(res, "isError")));
	ck_assert_ptr_null(json_object_get(res, "resultType"));
	json_decref(r);
	mcp_response_free(&out);
}
END_TEST

START_TEST(progress_only_with_a_token_and_logs_only_at_the_level)
{
	int st;
	struct sink s = {json_array()};
	json_t *r = call(&marie, "chatty", "", "{}", "", &st, &s);
	ck_assert_uint_eq(json_array_size(s.msgs), 0); /* neither token nor logLevel */
	json_decref(r);
	r = call(&marie, "chatty", "", "{}",
		 ",\"progressToken\":\"p1\",\"io.modelcontextprotocol/logLevel\":\"warning\"", &st,
		 &s);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(r, "result"), "resultType")),
		"complete");
	/* progress 0, the error log (info is below warning), progress 2 */
	ck_assert_uint_eq(json_array_size(s.msgs), 3);
	json_t *p0 = json_array_get(s.msgs, 0), *lg = json_array_get(s.msgs, 1),
	       *p2 = json_array_get(s.msgs, 2);
	ck_assert_str_eq(json_string_value(json_object_get(p0, "method")),
			 "notifications/progress");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(p0, "params"), "progressToken")),
		"p1");
	ck_assert_str_eq(json_string_value(json_object_get(lg, "method")), "notifications/message");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(lg, "params"), "level")),
			 "error");
	ck_assert_int_eq(
		json_integer_value(json_object_get(json_object_get(p2, "params"), "progress")), 2);
	ck_assert_ptr_null(json_object_get(p2, "id"));
	json_decref(r);
	json_decref(s.msgs);
}
END_TEST

START_TEST(input_required_from_another_method_is_an_internal_error)
{
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"test/bad\",\"params\":{"
			   "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			   "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &marie,
				  .reqid = "unit"};
	struct mcp_response out;
	mcp_handle(svc, &req, &out);
	json_error_t e;
	json_t *r = json_loads(out.body, 0, &e);
	ck_assert_int_eq(err_code(r), -32603);
	ck_assert_ptr_null(json_object_get(r, "result"));
	json_decref(r);
	mcp_response_free(&out);
}
END_TEST

START_TEST(sse_framing_is_one_event_per_message_response_last)
{
	struct sse_buf b = {0};
	json_t *n = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", "notifications/progress");
	sse_emit(&b, n);
	ck_assert_uint_eq(b.events, 1);
	char *body = sse_finish(&b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
	ck_assert_str_eq(body, "event: message\ndata: "
			       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
			       "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"
			       "\n\n");
	free(body);
	sse_free(&b);
	json_decref(n);
}
END_TEST

CHECK_SUITE(mrtr)
{
	Suite *s = suite_create("mrtr");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, input_required_then_complete_with_the_sealed_state);
	tcase_add_test(tc, malformed_input_responses_are_invalid_params);
	tcase_add_test(tc, undeclared_capability_is_32021_with_an_object);
	tcase_add_test(tc, legacy_clients_are_not_asked);
	tcase_add_test(tc, progress_only_with_a_token_and_logs_only_at_the_level);
	tcase_add_test(tc, input_required_from_another_method_is_an_internal_error);
	tcase_add_test(tc, sse_framing_is_one_event_per_message_response_last);
	suite_add_tcase(s, tc);
	return s;
}
